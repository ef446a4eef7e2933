/**
 * Every PostgreSQL table of an Engram store and its migrations, in one room (as SQLite's
 * `internal/migrations.ts`): the table names, each store's migration steps recorded in its own
 * migrations table (so stores that share a schema migrate independently), and the runner.
 *
 * @internal
 */
import * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"

/** One store's migrations: its steps by id, recorded in `table`. */
export interface StoreMigrations {
  readonly table: string
  readonly steps: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>>
}

/** A migration step of several statements, run in order. */
const statements = (make: (sql: SqlClient.SqlClient) => ReadonlyArray<Statement.Statement<unknown>>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.all(make(sql), { discard: true }))

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

const memorySteps = {
  "0001_create_memory": statements((sql) => [
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
  ]),
  // How many distinct lexemes each row holds: BM25's record length, read without detoasting the
  // vector. Filled by the re-index the tokenizer fingerprint triggers (decision 0051).
  "0002_search_length": statements((
    sql
  ) => [sql`ALTER TABLE engram_memories ADD COLUMN search_length INTEGER NOT NULL DEFAULT 0`]),
  // Where a record written from a conversation sat (MemoryRecord.position): both NULL otherwise.
  "0003_conversation_position": statements((
    sql
  ) => [sql`ALTER TABLE engram_memories ADD COLUMN thread TEXT, ADD COLUMN turn INTEGER`]),
  // Reading a hit's neighbouring turns (MemoryStore.neighbours) by thread and turn; rows without
  // a position stay out of the index.
  "0004_conversation_index": statements((
    sql
  ) => [sql`CREATE INDEX engram_memories_position_idx ON engram_memories (thread, turn) WHERE thread IS NOT NULL`]),
  // The store's size and each lexeme's document frequency, kept current by statement triggers in
  // the writing transaction and filled once from the rows already stored (decision 0141): a
  // search reads its statistics by primary key instead of counting the table.
  "0005_search_statistics": statements((sql) => [
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
  ]),
  // An index for every listing the store serves (decision 0142): always-on records of a scope
  // (project()), a review queue (review_state), a kind; each in listing order.
  "0006_listing_indexes": statements((sql) => [
    sql`CREATE INDEX engram_memories_always_idx ON engram_memories (scope, created_at DESC, id)
        WHERE delivery_policy = 'always'`,
    sql`CREATE INDEX engram_memories_delivery_idx ON engram_memories (delivery_policy, created_at DESC, id)`,
    sql`CREATE INDEX engram_memories_review_idx ON engram_memories (review_state, created_at DESC, id)`,
    sql`CREATE INDEX engram_memories_kind_idx ON engram_memories (kind, created_at DESC, id)`
  ]),
  // World time (decision 0173): when the fact holds, epoch milliseconds, NULL where unknown. Ids
  // 0007-0009 were left unused by parallel work; the migrator runs ids in order, gaps allowed.
  "0010_world_time": statements((
    sql
  ) => [sql`ALTER TABLE engram_memories ADD COLUMN valid_from BIGINT, ADD COLUMN valid_to BIGINT`]),
  // Corroboration (decision 0174): how many times the value was said again, the sessions it was
  // said in (JSON text, as the row codec reads it) and when last; NULL until the first restatement.
  "0011_corroboration": statements((sql) => [
    sql`ALTER TABLE engram_memories ADD COLUMN corroborations INTEGER,
        ADD COLUMN corroboration_sessions TEXT, ADD COLUMN corroborated_at BIGINT`
  ]),
  // The place of an episode written without a position in its scope's write order (decision
  // 0233): `write_turn`, NULL for every other row; the rows stored before are placed in the order
  // they were written (creation time, then id: a batch is stamped in item order), each scope's
  // counter row set past its last place. A write moves the counter row on in its transaction.
  "0012_write_order": statements((sql) => [
    sql`ALTER TABLE engram_memories ADD COLUMN write_turn INTEGER`,
    sql`UPDATE engram_memories m SET write_turn = o.place
        FROM (SELECT id, (row_number() OVER (PARTITION BY scope ORDER BY created_at, id) - 1)::int AS place
          FROM engram_memories WHERE thread IS NULL AND kind = 'episode') o
        WHERE m.id = o.id`,
    sql`CREATE TABLE engram_memory_write_order (scope TEXT PRIMARY KEY, next INTEGER NOT NULL)`,
    sql`INSERT INTO engram_memory_write_order (scope, next)
        SELECT scope, max(write_turn) + 1 FROM engram_memories WHERE write_turn IS NOT NULL GROUP BY scope`,
    sql`CREATE INDEX engram_memories_write_order_idx ON engram_memories (scope, write_turn)
        WHERE write_turn IS NOT NULL`
  ])
}

