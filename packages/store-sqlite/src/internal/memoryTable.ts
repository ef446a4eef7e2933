/**
 * The memory table: its DDL (as migrations) and its select list. The row itself (columns, how a
 * record is written and read) is `MemoryRow` in core, shared with the PostgreSQL backend.
 *
 * Timestamps are INTEGER epoch milliseconds, tags a JSON array in TEXT. The search index is a
 * contentless FTS5 table keyed by the row's `seq`, holding the shared tokenizer's tokens joined by
 * spaces. It uses FTS5's `ascii` tokenizer: our tokens hold only letters and digits, so splitting
 * them on ASCII separators gives back exactly the tokens we indexed, and FTS5 never applies a
 * folding or splitting rule of its own.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryRow } from "@engram/store-sql"
import * as Effect from "effect/Effect"

/** @internal */
export const TABLE = "engram_memories"
/** @internal */
export const FTS_TABLE = "engram_memories_fts"
/** @internal */
export const META_TABLE = "engram_memory_meta"
/** @internal */
export const MIGRATIONS_TABLE = "engram_memory_migrations"
/** The index a ranked search reads its matches' rows from (migration 0012, decision 0203). */
export const SEARCH_ROWS_INDEX = `${TABLE}_search`
/**
 * Its columns: `seq` first (the matches are looked up by it), then every column the ranked
 * statement reads of a match — BM25's length, the position, the place in the write order, and
 * each filter's (`sqlFilters.ts`).
 */
export const SEARCH_ROWS_COLUMNS = [
  "seq",
  "scope",
  "search_length",
  "thread",
  "turn",
  "write_turn",
  "review_state",
  "invalidated_at",
  "expires_at",
  "valid_from",
  "valid_to",
  "kind",
  "delivery_policy",
  "created_at",
  "supersedes",
  "superseded_by"
] as const
/** The index as migration 0012 made it, before the place in the write order joined it (0013). */
const SEARCH_ROWS_COLUMNS_0012 = SEARCH_ROWS_COLUMNS.filter((column) => column !== "write_turn")
/**
 * Each scope's next place in its write order (decision 0233): one row per scope, moved on by a
 * write of episodes without a position in the write's own transaction.
 *
 * @internal
 */
export const WRITE_ORDER_TABLE = "engram_memory_write_order"
/** @internal The partial index a neighbour read seeks a scope's write order through. */
export const WRITE_ORDER_INDEX = `${TABLE}_write_order`
/** The store's record count and search-length sum in one row (`searchTotals.ts`). */
export const TOTALS_TABLE = "engram_memory_totals"

/** The search index's DDL (also used to rebuild it). */
export const FTS_DDL = `CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(tokens, content='', tokenize='ascii')`

/**
 * A row read as an array (`.values`) keyed as `MemoryRow.fromRow` reads it, its record columns
 * starting at `start`: cheaper than the driver's keyed rows (decision 0113).
 */
export const rowOf = (values: ReadonlyArray<unknown>, start: number): Record<string, unknown> => {
  const row: Record<string, unknown> = {}
  for (let i = 0; i < MemoryRow.COLUMNS.length; i++) row[MemoryRow.COLUMNS[i]!] = values[start + i]
  return row
}

/** `m.id, m.content, …` for selects. */
export const selectColumns = (alias: string) => MemoryRow.COLUMNS.map((column) => `${alias}.${column}`).join(", ")

