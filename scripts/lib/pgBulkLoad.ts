/**
 * A bench's records written into a PostgreSQL store in minutes rather than hours (issue #39's 10M
 * run). Each batch still goes through the store's own `MemoryStore.write` — the same record
 * preparation, row encoding, search tokens and BM25 lengths, so every row is the store's row — but
 * for the load the memory table's secondary indexes are dropped and its statistics triggers
 * disabled: through the store at millions of records most of a write is the GIN index, six
 * B-trees and the counter upserts of every batch (~57,000 records a minute at 4M). Afterwards the
 * statistics are counted from the rows in one pass (as migration `0005_search_statistics` fills
 * them), each index is rebuilt from its own definition, and the table analysed. The primary key
 * stays: the store's insert relies on it.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Effect from "effect/Effect"
import * as ChildProcess from "node:child_process"
import * as NodeUrl from "node:url"
import type { ScopeLayout } from "./conversation.js"

/** Records per `MemoryStore.write`: the PostgreSQL store's own statement size (one INSERT each). */
const BATCH = 5_000

/**
 * Writer processes, each with its own range of records and connection: preparing and tokenizing
 * the records (the client's share of a write) is the load's bottleneck, and one process has one
 * core.
 */
const WRITERS = 3

/** Memory for each index build: the GIN index over millions of rows sorts far less with 1 GB than with 64 MB. */
const BUILD_MEMORY = "1GB"

interface IndexDefinition {
  readonly name: string
  readonly definition: string
}

/** The memory table's indexes other than its primary key, as `CREATE INDEX` statements. */
const secondaryIndexes = (sql: SqlClient.SqlClient) =>
  sql<IndexDefinition>`
    SELECT c.relname AS name, pg_get_indexdef(x.indexrelid) AS definition
    FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
    WHERE x.indrelid = 'engram_memories'::regclass AND NOT x.indisprimary
    ORDER BY c.relname`

/** Drops the secondary indexes and disables the statistics triggers; returns what to rebuild. */
const setAside = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const indexes = yield* secondaryIndexes(sql)
    yield* sql.withTransaction(Effect.gen(function*() {
      for (const index of indexes) yield* sql.unsafe(`DROP INDEX "${index.name}"`)
      yield* sql.unsafe("ALTER TABLE engram_memories DISABLE TRIGGER USER")
    }))
    return indexes
  })

/**
 * Counts the statistics from the rows — totals and per-lexeme document frequencies, in shard 0 —
 * re-enables the triggers that keep them current from here on, and rebuilds the indexes. The
 * writers ran at once, so their episodes took places in the scopes' write order (decision 0233)
 * as their batches happened to commit: they are numbered again in creation order (the order one
 * writer would have written them in, as migration `0012_write_order` numbers a store's rows) and
 * each scope's counter set past its last.
 */
const restore = (sql: SqlClient.SqlClient, indexes: ReadonlyArray<IndexDefinition>) =>
  Effect.gen(function*() {
    yield* sql.withTransaction(Effect.forEach([
      `UPDATE engram_memories m SET write_turn = o.place
        FROM (SELECT id, (row_number() OVER (PARTITION BY scope ORDER BY created_at, id) - 1)::int AS place
          FROM engram_memories WHERE write_turn IS NOT NULL) o
        WHERE m.id = o.id AND m.write_turn <> o.place`,
      `UPDATE engram_memory_write_order w SET next = o.next
        FROM (SELECT scope, max(write_turn) + 1 AS next FROM engram_memories WHERE write_turn IS NOT NULL
          GROUP BY scope) o
        WHERE w.scope = o.scope`,
      "ALTER TABLE engram_memories ENABLE TRIGGER USER",
      "DELETE FROM engram_memory_totals",
      "DELETE FROM engram_memory_frequencies",
      `INSERT INTO engram_memory_totals (shard, records, search_length)
        SELECT 0, count(*), coalesce(sum(search_length), 0) FROM engram_memories`,
      `INSERT INTO engram_memory_frequencies (token, shard, docs)
        SELECT token, 0, count(*) FROM engram_memories, unnest(tsvector_to_array(search_vector)) AS token
        GROUP BY token`
    ], (statement) =>
      sql.unsafe(statement), { discard: true }))
    for (const index of indexes) {
      yield* sql.withTransaction(Effect.zipRight(
        sql.unsafe(`SET LOCAL maintenance_work_mem = '${BUILD_MEMORY}'`),
        sql.unsafe(index.definition)
      ))
    }
    yield* sql.unsafe("VACUUM (ANALYZE) engram_memories")
  })

/** One writer's share of a load (`scripts/lib/pgBulkWriter.ts`). */
export interface WriterTask {
  readonly url: string
  readonly schema: string
  readonly from: number
  readonly to: number
  readonly seed: number
  readonly layout: ScopeLayout
  readonly at: number
  readonly batch: number
}

/**
 * What to load: the bench inputs `inputsBetween(0, records, seed, layout)`, record i created at
 * `at + i`, over `url` (the writers connect to the schema the loading client works in).
 */
export interface BulkLoad {
  readonly url: string
  readonly records: number
  readonly seed: number
  readonly layout: ScopeLayout
  readonly at: number
  /** Records per write (default {@link BATCH}) and writer processes (default {@link WRITERS}). */
  readonly batch?: number
  readonly writers?: number
}

const writerScript = NodeUrl.fileURLToPath(new URL("./pgBulkWriter.ts", import.meta.url))

/** Runs the writer processes over consecutive ranges of whole batches; `progress` hears the running total. */
const runWriters = (load: BulkLoad, schema: string, progress: (written: number) => void) => {
  const { batch = BATCH, writers = WRITERS } = load
  const share = Math.ceil(load.records / writers / batch) * batch
  let written = 0
  return Effect.all(
    Array.from({ length: writers }, (_, w) => ({ from: w * share, to: Math.min(load.records, (w + 1) * share) }))
      .filter(({ from, to }) => from < to)
      .map(({ from, to }) =>
        Effect.async<void, Error>((resume) => {
          const task: WriterTask = {
            url: load.url,
            schema,
            from,
            to,
            seed: load.seed,
            layout: load.layout,
            at: load.at,
            batch
          }
          const child = ChildProcess.fork(writerScript, [JSON.stringify(task)], {
            execArgv: ["--conditions=engram-source", "--import", "tsx"]
          })
          child.on("message", (count) => {
            written += Number(count)
            progress(written)
          })
          child.on("exit", (code) =>
            resume(code === 0 ? Effect.void : Effect.fail(new Error(`bulk writer ${from}-${to} exited with ${code}`))))
          return Effect.sync(() =>
            child.kill()
          )
        })
      ),
    { concurrency: "unbounded", discard: true }
  )
}

/**
 * Writes the bench inputs `load` names into its schema's memory table in bulk (see the module
 * comment); `progress` hears how many are written. The indexes and triggers come back, and the
 * statistics are counted, even when a writer fails.
 */
export const bulkLoad = (load: BulkLoad, progress: (written: number) => void = () => {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [{ schema }] = yield* sql<{ schema: string }>`SELECT current_schema() AS schema`
    yield* Effect.acquireUseRelease(
      setAside(sql),
      () => runWriters(load, schema, progress),
      (indexes) => Effect.orDie(restore(sql, indexes))
    )
  })
