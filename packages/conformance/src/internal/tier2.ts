import { describe, expect, it } from "@effect/vitest"
import { MemoryQuery } from "@engram/core"
import type { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { searchCases, searchCorpus } from "../SearchCorpus.js"
import { failure, plain, type Provide, sortedIds, store, T0 } from "./harness.js"

const writeCorpus = Effect.gen(function*() {
  const s = yield* store
  yield* TestClock.setTime(T0)
  yield* s.write(searchCorpus)
})

const matchIds = (result: MemoryStore.SearchResult) => sortedIds(result.hits.map((hit) => hit.record))

const describeCase = (query: string, options: MemoryQuery.SearchOptions | undefined) =>
  `${JSON.stringify(query)}${options === undefined ? "" : ` with ${JSON.stringify(options)}`}`

/** Asserts what every search result owes its caller beyond the match set. */
const expectWellFormed = (result: MemoryStore.SearchResult) => {
  expect(result.skipped).toBe(0)
  for (const hit of result.hits) expect(Number.isFinite(hit.score)).toBe(true)
  for (let i = 1; i < result.hits.length; i++) {
    expect(result.hits[i - 1]!.score).toBeGreaterThanOrEqual(result.hits[i]!.score)
  }
  expect(new Set(result.hits.map((hit) => hit.record.id)).size).toBe(result.hits.length)
}

export const tier2 = <RExtra, LE>(provide: Provide<RExtra, LE>) => {
  const categories = [...new Set(searchCases.map((c) => c.category))]
  for (const category of categories) {
    describe(category, () => {
      for (const { expected, options, query } of searchCases.filter((c) => c.category === category)) {
        it.effect(`${describeCase(query, options)} matches [${expected.join(", ")}]`, () =>
          Effect.gen(function*() {
            const s = yield* store
            yield* writeCorpus
            const result = yield* s.search(query, { ...options, limit: MemoryQuery.MAX_LIMIT })
            expect(matchIds(result)).toEqual(expected)
            expectWellFormed(result)
          }).pipe(provide))
      }
    })
  }

  describe("results", () => {
    it.effect("each hit carries the whole stored record", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeCorpus
        const result = yield* s.search("doug lisbon")
        const stored = yield* s.get(result.hits.map((hit) => hit.record.id))
        expect(result.hits.map((hit) => plain(hit.record))).toEqual(stored.records.map(plain))
        expect(result.hits.length).toBe(4)
      }).pipe(provide))

    it.effect("a limit caps the hits, taken from the match set", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeCorpus
        const all = matchIds(yield* s.search("doug"))
        for (const limit of [1, 2]) {
          const result = yield* s.search("doug", { limit })
          expect(result.hits.length).toBe(limit)
          for (const id of matchIds(result)) expect(all).toContain(id)
          expectWellFormed(result)
        }
      }).pipe(provide))

    it.effect(`without a limit, at most ${MemoryQuery.DEFAULT_SEARCH_LIMIT} hits come back`, () =>
      Effect.gen(function*() {
        const s = yield* store
        const count = MemoryQuery.DEFAULT_SEARCH_LIMIT + 5
        yield* s.write(
          Array.from({ length: count }, (_, i) => ({ content: `common word ${i}`, kind: "note" as const }))
        )
        expect((yield* s.search("common")).hits.length).toBe(MemoryQuery.DEFAULT_SEARCH_LIMIT)
        expect((yield* s.search("common", { limit: count })).hits.length).toBe(count)
      }).pipe(provide))

    it.effect("order newest: the same match set, newest first, and a limit keeps the newest", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        // The oldest record holds both words of the query, the newer ones one: by relevance it comes first.
        yield* s.write([{ id: "oldest", content: "ferry deck", kind: "note" }])
        for (const id of ["middle", "newest"]) {
          yield* TestClock.adjust("1 minute")
          yield* s.write([{ id, content: `a long note about many things, the ferry among them (${id})`, kind: "note" }])
        }
        yield* s.write([{ id: "unrelated", content: "nothing to see", kind: "note" }])
        const newest = yield* s.search("the ferry deck", { order: "newest", limit: MemoryQuery.MAX_LIMIT })
        expect(newest.hits.map((hit) => hit.record.id)).toEqual(["newest", "middle", "oldest"])
        expectWellFormed(newest)
        expect(matchIds(newest)).toEqual(matchIds(yield* s.search("the ferry deck", { limit: MemoryQuery.MAX_LIMIT })))
        const two = yield* s.search("ferry deck", { order: "newest", limit: 2 })
        expect(two.hits.map((hit) => hit.record.id)).toEqual(["newest", "middle"])
      }).pipe(provide))

    for (
      const [name, options] of [
        ["limit 0", { limit: 0 }],
        ["an unknown order", { order: "oldest" }],
        ["a malformed scope", { scopes: ["everywhere"] }],
        ["an unknown kind", { kinds: ["opinion"] }]
      ] as const
    ) {
      it.effect(`a search with ${name} fails with InvalidMemoryQuery`, () =>
        Effect.gen(function*() {
          const s = yield* store
          yield* writeCorpus
          const error = yield* failure(s.search("doug", options as MemoryQuery.SearchOptions))
          expect(error._tag).toBe("InvalidMemoryQuery")
        }).pipe(provide))
    }
  })

  describe("lifecycle", () => {
    it.effect("a superseded record is found only with includeSuperseded; its successor is found at once", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeCorpus
        yield* s.supersede("coffee", { id: "tea", content: "Doug switched to green tea", kind: "profile" })
        expect(matchIds(yield* s.search("coffee"))).toEqual([])
        expect(matchIds(yield* s.search("coffee", { includeSuperseded: true }))).toEqual(["coffee"])
        expect(matchIds(yield* s.search("coffee", { includeSuperseded: true, deliverable: true }))).toEqual([])
        expect(matchIds(yield* s.search("tea"))).toEqual(["tea"])
        expect(matchIds(yield* s.search("doug"))).toEqual(["contact-email", "profile-name", "tea"])
      }).pipe(provide))

    it.effect("deliverable search leaves out rejected and expired records", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* writeCorpus
        yield* s.setReviewState("cafe-zurich", "rejected")
        yield* s.expire("tokyo")
        expect(matchIds(yield* s.search("café 東京", { limit: 100 }))).toEqual(["cafe-zurich", "tokyo"])
        expect(matchIds(yield* s.search("café 東京", { deliverable: true }))).toEqual([])
        yield* s.setReviewState("cafe-zurich", "confirmed")
        expect(matchIds(yield* s.search("café 東京", { deliverable: true }))).toEqual(["cafe-zurich"])
      }).pipe(provide))

    it.effect("records written with a future expiry stop matching deliverable search when it passes", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        yield* s.write([{ id: "soon", content: "Temporary door code", kind: "fact", expiresInDays: 1 }])
        expect(matchIds(yield* s.search("door", { deliverable: true }))).toEqual(["soon"])
        yield* TestClock.adjust("1 day")
        expect(matchIds(yield* s.search("door", { deliverable: true }))).toEqual([])
        expect(matchIds(yield* s.search("door"))).toEqual(["soon"])
      }).pipe(provide))
  })
}
