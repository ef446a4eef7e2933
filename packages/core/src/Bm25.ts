/**
 * The one relevance score every backend ranks keyword matches by (in-memory, SQLite,
 * PostgreSQL): BM25 over the distinct tokens a record shares with the query.
 *
 * A record's score is `lengthNorm(record) × Σ idf(token)` over the query's ranked tokens it
 * holds, where
 *
 * - `idf(token) = ln(1 + (N − df + 0.5) / (df + 0.5))` (N records, df of them holding the token:
 *   never negative, so a token held by most records still counts a little), and
 * - `lengthNorm = (k1 + 1) / (1 + k1 × (1 − b + b × length / averageLength))`, `length` being the
 *   number of distinct tokens of the record.
 *
 * Each token counts once per record (term frequency 1): a PostgreSQL `tsvector` built from an
 * array keeps no positions, and at the measured `k1` a repeat adds almost nothing. `k1` and `b`
 * are chosen by measurement on LoCoMo (decision 0051); SQLite computes this score in SQL from
 * FTS5's match sets instead of FTS5's built-in `bm25()`, whose `k1 = 1.2, b = 0.75` are fixed.
 * Scores are rounded to {@link SCORE_DIGITS} decimals on every backend, so floating-point
 * summation order never reorders equal scores differently on two backends.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as ErrorClass from "./ErrorClass.js"

/**
 * BM25's two parameters: `k1` (how fast a longer record's advantage saturates; with term
 * frequency 1 it only sets how much length matters together with `b`) and `b` (how much a record's
 * length normalises its score: 0 none, 1 fully).
 *
 * @since 0.1.0
 * @category models
 */
export const Parameters = Schema.Struct({
  k1: Schema.Number.pipe(
    Schema.between(0, 10),
    Schema.annotations({ message: () => "k1 must be a number from 0 to 10" })
  ),
  b: Schema.Number.pipe(
    Schema.between(0, 1),
    Schema.annotations({ message: () => "b must be a number from 0 to 1" })
  )
}).annotations({ identifier: "Bm25Parameters" })
/** @since 0.1.0 @category models */
export type Parameters = typeof Parameters.Type

/**
 * The measured defaults (decision 0051): tuned on half of LoCoMo's conversations, reported on the
 * other half in `docs/benchmarks.md`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultParameters: Parameters = { k1: 0.3, b: 0.25 }

/**
 * Decimals a score is rounded to on every backend.
 *
 * @since 0.1.0
 * @category constants
 */
export const SCORE_DIGITS = 9

/**
 * The BM25 parameters a search runs with. A `Context.Reference`: every backend reads it when a
 * search runs and gets {@link defaultParameters} unless a caller provided others ({@link layer}).
 *
 * @since 0.1.0
 * @category tags
 */
export class Ranking extends Context.Reference<Ranking>()("@engram/core/Bm25Ranking", {
  defaultValue: (): Parameters => defaultParameters
}) {}

/**
 * BM25 parameters that failed to decode; `problem` names the field.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidBm25Parameters
  extends Schema.TaggedError<InvalidBm25Parameters>()("InvalidBm25Parameters", { problem: Schema.String })
{
  override get message() {
    return `invalid BM25 parameters: ${this.problem}`
  }
  get errorClass(): ErrorClass.ErrorClass {
    return "Misconfigured"
  }
}

/**
 * Provides BM25 parameters: the fields given replace the defaults, after decoding.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (parameters: Partial<Parameters>): Layer.Layer<Ranking, InvalidBm25Parameters> =>
  Layer.effect(
    Ranking,
    Schema.decodeUnknown(Parameters)({ ...defaultParameters, ...parameters }, { errors: "first" }).pipe(
      Effect.mapError((error) =>
        new InvalidBm25Parameters({ problem: ParseResult.TreeFormatter.formatErrorSync(error) })
      )
    )
  )

/**
 * A token's inverse document frequency among `total` records, `frequency` of which hold it.
 *
 * @since 0.1.0
 * @category scoring
 */
export const idf = (total: number, frequency: number): number => {
  const n = Math.max(1, total)
  const df = Math.min(n, Math.max(0, frequency))
  return Math.log(1 + (n - df + 0.5) / (df + 0.5))
}

/**
 * A record's length normalisation: multiplies the sum of its matched tokens' IDF.
 *
 * @since 0.1.0
 * @category scoring
 */
export const lengthNorm = (length: number, averageLength: number, parameters: Parameters): number =>
  (parameters.k1 + 1) /
  (1 + parameters.k1 * (1 - parameters.b + (parameters.b * length) / Math.max(averageLength, 1e-9)))

/**
 * A score rounded to {@link SCORE_DIGITS} decimals.
 *
 * @since 0.1.0
 * @category scoring
 */
export const rounded = (score: number): number => {
  const scale = 10 ** SCORE_DIGITS
  return Math.round(score * scale) / scale
}
