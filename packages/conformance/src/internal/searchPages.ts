/**
 * Tier 2's search pages (decisions 0226, 0236), for a store that reads searches in pages
 * (`MemoryStore.pagesOf`): every take of a search's pages is exactly the search of its limit —
 * hits, order, scores and rows skipped — whatever the takes before it read, in both orders, over
 * records that tie on their creation time and, where the backend can damage a row, rows that no
 * longer decode.
 */
import { expect, it } from "@effect/vitest"
import { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
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
}
