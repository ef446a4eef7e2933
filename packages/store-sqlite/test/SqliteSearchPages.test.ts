/**
 * The SQLite store reads a search in pages (decision 0226): each take is exactly the search of its
 * limit — hits, order, scores and rows skipped — while the tail tier continues after the last row
 * an earlier take read and the ranked tier ranks again only past the candidates in hand.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const inMemory = () =>
  Layer.merge(
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))),
    IdGenerator.sequential("mem")
  )

const raw = (statement: string, ...params: Array<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(statement, params))

// "common" and "often" are held by most records: with the planner's floor off they are pruned to
// the tail tier, so a search of them and a rarer word reads both tiers.
const WORDS = ["harbor", "lantern", "violet", "granite", "meadow", "copper"]
const TUNING = { plan: { minPrunedPostings: 0, maxDocumentShare: 0.3 } } as const

const corpus = fc.record({
  records: fc.array(
    fc.record({
      words: fc.array(fc.constantFrom(...WORDS), { maxLength: 2 }),
      common: fc.boolean(),
      scope: fc.constantFrom("global", "project:a"),
      thread: fc.option(fc.constantFrom("t1", "t2"), { nil: undefined }),
      turn: fc.integer({ min: 0, max: 8 }),
      broken: fc.integer({ min: 0, max: 9 })
    }),
    { minLength: 30, maxLength: 60 }
  ),
  query: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }),
  newest: fc.boolean(),
  // Each take's limit and how far past it the store may rank ahead.
  takes: fc.array(fc.record({ limit: fc.integer({ min: 1, max: 70 }), ahead: fc.integer({ min: 0, max: 40 }) }), {
    minLength: 2,
    maxLength: 6
  })
})

const summary = (result: MemoryStore.SearchResult) => ({
  hits: result.hits.map((hit) => [hit.record.id, hit.score] as const),
  skipped: result.skipped
})

describe("SQLite search pages", () => {
  it.effect.prop(
    "each take equals the search of its limit, in any order of limits, with rows that fail to decode in both tiers",
    [corpus],
    ([{ newest, query, records, takes }]) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* store.write(records.map((r, i) => ({
          id: `r${String(i).padStart(2, "0")}`,
          kind: "episode" as const,
          content: [...r.words, ...(r.common ? ["common", "often"] : ["often"])].join(" "),
          scope: r.scope,
          ...(r.thread === undefined ? {} : { position: { thread: r.thread, turn: r.turn } })
        })))
        // One record in ten no longer decodes: it is skipped and counted wherever a read meets it.
        for (const [i, r] of records.entries()) {
          if (r.broken === 0) {
            yield* raw("UPDATE engram_memories SET kind = 'bogus' WHERE id = ?", `r${String(i).padStart(2, "0")}`)
          }
        }
        const text = `${query.join(" ")} common`
        const options = { ...TUNING, ...(newest ? { order: "newest" as const } : {}) }
        const pages = MemoryStore.pagesOf(store)!(text, options)
        for (const { ahead, limit } of takes) {
          const taken = yield* pages.take(limit, limit + ahead)
          const searched = yield* store.search(text, { ...options, limit })
          expect(summary(taken)).toEqual(summary(searched))
          expect(
            new Set(taken.hits.map((hit) => hit.record.id)).size
          ).toBe(taken.hits.length)
        }
      }).pipe(Effect.provide(inMemory()), Effect.orDie),
    { fastCheck: { numRuns: 40 }, timeout: 240_000 }
  )

  it.effect("a take continues the tail after the last row read: it reads no row twice and none newer", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write(Array.from({ length: 40 }, (_, i) => ({
        id: `t${String(i).padStart(2, "0")}`,
        // Notes: no place in the write order, so no conversation context moves the ranking.
        kind: "note" as const,
        content: i < 3 ? "lantern often" : "often and again"
      })))
      const options = { plan: { minPrunedPostings: 0, maxDocumentShare: 0.2 } }
      const pages = MemoryStore.pagesOf(store)!("lantern often", options)
      const first = yield* pages.take(10, 10)
      // The three lantern records rank; seven tail records follow, newest first.
      expect(first.hits.map((hit) => hit.record.id)).toEqual([
        "t02",
        "t01",
        "t00",
        "t39",
        "t38",
        "t37",
        "t36",
        "t35",
        "t34",
        "t33"
      ])
      // Rows already read stay read; rows past them are read from where the last take stopped, so a
      // newer record written since does not come in between.
      yield* store.forget({ ids: ["t35"] }, { by: "test" })
      yield* store.write([{ id: "t99", kind: "note", content: "often newest" }])
      const second = yield* pages.take(14, 14)
      expect(second.hits.map((hit) => hit.record.id)).toEqual([
        ...first.hits.map((hit) => hit.record.id),
        "t32",
        "t31",
        "t30",
        "t29"
      ])
      expect(second.hits.slice(0, 10)).toEqual(first.hits)
      // The ranked tier's three matches were all in hand: no take ranked again.
      expect(pages.searches()).toBe(1)
    }).pipe(Effect.provide(inMemory()), Effect.orDie))

  it.effect("the ranked tier ranks again only past the candidates in hand, reading ahead", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write(Array.from({ length: 60 }, (_, i) => ({
        id: `h${String(i).padStart(2, "0")}`,
        // Notes: no place in the write order, so every match's bound is its score.
        kind: "note" as const,
        content: `harbor ${"word ".repeat(i % 7)}`
      })))
      const pages = MemoryStore.pagesOf(store)!("harbor", {})
      yield* pages.take(10, 30)
      expect(pages.searches()).toBe(1)
      yield* pages.take(30, 30)
      expect(pages.searches()).toBe(1)
      const third = yield* pages.take(45, 50)
      expect(pages.searches()).toBe(2)
      expect(summary(third)).toEqual(summary(yield* store.search("harbor", { limit: 45 })))
    }).pipe(Effect.provide(inMemory()), Effect.orDie))
})
