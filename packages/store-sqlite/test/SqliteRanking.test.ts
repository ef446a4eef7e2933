/**
 * SQLite ranks exactly as the in-memory store: the bounded top k in SQL (decision 0083), with the
 * conversation context, gives the same hits and scores as core's ranking over every match.
 */
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const WORDS = ["harbor", "lantern", "violet", "granite", "meadow", "copper", "willow", "ember"]
const word = fc.constantFrom(...WORDS)

const corpus = fc.record({
  records: fc.array(
    fc.record({
      words: fc.array(word, { minLength: 1, maxLength: 4 }),
      scope: fc.constantFrom("global", "project:a"),
      thread: fc.option(fc.constantFrom("t1", "t2"), { nil: undefined }),
      turn: fc.integer({ min: 0, max: 8 })
    }),
    { minLength: 40, maxLength: 70 }
  ),
  queries: fc.array(fc.array(word, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 })
})

const searchAll = (
  inputs: ReadonlyArray<Parameters<MemoryStore.Service["write"]>[0][number]>,
  queries: ReadonlyArray<string>,
  layer: Layer.Layer<MemoryStore.MemoryStore, unknown>
) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    yield* store.write(inputs)
    const results: Array<Array<readonly [string, number]>> = []
    for (const query of queries) {
      for (const options of [{ limit: 3 }, { limit: 7, scopes: ["project:a"] }]) {
        const found = yield* store.search(query, options)
        results.push(found.hits.map((hit) => [hit.record.id, hit.score] as const))
      }
    }
    return results
  }).pipe(Effect.provide(Layer.merge(layer, IdGenerator.sequential("mem"))))

describe("SQLite ranking", () => {
  it.effect.prop(
    "equals the in-memory store's on generated conversations (ids, order and scores)",
    [corpus],
    ([{ queries, records }]) =>
      Effect.gen(function*() {
        const inputs = records.map((r, i) => ({
          id: `r${String(i).padStart(2, "0")}`,
          kind: "episode" as const,
          content: r.words.join(" "),
          scope: r.scope,
          ...(r.thread === undefined ? {} : { position: { thread: r.thread, turn: r.turn } })
        }))
        const texts = queries.map((q) => q.join(" "))
        const sqlite = yield* searchAll(
          inputs,
          texts,
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
        )
        const memory = yield* searchAll(inputs, texts, MemoryStore.layerMemory)
        expect(sqlite).toEqual(memory)
      }).pipe(Effect.orDie),
    { fastCheck: { numRuns: 40 } }
  )
})