/** The memory table's migrations. */
export const memory: StoreMigrations = { table: migrationsTable, steps: memorySteps }

/** The promotion table. */
export const promotionTable = "engram_promotions"

/** The table the promotion store's migrations are recorded in. */
export const promotionMigrationsTable = "engram_promotion_migrations"

const promotionsSteps = {
  "0001_create_promotions": statements((sql) => [
    // One row per (record, spec): the primary key makes "committed once" the database's rule.
    // The placement is kept as its JSON text (its arms differ in shape), next to its address.
    // No CHECK constraints: rows are validated on commit and decoded on every read, where a
    // bad row is skipped rather than failing the query.
    sql`CREATE TABLE engram_promotions (
        record_id TEXT COLLATE "C" NOT NULL,
        spec_key TEXT COLLATE "C" NOT NULL,
        spec_version TEXT NOT NULL,
        scope TEXT NOT NULL,
        placement TEXT,
        placement_key TEXT,
        key_source TEXT,
        tier TEXT,
        promoted_at BIGINT NOT NULL,
        PRIMARY KEY (record_id, spec_key)
      )`,
    // The save gate's exact lookup; its leading column also serves listing a scope.
    sql`CREATE INDEX engram_promotions_address_idx ON engram_promotions (scope, placement_key)`
  ])
}

/** The promotions migrations, recorded in their own table. */
export const promotions: StoreMigrations = { table: promotionMigrationsTable, steps: promotionsSteps }

/** One row per message. */
export const messagesTable = "engram_session_messages"

/** At most one row per session. */
export const interruptsTable = "engram_session_interrupts"

/** One row per extraction run that called the model. */
export const extractionsTable = "engram_session_extractions"

/** At most one row per session: who runs its extraction, until when. */
export const claimsTable = "engram_session_extraction_claims"

/** The table the session store's migrations are recorded in. */
export const sessionMigrationsTable = "engram_session_migrations"

const sessionsSteps = {
  "0001_sessions": statements((sql) => [
    // `seq` counts from 0 per session in append order. The message is kept in its encoded JSON
    // form beside its tag and time, so an operator can query the table directly. No CHECK
    // constraints: messages are validated on append and decoded on every read, where a bad
    // row is skipped rather than failing the load.
    sql`CREATE TABLE engram_session_messages (
        session_id TEXT COLLATE "C" NOT NULL,
        seq INTEGER NOT NULL,
        tag TEXT NOT NULL,
        at BIGINT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      )`,
    sql`CREATE TABLE engram_session_interrupts (
        session_id TEXT COLLATE "C" PRIMARY KEY,
        turn INTEGER NOT NULL,
        at BIGINT NOT NULL,
        interrupt TEXT NOT NULL
      )`
  ]),
  // The extraction ledger: one row per extraction run that called the model, numbered from 0 per
  // session in record order, the run kept in its encoded JSON form beside its outcome and time.
  "0002_extraction_runs": statements((sql) => [sql`CREATE TABLE engram_session_extractions (
      session_id TEXT COLLATE "C" NOT NULL,
      seq INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      at BIGINT NOT NULL,
      run TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    )`]),
  // Extraction claims: at most one per session, the holder and its lease (epoch milliseconds), so
  // two processes over one schema never run extraction for the same session at once.
  "0003_extraction_claims": statements((sql) => [sql`CREATE TABLE engram_session_extraction_claims (
      session_id TEXT COLLATE "C" PRIMARY KEY,
      holder TEXT NOT NULL,
      claimed_at BIGINT NOT NULL,
      expires_at BIGINT NOT NULL
    )`])
}

/** The sessions migrations, recorded in their own table. */
export const sessions: StoreMigrations = { table: sessionMigrationsTable, steps: sessionsSteps }

/** One row per appended injection row. */
export const injectionsTable = "engram_injection_log"

/** The table the telemetry store's migrations are recorded in. */
export const telemetryMigrationsTable = "engram_telemetry_migrations"

/** One row per stored prompt snapshot. */
export const snapshotsTable = "engram_prompt_snapshots"

/** The trajectory entries of every session. */
export const trajectoryTable = "engram_trajectory"

