/**
 * Tier 2's search pages (decisions 0226, 0236), for a store that reads searches in pages
 * (`MemoryStore.pagesOf`): every take of a search's pages is exactly the search of its limit —
 * hits, order, scores and rows skipped — whatever the takes before it read, in both orders, over
 * records that tie on their creation time and, where the backend can damage a row, rows that no
 * longer decode. Core's wrappers keep a store's pages, and a projection over them is the projection
 * over plain searches, text and report.
 */
import { expect, it } from "@effect/vitest"
import { ContextProjection, MemoryStore, PromotionStore, TelemetryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as fc from "fast-check"
import { type Provide, store, T0 } from "./harness.js"

const WORDS = ["harbor", "lantern", "violet", "granite", "meadow", "copper"]
// "often" is held by every record and "common" by about half: with the planner's floor off they
// are pruned to the tail tier, so a search of them and a rarer word reads both tiers.
const TUNING = { plan: { minPrunedPostings: 0, maxDocumentShare: 0.3 } } as const

/** One generated corpus: records in written order, each with its write instant, and the takes to check. */
const pagesCorpus = (seed: number) => {
  const [corpus] = fc.sample(
    fc.record({
      records: fc.array(
        fc.record({
          words: fc.array(fc.constantFrom(...WORDS), { maxLength: 2 }),
          common: fc.boolean(),
          scope: fc.constantFrom("global", "project:a"),
          thread: fc.constantFrom("t1", "t2", undefined),
          turn: fc.integer({ min: 0, max: 8 }),
          tick: fc.integer({ min: 0, max: 3 }),
          broken: fc.integer({ min: 0, max: 9 })
        }),
        { minLength: 40, maxLength: 60 }
      ),
      queries: fc.array(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }), {
        minLength: 3,
        maxLength: 3
      }),
      // Small takes before large ones make a later take run past what the earlier ones read.
      takes: fc.array(
        fc.record({
          limit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 70 })),
          ahead: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 40 }))
        }),
        { minLength: 4, maxLength: 6 }
      )
    }),
    { seed, numRuns: 1 }
  )
  return corpus!
}

/** The seeds the conformance kit checks: fixed, so every backend reads the same corpora. */
export const PAGES_SEEDS = [1, 2, 3, 4, 5, 6]

const summary = (result: MemoryStore.SearchResult) => ({
  hits: result.hits.map((hit) => [hit.record.id, hit.score] as const),
  skipped: result.skipped
})

/** Ids whose order is not the order of writing (61 is prime: `i * 7 mod 61` is distinct for i < 61). */
const idOf = (i: number) => `page-${String((i * 7) % 61).padStart(2, "0")}`

export const searchPages = <RExtra, LE>(
  provide: Provide<RExtra, LE>,
  corruptRecord: ((id: string) => Effect.Effect<void, unknown, MemoryStore.MemoryStore | RExtra>) | undefined
) => {
  for (const seed of PAGES_SEEDS) {
    it.effect(`each take equals the search of its limit, seed ${seed}`, () =>
      Effect.gen(function*() {
        const s = yield* store
        const corpus = pagesCorpus(seed)
        const written = corpus.records.map((r, i) => ({ ...r, id: idOf(i) })).sort((a, b) => a.tick - b.tick)
        // One write each: the records of one tick tie on their creation time, and the id orders them.
        for (const r of written) {
          yield* TestClock.setTime(T0 + r.tick * 1000)
          yield* s.write([{
            id: r.id,
            kind: "episode",
            content: [...r.words, ...(r.common ? ["common", "often"] : ["often"])].join(" "),
            scope: r.scope,
            ...(r.thread === undefined ? {} : { position: { thread: r.thread, turn: r.turn } })
          }])
        }
        if (corruptRecord !== undefined) {
          for (const r of written) if (r.broken === 0) yield* corruptRecord(r.id)
        }
        const paged = MemoryStore.pagesOf(s)!
        for (const query of corpus.queries) {
          for (const order of ["relevance", "newest"] as const) {
            const text = `${query.join(" ")} common`
            const options = { ...TUNING, order }
            const pages = paged(text, options)
            for (const { ahead, limit } of corpus.takes) {
              const taken = yield* pages.take(limit, limit + ahead)
              const searched = yield* s.search(text, { ...options, limit })
              expect(summary(taken), `${text} (${order}), take ${limit} ahead ${ahead}`).toEqual(summary(searched))
            }
          }
        }
      }).pipe(provide))
  }
  it.effect("core's wrappers pass the pages on; a service of its own (a hybrid store, a test double) has none", () =>
    Effect.gen(function*() {
      const s = yield* store
      expect(MemoryStore.pagesOf(s)).toBeDefined()
      const defaulted = yield* MemoryStore.withSearchDefaults(s, { plan: { maxRankedTokens: 1 } })
      expect(MemoryStore.pagesOf(defaulted)).toBeDefined()
      expect(MemoryStore.pagesOf({ ...s })).toBeUndefined()
    }).pipe(provide))

  it.effect("a projection over pages is the projection over searches, text and report, ranking no more often", () =>
    Effect.gen(function*() {
      const s = yield* store
      // Relevant records thin out down the ranking, and most of the store holds the question's
      // function words alone: the rounds go past the first limit and into the tail tier.
      yield* s.write(Array.from({ length: 600 }, (_, i) => ({
        id: `p${String(i).padStart(3, "0")}`,
        kind: "episode" as const,
        content: i % 9 === 0
          ? `the lantern by the harbor was lit on evening ${i} ${"and the tide came in ".repeat(i % 4)}`
          : `what was said about the evening ${i}`
      })))
      const request = {
        sessionId: "s-1",
        turn: 1,
        mode: "native" as const,
        query: "what was the lantern by the harbor like in the evening",
        scopes: ["global"],
        budget: { totalTokens: 4_000 }
      }
      // A copy of the service has no pages: its projection runs a search each round. Nothing is
      // promoted, so the projection's other stores are in memory.
      const project = (memories: MemoryStore.Service) =>
        Effect.flatMap(ContextProjection.make(), (projection) => projection.project(request)).pipe(
          Effect.provideService(MemoryStore.MemoryStore, memories),
          Effect.provide(Layer.merge(TelemetryStore.layerMemory, PromotionStore.layerMemory))
        )
      const paged = yield* project(s)
      const searched = yield* project({ ...s })
      expect(paged.text).toEqual(searched.text)
      const { searches: pagedSearches, ...pagedReport } = paged.budget.recall!
      const { searches: searchedSearches, ...searchedReport } = searched.budget.recall!
      expect(pagedReport).toEqual(searchedReport)
      expect(pagedReport.rounds).toBeGreaterThan(1)
      expect(pagedSearches).toBeLessThanOrEqual(searchedSearches)
    }).pipe(provide))
}
