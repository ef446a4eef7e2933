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
  // World time (decision 0173): when the fact holds, epoch milliseconds, NULL where unknown. Numbered
  // 0010 to leave 0005-0009 to work on other branches; the migrator runs ids in order, gaps allowed.
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
