import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/** The table the memory store's migrator records its applied migrations in. */
export const migrationsTable = "engram_memory_migrations"

/** The memory table. */
export const memoryTable = "engram_memories"

/** Key/value facts about the stored data. */
export const metaTable = "engram_memory_meta"

/** The store's size (records, summed BM25 lengths), one row per shard (decision 0141). */
export const totalsTable = "engram_memory_totals"

/** How many records hold each lexeme, one row per lexeme and shard (decision 0141). */
export const frequencyTable = "engram_memory_frequencies"

/**
 * Counter rows per figure: a writer adds to the shard of its connection (`pg_backend_pid() %
 * SHARDS`), so concurrent writers of common words do not queue on one row; a read sums the shards.
 */
export const SHARDS = 16

/**
 * The statement-level trigger body that keeps the totals and document frequencies current in the
 * writing transaction, from `delta` (rows of `search_vector`, `search_length` and `d`, +1 for a
 * row that arrives, −1 for one that leaves). Upserts go in lexeme order, so two writers on one
 * shard lock rows in the same order. An UPDATE that leaves the tokens alone nets to nothing and
 * touches no row.
 */
const countingBody = (delta: string) => `
  DECLARE own_shard smallint := pg_backend_pid() % ${SHARDS};
  BEGIN
    INSERT INTO engram_memory_totals AS t (shard, records, search_length)
      SELECT own_shard, sum(d), sum(d * search_length) FROM (${delta}) AS x
      HAVING sum(d) <> 0 OR sum(d * search_length) <> 0
      ON CONFLICT (shard) DO UPDATE
      SET records = t.records + excluded.records, search_length = t.search_length + excluded.search_length;
    INSERT INTO engram_memory_frequencies AS f (token, shard, docs)
      SELECT token, own_shard, sum(d) FROM (${delta}) AS x, unnest(tsvector_to_array(x.search_vector)) AS token
      GROUP BY token HAVING sum(d) <> 0 ORDER BY token
      ON CONFLICT (token, shard) DO UPDATE SET docs = f.docs + excluded.docs;
    RETURN NULL;
  END`

const arriving = "SELECT search_vector, search_length, 1 AS d FROM new_rows"
const leaving = "SELECT search_vector, search_length, -1 AS d FROM old_rows"

/** The counting functions and triggers (created by a migration, re-created on a partitioned layout). */
export const countingDdl: ReadonlyArray<string> = [
  // SET search_path FROM CURRENT: the function reads and writes this schema's tables whatever
  // search_path the writing session has.
  ...([["insert", arriving], ["delete", leaving], ["update", `${arriving} UNION ALL ${leaving}`]] as const).map((
    [operation, delta]
  ) =>
    `CREATE OR REPLACE FUNCTION engram_memories_count_${operation}() RETURNS trigger LANGUAGE plpgsql
      SET search_path FROM CURRENT AS $$${countingBody(delta)}$$`
  ),
  `CREATE TRIGGER engram_memories_count_insert AFTER INSERT ON engram_memories
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_memories_count_insert()`,
  `CREATE TRIGGER engram_memories_count_delete AFTER DELETE ON engram_memories
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION engram_memories_count_delete()`,
  `CREATE TRIGGER engram_memories_count_update AFTER UPDATE ON engram_memories
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION engram_memories_count_update()`
]

