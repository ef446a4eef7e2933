/**
 * The benches' bulk loader (`scripts/lib/pgBulkLoad.ts`) must leave a PostgreSQL store that the store
 * cannot tell from one written through `MemoryStore.write`: the same rows (search tokens, lengths
 * and vectors among them), the same statistics, the same indexes, triggers that keep counting
 * afterwards, and so the same answers to every search, in the same order with the same scores.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { type MemoryRecord, MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describePg } from "../packages/store-pg/test/pgGate.js"
import { RUNTIME_SCOPES } from "../scripts/bench/store.js"
import { generateQuestions, generateShortQueries, generateTurns, withAlwaysOn } from "../scripts/lib/conversation.js"
import { bulkLoad } from "../scripts/lib/pgBulkLoad.js"

const RECORDS = 2_000

/** One record written after the load: the statistics triggers must count it. */
const later: MemoryRecord.MemoryWriteInput = {
  id: "later",
  content: "Maya: the ferry to the island was late again",
  kind: "episode",
  sourceType: "conversation",
  scope: "project:p1",
  tags: []
}

/** Everything the store reads from its tables, and what every search of the bench answers. */
const snapshot = (queries: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const store = yield* MemoryStore.MemoryStore
    const searches = yield* Effect.forEach(queries, (query) =>
      Effect.all(
        [{ scopes: RUNTIME_SCOPES, deliverable: true, limit: 20 }, { limit: 20 }].map((options) =>
          Effect.map(store.search(query, options), (result) => result.hits.map((hit) => [hit.record.id, hit.score]))
        )
      ))
    return {
      rows: yield* sql.unsafe(`SELECT *, tags::text AS tags, search_vector::text AS search_vector
        FROM engram_memories ORDER BY id`),
      totals: yield* sql`SELECT sum(records)::float8 AS records, sum(search_length)::float8 AS length
        FROM engram_memory_totals`,
      frequencies: yield* sql`SELECT token, sum(docs)::float8 AS docs FROM engram_memory_frequencies
        GROUP BY token HAVING sum(docs) <> 0 ORDER BY token`,
      indexes: yield* sql`SELECT indexname, regexp_replace(indexdef, ' ON \\S+', ' ON') AS definition
        FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'engram_memories' ORDER BY indexname`,
      searches
    }
  })

/** A new schema with the stores, loaded by `load`, then one record written through the store. */
const loadedWith = <E>(
  url: string,
  load: Effect.Effect<unknown, E, MemoryStore.MemoryStore | SqlClient.SqlClient>,
  queries: ReadonlyArray<string>
) =>
  Effect.gen(function*() {
    yield* load
    yield* Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write([later]))
    return yield* snapshot(queries)
  }).pipe(
    Effect.provide(PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layerTemporarySchema({ url }))))
  )

describePg("the benches' PostgreSQL bulk loader", (url) => {
  it.effect(
    "leaves rows, statistics, indexes and search answers identical to MemoryStore.write's",
    () =>
      Effect.gen(function*() {
        const turns = generateTurns(RECORDS, 1, "tenants")
        const queries = [
          ...generateQuestions(turns, 20, 42, RUNTIME_SCOPES).map((q) => q.text),
          ...generateShortQueries(20, 43)
        ]
        // One write of every record under the test clock (at 0), and the bulk writers stamping as it
        // does: three writers (0-900, 900-1,800, 1,800-2,000), several batches each.
        const written = yield* loadedWith(
          url,
          Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write(withAlwaysOn(turns))),
          queries
        )
        const bulk = yield* loadedWith(
          url,
          bulkLoad({ url, records: RECORDS, seed: 1, layout: "tenants", at: 0, batch: 300, writers: 3 }),
          queries
        )
        expect(bulk.rows).toHaveLength(RECORDS + 1)
        expect(bulk.totals).toEqual([{ records: RECORDS + 1, length: expect.any(Number) }])
        expect(bulk.frequencies.length).toBeGreaterThan(100)
        expect(bulk.indexes.length).toBeGreaterThan(5)
        expect(bulk.searches.flat(2).length).toBeGreaterThan(400)
        expect(bulk).toEqual(written)
      }),
    120_000
  )
})
