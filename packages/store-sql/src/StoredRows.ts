/**
 * Reading stored rows one by one: a row that fails to decode is set aside with the reason, the
 * rest stand. Every SQL backend reads this way, so a damaged row degrades that row, not the query.
 * And the one way a row's time is stored: epoch milliseconds ({@link epochMillis}).
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"

/**
 * A row that could not be read: its key (an id, a sequence number) and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface Skipped<K> {
  readonly key: K
  readonly reason: string
}

/**
 * The rows that decoded, in order, and the ones that did not.
 *
 * @since 0.1.0
 * @category models
 */
export interface Decoded<A, K> {
  readonly values: Array<A>
  readonly skipped: Array<Skipped<K>>
}

/**
 * Decodes each row with `decode`; a row that fails is recorded under `keyOf(row)` with its reason.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeEach = <R, A, K>(
  rows: ReadonlyArray<R>,
  decode: (row: R) => Either.Either<A, string>,
  keyOf: (row: R) => K
): Decoded<A, K> => {
  const values: Array<A> = []
  const skipped: Array<Skipped<K>> = []
  for (const row of rows) {
    const decoded = decode(row)
    if (Either.isRight(decoded)) values.push(decoded.right)
    else skipped.push({ key: keyOf(row), reason: decoded.left })
  }
  return { values, skipped }
}

/**
 * Logs a warning `message` for each skipped row (annotated by `annotate`) and, when a counter is
 * given, counts them on it. Does nothing when no row was skipped.
 *
 * @since 0.1.0
 * @category logging
 */
export const reportSkipped = <K>(
  skipped: ReadonlyArray<Skipped<K>>,
  message: string,
  annotate: (row: Skipped<K>) => Record<string, unknown>,
  counter?: Metric.Metric.Counter<number>
): Effect.Effect<void> =>
  skipped.length === 0 ? Effect.void : Effect.zipRight(
    Effect.forEach(skipped, (row) => Effect.logWarning(message).pipe(Effect.annotateLogs(annotate(row))), {
      discard: true
    }),
    counter === undefined ? Effect.void : Metric.incrementBy(counter, skipped.length)
  )

/**
 * A session's stored rows decoded in `seq` order: each one that fails to decode is logged with its
 * session and `seq` ("skipped a stored <what> that failed to decode") and counted, and the rest
 * are read — what every session store's `load` and `loadExtractions` do.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeSessionRows = <R extends { readonly seq: number }, A>(
  sessionId: string,
  rows: ReadonlyArray<R>,
  decode: (row: R) => Either.Either<A, string>,
  what: string
): Effect.Effect<{ readonly values: ReadonlyArray<A>; readonly skipped: number }> => {
  const { skipped, values } = decodeEach(rows, decode, (row) => row.seq)
  return Effect.as(
    reportSkipped(
      skipped,
      `skipped a stored ${what} that failed to decode`,
      ({ key, reason }) => ({ sessionId, seq: key, reason })
    ),
    { values, skipped: skipped.length }
  )
}

/**
 * An encoded time (ISO 8601 text, as the schemas encode a `DateTime.Utc`) as the epoch
 * milliseconds a SQL store's time column holds.
 *
 * @since 0.1.0
 * @category encoding
 */
export const epochMillis = (iso: string): number => DateTime.toEpochMillis(DateTime.unsafeMake(iso))
