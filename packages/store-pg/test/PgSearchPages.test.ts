/**
 * The PostgreSQL store reads a search in pages (decision 0236, as SQLite's decision 0226): each
 * take is exactly the search of its limit — hits, order, scores and rows skipped — while the tail
 * tier continues after the last row an earlier take read (keyset on `created_at DESC, id`) and the
 * ranked tier ranks again only past the candidates in hand.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { IdGenerator, MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { describePg } from "./pgGate.js"

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
      // Records of one tick are written at one instant: they tie on `created_at` and the id orders them.
      tick: fc.integer({ min: 0, max: 3 }),
      broken: fc.integer({ min: 0, max: 9 })
    }),
    { minLength: 30, maxLength: 60 }
  ),
  query: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }),
  newest: fc.boolean(),
  // Each take's limit and how far past it the store may rank ahead: small takes before large ones
  // make a later take run past the ranked candidates in hand.
  takes: fc.array(
    fc.record({
      limit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 70 })),
      ahead: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }))
    }),
    { minLength: 2, maxLength: 6 }
  )
})

const summary = (result: MemoryStore.SearchResult) => ({
  hits: result.hits.map((hit) => [hit.record.id, hit.score] as const),
  skipped: result.skipped
})

/** Ids whose order is not the order of writing (61 is prime: `i * 7 mod 61` is distinct for i < 61). */
const idOf = (i: number) => `r${String((i * 7) % 61).padStart(2, "0")}`

describePg("PostgreSQL search pages", (url) => {
  // Each test (each property run) gets an empty schema of its own, dropped when it ends.
  const fresh = () =>
    PgEngram.layerStores().pipe(
      Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_pages", maxConnections: 2 })),
      Layer.provideMerge(IdGenerator.sequential("mem"))
    )

  it.effect.prop(
    "each take equals the search of its limit, in any order of limits, with ties on the time and rows that fail to decode in both tiers",
    [corpus],
    ([{ newest, query, records, takes }]) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const sql = yield* SqlClient.SqlClient
        const written = records.map((r, i) => ({ ...r, i })).sort((a, b) => a.tick - b.tick)
        let tick = 0
        for (const r of written) {
          if (r.tick > tick) {
            yield* TestClock.adjust(`${r.tick - tick} seconds`)
            tick = r.tick
          }
          yield* store.write([{
            id: idOf(r.i),
            kind: "episode" as const,
            content: [...r.words, ...(r.common ? ["common", "often"] : ["often"])].join(" "),
            scope: r.scope,
            ...(r.thread === undefined ? {} : { position: { thread: r.thread, turn: r.turn } })
          }])
        }
        // One record in ten no longer decodes: it is skipped and counted wherever a read meets it.
        for (const r of written) {
          if (r.broken === 0) yield* sql`UPDATE engram_memories SET kind = 'bogus' WHERE id = ${idOf(r.i)}`
        }
        const text = `${query.join(" ")} common`
        const options = { ...TUNING, ...(newest ? { order: "newest" as const } : {}) }
        const pages = MemoryStore.pagesOf(store)!(text, options)
        for (const { ahead, limit } of takes) {
          const taken = yield* pages.take(limit, limit + ahead)
          const searched = yield* store.search(text, { ...options, limit })
          expect(summary(taken)).toEqual(summary(searched))
          expect(new Set(taken.hits.map((hit) => hit.record.id)).size).toBe(taken.hits.length)
        }
      }).pipe(Effect.provide(fresh()), Effect.orDie),
    // Each run builds a schema of its own (about a second): a failure is reported as found, not shrunk.
    { fastCheck: { numRuns: 25, endOnFailure: true }, timeout: 300_000 }
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
      yield* TestClock.adjust("1 second")
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
    }).pipe(Effect.provide(fresh()), Effect.orDie))

  it.effect("the ranked tier ranks again only past the candidates in hand, reading their records by id before that", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write(Array.from({ length: 200 }, (_, i) => ({
        id: `h${String(i).padStart(3, "0")}`,
        // Notes: no place in the write order, so every match's bound is its score.
        kind: "note" as const,
        content: `harbor ${"word ".repeat(i % 7)}`
      })))
      const pages = MemoryStore.pagesOf(store)!("harbor", {})
      // Ranks 14 matches with their records and 56 in all.
      yield* pages.take(10, 10)
      expect(pages.searches()).toBe(1)
      // Past the 14 records in hand, within the 56 candidates: their records are read by id.
      const second = yield* pages.take(40, 40)
      expect(pages.searches()).toBe(1)
      expect(summary(second)).toEqual(summary(yield* store.search("harbor", { limit: 40 })))
      // Past the candidates: ranked again, reading ahead.
      const third = yield* pages.take(100, 120)
      expect(pages.searches()).toBe(2)
      expect(summary(third)).toEqual(summary(yield* store.search("harbor", { limit: 100 })))
      expect(summary(yield* pages.take(150, 150))).toEqual(summary(yield* store.search("harbor", { limit: 150 })))
      expect(pages.searches()).toBe(2)
    }).pipe(Effect.provide(fresh()), Effect.orDie))

  it.effect("a candidate's record gone since the ranking ran: the take ranks again", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write(Array.from({ length: 100 }, (_, i) => ({
        id: `g${String(i).padStart(3, "0")}`,
        // Notes: no place in the write order, so no conversation context moves the ranking.
        kind: "note" as const,
        content: `harbor ${"word ".repeat(i % 7)}`
      })))
      const pages = MemoryStore.pagesOf(store)!("harbor", {})
      const first = yield* pages.take(5, 5)
      expect(pages.searches()).toBe(1)
      // The 20th of the ranking is among the candidates whose records were not read yet.
      const all = yield* store.search("harbor", { limit: 36 })
      const gone = all.hits[20]!.record.id
      yield* store.forget({ ids: [gone] }, { by: "test" })
      const second = yield* pages.take(30, 30)
      expect(pages.searches()).toBe(2)
      expect(second.hits.map((hit) => hit.record.id)).not.toContain(gone)
      expect(second.hits.slice(0, 5)).toEqual(first.hits)
      expect(summary(second)).toEqual(summary(yield* store.search("harbor", { limit: 30 })))
    }).pipe(Effect.provide(fresh()), Effect.orDie))
}, { concurrent: true })