/**
 * Migrations of the memory store, in their own migrations table so other stores sharing the
 * database migrate independently. Each statement is its own query (SQLite prepares one at a time).
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_memories": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // No CHECK constraints: values are validated by the record schema on write and decoded on
    // every read, where a bad row is skipped rather than failing the query.
    yield* sql.unsafe(`CREATE TABLE ${TABLE} (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL COLLATE BINARY UNIQUE,
      content TEXT NOT NULL,
      kind TEXT NOT NULL,
      label TEXT,
      tags TEXT NOT NULL DEFAULT '[]',
      source_type TEXT NOT NULL,
      scope TEXT NOT NULL,
      delivery_policy TEXT NOT NULL,
      review_state TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      epoch TEXT,
      expires_at INTEGER,
      invalidated_at INTEGER,
      invalidation_reason TEXT,
      superseded_by TEXT,
      supersedes TEXT,
      domain TEXT
    )`)
    // The listing order, alone and behind the filters a listing most often narrows by.
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_order ON ${TABLE} (created_at DESC, id)`)
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_scope ON ${TABLE} (scope, created_at DESC, id)`)
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_kind ON ${TABLE} (kind, created_at DESC, id)`)
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_delivery ON ${TABLE} (delivery_policy, created_at DESC, id)`)
    yield* sql.unsafe(FTS_DDL)
  }),
  // Facts about the stored index, e.g. which tokenizer produced its tokens.
  "0002_memory_meta": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`)
  }),
  // How many distinct search tokens each row holds: BM25's record length, which FTS5 keeps only
  // for its own bm25(). Filled by the re-index the tokenizer fingerprint triggers (decision 0051).
  "0003_search_length": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN search_length INTEGER NOT NULL DEFAULT 0`)
  }),
  // Where a record written from a conversation sat (MemoryRecord.position): both NULL otherwise.
  "0004_conversation_position": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN thread TEXT`)
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN turn INTEGER`)
  }),
  // Reading a hit's neighbouring turns (MemoryStore.neighbours) by thread and turn; rows without
  // a position stay out of the index.
  "0005_conversation_index": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_position ON ${TABLE} (thread, turn) WHERE thread IS NOT NULL`)
  }),
  // The record count and search-length sum BM25 and the planner read, kept up to date by every
  // write path (`searchTotals.ts`), counted here from the records already stored (decision 0125).
  "0006_search_totals": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${TOTALS_TABLE} (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      records INTEGER NOT NULL,
      search_length INTEGER NOT NULL
    )`)
    yield* sql.unsafe(`INSERT INTO ${TOTALS_TABLE} (id, records, search_length)
      SELECT 1, count(*), coalesce(sum(search_length), 0) FROM ${TABLE}`)
  }),
  // An index for every listing the store serves (decision 0142), as on PostgreSQL: a scope's
  // always-on records (what project() reads on every turn) and a review queue, in listing order.
  "0007_listing_indexes": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(
      `CREATE INDEX ${TABLE}_always ON ${TABLE} (scope, created_at DESC, id) WHERE delivery_policy = 'always'`
    )
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_review ON ${TABLE} (review_state, created_at DESC, id)`)
  }),
  // World time (decision 0173): when the fact holds, epoch milliseconds, NULL where unknown. Ids
  // 0008-0009 were left unused by parallel work; the migrator runs ids in order, gaps allowed.
  "0010_world_time": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN valid_from INTEGER`)
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN valid_to INTEGER`)
  }),
  // Corroboration (decision 0174): how many times the value was said again, the sessions it was
  // said in (a JSON array) and when last; NULL until the first restatement.
  "0011_corroboration": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN corroborations INTEGER`)
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN corroboration_sessions TEXT`)
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN corroborated_at INTEGER`)
  }),
  // What a ranked search reads of every match (decision 0203): its BM25 length, its conversation
  // position and the filters' columns, keyed by `seq` — a narrow copy the search reads instead of
  // the wide rows (a 1M-record table is ~10× the page cache; this index is about its size).
  "0012_search_rows": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE INDEX ${SEARCH_ROWS_INDEX} ON ${TABLE} (${SEARCH_ROWS_COLUMNS_0012.join(", ")})`)
  }),
  // The place of an episode written without a position in its scope's write order (decision
  // 0233): `write_turn`, NULL for every other row; the rows stored before are placed in the order
  // they were written (`seq`), each scope's counter set past its last place, and the covering
  // index the ranked search reads gains the column.
  "0013_write_order": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`ALTER TABLE ${TABLE} ADD COLUMN write_turn INTEGER`)
    yield* sql.unsafe(`UPDATE ${TABLE} SET write_turn = o.place
      FROM (SELECT seq, row_number() OVER (PARTITION BY scope ORDER BY seq) - 1 AS place
        FROM ${TABLE} WHERE thread IS NULL AND kind = 'episode') AS o
      WHERE ${TABLE}.seq = o.seq`)
    yield* sql.unsafe(`CREATE TABLE ${WRITE_ORDER_TABLE} (
      scope TEXT PRIMARY KEY,
      next INTEGER NOT NULL
    ) WITHOUT ROWID`)
    yield* sql.unsafe(`INSERT INTO ${WRITE_ORDER_TABLE} (scope, next)
      SELECT scope, max(write_turn) + 1 FROM ${TABLE} WHERE write_turn IS NOT NULL GROUP BY scope`)
    yield* sql.unsafe(
      `CREATE INDEX ${WRITE_ORDER_INDEX} ON ${TABLE} (scope, write_turn) WHERE write_turn IS NOT NULL`
    )
    yield* sql.unsafe(`DROP INDEX ${SEARCH_ROWS_INDEX}`)
    yield* sql.unsafe(`CREATE INDEX ${SEARCH_ROWS_INDEX} ON ${TABLE} (${SEARCH_ROWS_COLUMNS.join(", ")})`)
  })
}
