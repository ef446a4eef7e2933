/**
 * A PostgreSQL schema loaded once with a bench's generated records and reused across runs: at 1M
 * records the load through `MemoryStore.write` (the statistics triggers keeping their counter rows
 * as it goes) takes far longer than the searches a run times. `loaded` reuses a schema that already
 * holds `records` rows, loads an empty (or new) one, and refuses one holding anything else.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { type MemoryRecord, MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import type { ScopeLayout } from "./conversation.js"
import { bulkLoad } from "./pgBulkLoad.js"

const BATCH = 1_000

/**
 * The stores of `schema` (migrated), on a pool of `maxConnections`; with `around`, the stores'
 * SQL client is the pool's wrapped by it (e.g. timing each statement).
 */
export const pgRuntime = (
  url: string,
  schema: string,
  maxConnections = 2,
  around?: Layer.Layer<SqlClient.SqlClient, never, SqlClient.SqlClient>
) =>
  ManagedRuntime.make(
    PgEngram.layerStores().pipe(
      Layer.provideMerge(around === undefined ? Layer.empty : around),
      Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections })),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )

export type PgRuntime = ReturnType<typeof pgRuntime>

/** Rows in the schema's memory table. */
const count = (runtime: PgRuntime) =>
  runtime.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.map(sql<{ n: number }>`SELECT count(*)::float8 AS n FROM engram_memories`, (rows) =>
        Number(rows[0]!.n)))
  )

/**
 * The stores of `schema`, holding the records `inputs()` generates: loaded now when the schema is
 * empty, reused when it already holds `records` rows. Loaded through `MemoryStore.write` (batches
 * of 1,000, then `VACUUM (ANALYZE)`, as autovacuum would after a bulk load), or with `bulk` by
 * `bulkLoad` — the same records, as `inputsBetween(0, records, seed, layout)` draws them, by
 * parallel writers with the indexes and statistics built once at the end.
 */
export const loaded = async (
  url: string,
  schema: string,
  records: number,
  inputs: () => ReadonlyArray<MemoryRecord.MemoryWriteInput>,
  progress: (written: number) => void = () => {},
  { around, bulk }: {
    readonly bulk?: { readonly seed: number; readonly layout: ScopeLayout } | undefined
    readonly around?: Layer.Layer<SqlClient.SqlClient, never, SqlClient.SqlClient> | undefined
  } = {}
): Promise<{ readonly runtime: PgRuntime; readonly reused: boolean }> => {
  const runtime = pgRuntime(url, schema, 2, around)
  const held = await count(runtime)
  if (held === records) return { runtime, reused: true }
  if (held !== 0) {
    await runtime.dispose()
    throw new Error(`schema ${schema} holds ${held} records, not ${records}: drop it or name another`)
  }
  if (bulk !== undefined) {
    await runtime.runPromise(bulkLoad({ url, records, ...bulk, at: Date.now() }, progress))
    return { runtime, reused: false }
  }
  const all = inputs()
  await runtime.runPromise(Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < all.length; i += BATCH) {
      yield* store.write(all.slice(i, i + BATCH))
      if ((i / BATCH) % 50 === 0) progress(i)
    }
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe("VACUUM (ANALYZE) engram_memories")
  }))
  return { runtime, reused: false }
}
