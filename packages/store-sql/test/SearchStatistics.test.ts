import { describe, expect, it } from "@effect/vitest"
import { SearchStatistics } from "@engram/store-sql"
import { Effect, FastCheck as fc, TestClock } from "effect"

/**
 * A store whose figures a test changes, counting the reads the cache makes; with `combined`, it
 * also reads the size and frequencies in one read (`sizeAndFrequencies`).
 */
const fakeStore = ({ combined = false } = {}) => {
  const store = {
    total: 100,
    length: 1_000,
    frequencies: new Map<string, number>(),
    sizeReads: 0,
    lookups: [] as Array<string>,
    combinedLookups: [] as Array<ReadonlyArray<string>>
  }
  const size = Effect.sync(() => ({ total: store.total, length: store.length }))
  const frequencies = (tokens: ReadonlyArray<string>) =>
    Effect.sync(() =>
      tokens.flatMap((t) => (store.frequencies.has(t) ? [[t, store.frequencies.get(t)!] as const] : []))
    )
  const source: SearchStatistics.Source<never, never> = {
    size: Effect.tap(size, () => {
      store.sizeReads++
    }),
    frequencies: (tokens) => {
      store.lookups.push(...tokens)
      return frequencies(tokens)
    },
    ...(combined
      ? {
        sizeAndFrequencies: (tokens: ReadonlyArray<string>) => {
          store.combinedLookups.push(tokens)
          return Effect.all({ size, frequencies: frequencies(tokens) })
        }
      }
      : {})
  }
  return { store, cache: SearchStatistics.cached(source) }
}

describe("SearchStatistics", () => {
  it.prop(
    "frequencies go stale exactly past the drift, or past the cache bound, or when never filled",
    [
      fc.integer({ min: -1, max: 1_000_000 }),
      fc.integer({ min: 0, max: 1_000_000 }),
      fc.integer({ min: 0, max: 60_000 })
    ],
    ([filledAt, total, size]) => {
      const drifted = Math.abs(total - filledAt) > SearchStatistics.FREQUENCY_DRIFT * Math.max(filledAt, 1)
      expect(SearchStatistics.frequenciesStale(filledAt, total, size)).toBe(
        filledAt < 0 || drifted || size > SearchStatistics.FREQUENCY_CACHE
      )
    }
  )

  it.prop(
    "the size goes stale after its time to live, and when the clock goes back",
    [fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: -5_000, max: 5_000 })],
    ([readAt, delta]) => {
      expect(SearchStatistics.sizeStale(readAt, readAt + delta)).toBe(
        delta < 0 || delta >= SearchStatistics.TOTAL_TTL_MILLIS
      )
    }
  )

  it.effect("reads each token's frequency once while the store stays near its size; empties past the drift", () =>
    Effect.gen(function*() {
      const { cache, store } = fakeStore()
      store.frequencies.set("deploy", 7)
      const first = yield* cache.statistics(["deploy", "deploy", "absent"])
      expect(first.total).toBe(100)
      expect(first.averageLength).toBe(10)
      expect(first.documentFrequency("deploy")).toBe(7)
      expect(first.documentFrequency("absent")).toBe(0)
      expect(store.lookups).toEqual(["deploy", "absent"])
      // Cached: no lookup, no size read within the time to live.
      store.frequencies.set("deploy", 8)
      expect((yield* cache.statistics(["deploy"])).documentFrequency("deploy")).toBe(7)
      expect(store.sizeReads).toBe(1)
      // The store's own writes count at once; within the drift the cache stays.
      cache.written(10, 100)
      expect((yield* cache.statistics(["deploy"])).total).toBe(110)
      expect(store.lookups).toHaveLength(2)
      // Past the drift (another 1 record: 11 > 10% of 100), the cache refills.
      cache.written(1, 10)
      expect((yield* cache.statistics(["deploy"])).documentFrequency("deploy")).toBe(8)
      expect(store.lookups).toEqual(["deploy", "absent", "deploy"])
      // Other connections' writes show after the time to live.
      store.total = 500
      yield* TestClock.adjust(SearchStatistics.TOTAL_TTL_MILLIS)
      expect((yield* cache.statistics([])).total).toBe(500)
      expect(store.sizeReads).toBe(2)
    }))

  it.effect("reads the size and missing frequencies in one read when both are due, where the source can", () =>
    Effect.gen(function*() {
      const { cache, store } = fakeStore({ combined: true })
      store.frequencies.set("deploy", 7)
      const first = yield* cache.statistics(["deploy", "absent"])
      expect([first.total, first.documentFrequency("deploy"), first.documentFrequency("absent")]).toEqual([100, 7, 0])
      expect(store.combinedLookups).toEqual([["deploy", "absent"]])
      expect([store.sizeReads, store.lookups]).toEqual([0, []])
      // Within the time to live a new token is a frequency read alone.
      yield* cache.statistics(["deploy", "rollback"])
      expect(store.lookups).toEqual(["rollback"])
      // Size due, every token cached: the size alone.
      yield* TestClock.adjust(SearchStatistics.TOTAL_TTL_MILLIS)
      yield* cache.statistics(["deploy"])
      expect(store.sizeReads).toBe(1)
      // Size due, the size moved past the drift: the cache empties but keeps what the combined
      // read brought, and reads the rest.
      store.total = 200
      store.frequencies.set("deploy", 9)
      store.frequencies.set("canary", 3)
      yield* TestClock.adjust(SearchStatistics.TOTAL_TTL_MILLIS)
      const moved = yield* cache.statistics(["canary", "deploy"])
      expect([moved.total, moved.documentFrequency("canary"), moved.documentFrequency("deploy")]).toEqual([200, 3, 9])
      expect(store.combinedLookups).toEqual([["deploy", "absent"], ["canary"]])
      expect(store.lookups).toEqual(["rollback", "deploy"])
    }))
})