const migrations = {
  "0001_create_memory": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      // Timestamps are epoch milliseconds (BIGINT): exact, and ordered like the core's numbers.
      // Ids sort with COLLATE "C" — raw code-unit order, never the database's locale.
      sql`CREATE TABLE engram_memories (
        id TEXT COLLATE "C" PRIMARY KEY,
        content TEXT NOT NULL,
        kind TEXT NOT NULL,
        label TEXT,
        tags JSONB NOT NULL,
        source_type TEXT NOT NULL,
        scope TEXT NOT NULL,
        delivery_policy TEXT NOT NULL,
        review_state TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        epoch TEXT,
        expires_at BIGINT,
        invalidated_at BIGINT,
        invalidation_reason TEXT,
        superseded_by TEXT COLLATE "C",
        supersedes TEXT COLLATE "C",
        domain TEXT,
        search_tokens TEXT NOT NULL,
        search_vector TSVECTOR GENERATED ALWAYS AS (array_to_tsvector(string_to_array(search_tokens, ' '))) STORED
      )`,
      sql`CREATE INDEX engram_memories_list_idx ON engram_memories (created_at DESC, id)`,
      sql`CREATE INDEX engram_memories_scope_list_idx ON engram_memories (scope, created_at DESC, id)`,
      // A small GIN pending list (256 kB, not the 4 MB default): writes still go to the index in
      // bulk, but a search never has to scan megabytes of unmerged entries, and the planner keeps
      // choosing the index right after a burst of writes.
      sql`CREATE INDEX engram_memories_search_idx ON engram_memories USING GIN (search_vector)
        WITH (gin_pending_list_limit = 256)`,
      // Facts about the stored data, e.g. which tokenizer produced search_tokens.
      sql`CREATE TABLE engram_memory_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
    ], { discard: true })),
  // How many distinct lexemes each row holds: BM25's record length, read without detoasting the
  // vector. Filled by the re-index the tokenizer fingerprint triggers (decision 0051).
  "0002_search_length": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`ALTER TABLE engram_memories ADD COLUMN search_length INTEGER NOT NULL DEFAULT 0`
  ),
  // Where a record written from a conversation sat (MemoryRecord.position): both NULL otherwise.
  "0003_conversation_position": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`ALTER TABLE engram_memories ADD COLUMN thread TEXT, ADD COLUMN turn INTEGER`
  ),
  // Reading a hit's neighbouring turns (MemoryStore.neighbours) by thread and turn; rows without
  // a position stay out of the index.
  "0004_conversation_index": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`CREATE INDEX engram_memories_position_idx ON engram_memories (thread, turn) WHERE thread IS NOT NULL`
  ),
  // The store's size and each lexeme's document frequency, kept current by statement triggers in
  // the writing transaction and filled once from the rows already stored (decision 0141): a
  // search reads its statistics by primary key instead of counting the table.
  "0005_search_statistics": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`CREATE TABLE engram_memory_totals (
        shard SMALLINT PRIMARY KEY, records BIGINT NOT NULL, search_length BIGINT NOT NULL)`,
      sql`CREATE TABLE engram_memory_frequencies (
        token TEXT COLLATE "C" NOT NULL, shard SMALLINT NOT NULL, docs BIGINT NOT NULL, PRIMARY KEY (token, shard))`,
      ...countingDdl.map((statement) => sql.unsafe(statement)),
      sql`INSERT INTO engram_memory_totals (shard, records, search_length)
        SELECT 0, count(*), coalesce(sum(search_length), 0) FROM engram_memories`,
      sql`INSERT INTO engram_memory_frequencies (token, shard, docs)
        SELECT token, 0, count(*) FROM engram_memories, unnest(tsvector_to_array(search_vector)) AS token
        GROUP BY token`
    ], { discard: true })),
  // An index for every listing the store serves (decision 0142): always-on records of a scope
  // (project()), a review queue (review_state), a kind; each in listing order.
  "0006_listing_indexes": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`CREATE INDEX engram_memories_always_idx ON engram_memories (scope, created_at DESC, id)
        WHERE delivery_policy = 'always'`,
      sql`CREATE INDEX engram_memories_delivery_idx ON engram_memories (delivery_policy, created_at DESC, id)`,
      sql`CREATE INDEX engram_memories_review_idx ON engram_memories (review_state, created_at DESC, id)`,
      sql`CREATE INDEX engram_memories_kind_idx ON engram_memories (kind, created_at DESC, id)`
    ], { discard: true })),
  // World time (decision 0173): when the fact holds, epoch milliseconds, NULL where unknown. Ids
  // 0007-0009 were left unused by parallel work; the migrator runs ids in order, gaps allowed.
  "0010_world_time": Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`ALTER TABLE engram_memories ADD COLUMN valid_from BIGINT, ADD COLUMN valid_to BIGINT`
  )
}

/**
 * Runs `migrations` recorded in `table` (each store keeps its own history, so stores can share a
 * schema). Safe to run from several processes at once: the migrations table is created under an
 * advisory lock, and the migrator then locks it for the run.
 */
export const runMigrations = (
  table: string,
  migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.zipRight(
        sql`SELECT pg_advisory_xact_lock(hashtext(${`engram:migrations:${table}:`} || coalesce(current_schema(), '')))`,
        sql.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (
          migration_id integer PRIMARY KEY,
          created_at timestamp with time zone NOT NULL DEFAULT now(),
          name text NOT NULL
        )`)
      )
    )
    return yield* Migrator.make({})({ loader: Migrator.fromRecord(migrations), table })
  })

/** Brings the memory tables up to date. */
export const migrate = runMigrations(migrationsTable, migrations)

/**
 * Checks, without changing anything, that `table` records every migration up to `latest` — for
 * connections that cannot migrate (a read replica, a read-only role).
 */
export const ensureMigratedTo = (table: string, latest: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ latest: number | null }>`SELECT max(migration_id) AS latest FROM ${sql(table)}`
      .pipe(Effect.catchAll(() => Effect.succeed([{ latest: null }])))
    const applied = rows[0]?.latest ?? 0
    if (applied < latest) {
      return yield* new SqlError({
        message: `the tables of ${table} are at migration ${applied}, this version of Engram needs ${latest}: ` +
          `start a store with migrations (layerPg) against the primary first`
      })
    }
  })

/** The id of the newest migration in a record of migrations. */
export const latestOf = (migrations: Record<string, unknown>): number =>
  Math.max(...Object.keys(migrations).map((key) => Number.parseInt(key, 10)))

/** Checks that the memory tables are at the version this code needs. */
export const ensureMigrated = ensureMigratedTo(migrationsTable, latestOf(migrations))
