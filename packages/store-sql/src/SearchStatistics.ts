/**
 * The figures a store plans and ranks keyword search by — its size (records and their summed BM25
 * lengths) and each query token's document frequency — read from the store and cached by one
 * policy on every backend that reads them from a database (SQLite, PostgreSQL):
 *
 * - the size is reused for {@link TOTAL_TTL_MILLIS} (other connections' writes show within a
 *   second); a store's own writes are counted at once ({@link Cache.written});
 * - document frequencies are cached until the size has moved by {@link FREQUENCY_DRIFT} of what it
 *   was when the cache was filled, or the cache holds more than {@link FREQUENCY_CACHE} tokens;
 *   then the cache empties and refills from the figures read next;
 * - when the size is due and tokens are missing, a source that can read both at once
 *   (`sizeAndFrequencies`) is asked once (decision 0210).
 *
 * Frequencies steer rank and cost, never the match set, so a slightly stale figure is fine.
 *
 * @since 0.1.0
 */
import type { SearchPlan } from "@engram/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"

/**
 * How long the store's size is reused before it is read again, in milliseconds.
 *
 * @since 0.1.0
 * @category constants
 */
export const TOTAL_TTL_MILLIS = 1_000

/**
 * Cached document frequencies are dropped once the store's size has changed by this share since.
 *
 * @since 0.1.0
 * @category constants
 */
export const FREQUENCY_DRIFT = 0.1

/**
 * The most document frequencies kept in the cache.
 *
 * @since 0.1.0
 * @category constants
 */
export const FREQUENCY_CACHE = 50_000

/**
 * The planner's statistics and the mean BM25 length of a record.
 *
 * @since 0.1.0
 * @category models
 */
export interface Statistics extends SearchPlan.TokenStatistics {
  readonly averageLength: number
}

/**
 * Where the figures are read from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Source<E, R> {
  /** The records and their summed BM25 lengths. */
  readonly size: Effect.Effect<{ readonly total: number; readonly length: number }, E, R>
  /** The document frequency of each token asked for (a token no record holds may be left out: 0). */
  readonly frequencies: (
    tokens: ReadonlyArray<string>
  ) => Effect.Effect<Iterable<readonly [token: string, frequency: number]>, E, R>
  /**
   * Both in one read, for a source where each read is a round trip to a server (PostgreSQL): used
   * when the size is due and tokens are missing, so a search waits on one read instead of two.
   */
  readonly sizeAndFrequencies?: (tokens: ReadonlyArray<string>) => Effect.Effect<
    {
      readonly size: { readonly total: number; readonly length: number }
      readonly frequencies: Iterable<readonly [token: string, frequency: number]>
    },
    E,
    R
  >
}

/**
 * A cached view of a {@link Source}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Cache<E, R> {
  /** Records this store wrote, with their summed BM25 lengths: counted at once. */
  readonly written: (count: number, length: number) => void
  /** The statistics for `tokens`: their frequencies read only when not cached. */
  readonly statistics: (tokens: ReadonlyArray<string>) => Effect.Effect<Statistics, E, R>
}

/**
 * True when a frequency cache filled at size `filledAt` (negative: never filled) must empty at
 * size `total`, holding `size` tokens.
 *
 * @since 0.1.0
 * @category predicates
 */
export const frequenciesStale = (filledAt: number, total: number, size: number): boolean =>
  filledAt < 0 || Math.abs(total - filledAt) > FREQUENCY_DRIFT * Math.max(filledAt, 1) || size > FREQUENCY_CACHE

/**
 * True when a size read at `readAt` must be read again at `now` (also when the clock went back).
 *
 * @since 0.1.0
 * @category predicates
 */
export const sizeStale = (readAt: number, now: number): boolean => now - readAt >= TOTAL_TTL_MILLIS || readAt > now

/**
 * Caches `source` by the policy above.
 *
 * @since 0.1.0
 * @category constructors
 */
export const cached = <E, R>(source: Source<E, R>): Cache<E, R> => {
  const cache = new Map<string, number>()
  let filledAt = -1
  let total = 0
  let totalLength = 0
  let readAt = Number.NEGATIVE_INFINITY
  return {
    written: (count, length) => {
      total += count
      totalLength += length
    },
    statistics: (tokens) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const distinct = [...new Set(tokens)]
        const missingNow = () => distinct.filter((token) => !cache.has(token))
        const remember = (asked: ReadonlyArray<string>, read: Iterable<readonly [string, number]>) => {
          for (const token of asked) cache.set(token, 0)
          for (const [token, frequency] of read) cache.set(token, frequency)
        }
        let readWithSize: { asked: ReadonlyArray<string>; read: Iterable<readonly [string, number]> } | undefined
        if (sizeStale(readAt, now)) {
          const asked = missingNow()
          const both = asked.length > 0 && source.sizeAndFrequencies !== undefined
            ? yield* source.sizeAndFrequencies(asked)
            : { size: yield* source.size, frequencies: undefined }
          total = both.size.total
          totalLength = both.size.length
          readAt = now
          if (both.frequencies !== undefined) readWithSize = { asked, read: both.frequencies }
        }
        if (frequenciesStale(filledAt, total, cache.size)) {
          cache.clear()
          filledAt = total
        }
        // Figures read with the size are current whether or not the cache just emptied.
        if (readWithSize !== undefined) remember(readWithSize.asked, readWithSize.read)
        const missing = missingNow()
        if (missing.length > 0) remember(missing, yield* source.frequencies(missing))
        const snapshot = total
        return {
          total: snapshot,
          averageLength: snapshot === 0 ? 0 : totalLength / snapshot,
          documentFrequency: (token: string) => cache.get(token) ?? 0
        } satisfies Statistics
      })
  }
}