const telemetrySteps = {
  "0001_injection_log": statements((sql) => [
    // Numbered by an identity column (append order); session, turn, mode and time as columns;
    // the delivered memory ids and section labels as JSONB arrays, so a question such as
    // "which turns delivered mem-1?" is one query (memory_ids ? 'mem-1'). No CHECK
    // constraints: rows are validated on append and decoded on every read.
    sql`CREATE TABLE engram_injection_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL,
        turn INTEGER NOT NULL,
        mode TEXT NOT NULL,
        at BIGINT NOT NULL,
        memory_ids JSONB NOT NULL,
        section_labels JSONB NOT NULL
      )`,
    sql`CREATE INDEX engram_injection_log_session_idx ON engram_injection_log (session_id, id)`
  ]),
  "0002_prompt_snapshots": statements((sql) => [
    // One row per model call: the encoded snapshot as JSONB, the usage (reported after the call)
    // in its own column. The trajectory is append-only and content-addressed: `address` is
    // `message:<seq>` or `<kind>:<hash>`, unique per session, so a blob is stored once.
    sql`CREATE TABLE engram_prompt_snapshots (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL,
        turn INTEGER NOT NULL,
        call INTEGER NOT NULL,
        at BIGINT NOT NULL,
        body JSONB NOT NULL,
        usage JSONB,
        UNIQUE (session_id, turn, call)
      )`,
    sql`CREATE TABLE engram_trajectory (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL,
        address TEXT NOT NULL,
        kind TEXT NOT NULL,
        seq INTEGER,
        hash TEXT NOT NULL,
        body TEXT NOT NULL,
        UNIQUE (session_id, address)
      )`
  ])
}

/** The telemetry migrations, recorded in their own table. */
export const telemetry: StoreMigrations = { table: telemetryMigrationsTable, steps: telemetrySteps }

/** @internal */
export const tombstoneTable = "engram_memory_tombstones"

/** The table the tombstone migrations are recorded in. */
export const tombstoneMigrationsTable = "engram_tombstone_migrations"

const tombstonesSteps = {
  "0001_tombstones": statements((sql) => [
    sql`CREATE TABLE engram_memory_tombstones (
        seq BIGSERIAL PRIMARY KEY,
        memory_id TEXT COLLATE "C" NOT NULL,
        scope TEXT NOT NULL,
        forgotten_at BIGINT NOT NULL,
        forgotten_by TEXT NOT NULL,
        supersedes TEXT COLLATE "C",
        superseded_by TEXT COLLATE "C"
      )`,
    sql`CREATE INDEX engram_memory_tombstones_id_idx ON engram_memory_tombstones (memory_id)`,
    sql`CREATE INDEX engram_memory_tombstones_scope_idx ON engram_memory_tombstones (scope)`
  ])
}

/** The tombstones migrations, recorded in their own table. */
export const tombstones: StoreMigrations = { table: tombstoneMigrationsTable, steps: tombstonesSteps }

/** One vector per record. */
export const VECTOR_TABLE = "engram_memory_vectors"

/** The embedder's identity, and other facts about the vectors. */
export const VECTOR_META_TABLE = "engram_memory_vector_meta"

/** The table the vector index's migrations are recorded in. */
export const VECTOR_MIGRATIONS_TABLE = "engram_memory_vector_migrations"

const vectorsSteps = {
  "0001_memory_vectors": statements((sql) => [
    sql`CREATE TABLE engram_memory_vectors (
        id TEXT COLLATE "C" PRIMARY KEY REFERENCES engram_memories (id) ON DELETE CASCADE,
        embedding REAL[] NOT NULL
      )`,
    sql`CREATE TABLE engram_memory_vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
  ])
}

/** The vectors migrations, recorded in their own table. */
export const vectors: StoreMigrations = { table: VECTOR_MIGRATIONS_TABLE, steps: vectorsSteps }

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
export const migrate = runMigrations(migrationsTable, memorySteps)

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
          `start a store with migrations (layer) against the primary first`
      })
    }
  })

/** The id of the newest migration in a record of migrations. */
export const latestOf = (migrations: Record<string, unknown>): number =>
  Math.max(...Object.keys(migrations).map((key) => Number.parseInt(key, 10)))

/** Checks that the memory tables are at the version this code needs. */
export const ensureMigrated = ensureMigratedTo(migrationsTable, latestOf(memorySteps))

/** Brings one store's tables up to date. */
export const run = (store: StoreMigrations) => runMigrations(store.table, store.steps)

/** Checks, without DDL, that one store's tables are at the version this code needs. */
export const ensure = (store: StoreMigrations) => ensureMigratedTo(store.table, latestOf(store.steps))
