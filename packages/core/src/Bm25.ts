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
 * array keeps no positions. With term frequency 1, `k1` and `b` together set one thing: how fast a
 * record's score falls with its length, through the length (a multiple of the average) at which
 * it halves, `(1 + k1 (1 − b)) / (k1 b)`. Every parameter is chosen leave-one-dataset-out on
 * conversation benchmarks of different shapes (decision 0150, after 0051); SQLite computes this
 * score in SQL from FTS5's match sets instead of FTS5's built-in `bm25()`, whose `k1 = 1.2,
 * b = 0.75` are fixed.
 *
 * Conversation context: a record written from a conversation (`MemoryRecord.position`) also gets
 * `neighbourWeight ×` the scores of the matching records up to `neighbourWindow` turns before and
 * after it in the same thread and scope ({@link withNeighbours}): the evidence for a question
 * usually sits in a run of turns, and a turn whose neighbours match is more likely part of it. An
 * episode written without a position has its place in its scope's write order instead, a thread of
 * its own (`MemoryQuery.WRITE_ORDER_THREAD`, decision 0233): a backend hands that place to
 * {@link Scored} as its `position`, so the same window and weight apply however the turns were written.
 * Only records that match themselves are ranked (the match set stays the records holding a query
 * token, as the conformance kit requires); measured, letting neighbours' tokens alone make a record
 * match ranks the same (decision 0050).
 *
 * Scores are rounded to {@link SCORE_DIGITS} decimals on every backend, so floating-point
 * summation order never reorders equal scores differently on two backends.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as Bounded from "./Bounded.js"
import * as TopK from "./internal/topK.js"
import type { ConversationPosition } from "./MemoryRecord.js"

/**
 * The ranking's parameters: BM25's `k1` (with term frequency 1 it only sets, together with `b`,
 * how much length matters) and `b` (how much a record's length normalises its score: 0 none, 1
 * fully), and the conversation context: `neighbourWindow` (how many turns before and after a
 * record count as its neighbours; 0 turns it off) and `neighbourWeight` (the share of a
 * neighbour's score a record gains).
 *
 * @since 0.1.0
 * @category models
 */
export const Parameters = Schema.Struct({
  k1: Bounded.number("k1", 0, 10),
  b: Bounded.number("b", 0, 1),
  neighbourWindow: Bounded.int("neighbourWindow", 0, 10),
  neighbourWeight: Bounded.number("neighbourWeight", 0, 1)
}).annotations({ identifier: "Bm25Parameters" })
/** @since 0.1.0 @category models */
export type Parameters = typeof Parameters.Type

/**
 * The defaults, chosen on LoCoMo and BEAM's 128K and 500K conversations together by the rule every
 * held-out figure in `docs/benchmarks.md` was chosen by (decision 0150): `b` at BM25's customary
 * 0.75 and `k1 = 0.8`, so a record twice the average length scores half as much as a short one
 * holding the same words; one turn of conversation context either side, at 0.2 of its score.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultParameters: Parameters = { k1: 0.8, b: 0.75, neighbourWindow: 1, neighbourWeight: 0.2 }

/**
 * Decimals a score is rounded to on every backend.
 *
 * @since 0.1.0
 * @category constants
 */
export const SCORE_DIGITS = 9

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

/**
 * One scored match, as {@link withNeighbours} reads it: its BM25 score, and where it sat in a
 * conversation if it did — its written position, or its place in its scope's write order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Scored {
  readonly scope: string
  readonly position?: ConversationPosition | undefined
  readonly score: number
}

const positionKey = (scope: string, thread: string, turn: number) => `${scope}\u0000${thread}\u0000${turn}`

/**
 * The turn offsets a record's neighbours sit at, in the order their scores are summed:
 * `−neighbourWindow … −1, 1 … neighbourWindow`. A backend that reads neighbour scores itself
 * (SQLite, PostgreSQL) reads them in this order and hands them to {@link contextual}.
 *
 * @since 0.1.0
 * @category scoring
 */
export const neighbourOffsets = (parameters: Parameters): Array<number> => {
  const offsets: Array<number> = []
  for (let offset = -parameters.neighbourWindow; offset <= parameters.neighbourWindow; offset++) {
    if (offset !== 0) offsets.push(offset)
  }
  return offsets
}

/**
 * A match's final score from its own score and its neighbours' (one per
 * {@link neighbourOffsets} entry, `undefined` where no match sits): `own` when the record has no
 * conversation position or the context is off, else `rounded(own + neighbourWeight × Σ)`, summed
 * in offset order. {@link withNeighbours} and every backend's bounded ranking compute it here, so
 * the two cannot drift apart.
 *
 * @since 0.1.0
 * @category scoring
 */
export const contextual = (
  own: number,
  positioned: boolean,
  neighbours: ReadonlyArray<number | undefined>,
  parameters: Parameters
): number => {
  if (!positioned || parameters.neighbourWindow === 0 || parameters.neighbourWeight === 0) return own
  let context = 0
  for (const score of neighbours) context += score ?? 0
  return rounded(own + parameters.neighbourWeight * context)
}

/**
 * The final scores of a ranked tier's matches, in input order: each match's own BM25 score plus
 * `neighbourWeight ×` the own scores of the matches within `neighbourWindow` turns of it in the
 * same scope and thread, rounded ({@link contextual}). Where several matches share one position,
 * the best of their scores is that position's (so input order never matters). Pure; the same on
 * every backend.
 *
 * @since 0.1.0
 * @category scoring
 */
export const withNeighbours = (matches: ReadonlyArray<Scored>, parameters: Parameters): Array<number> => {
  if (parameters.neighbourWindow === 0 || parameters.neighbourWeight === 0) return matches.map((m) => m.score)
  return neighbourCandidates(matches, parameters).map(({ match, neighbours }) =>
    contextual(match.score, match.position !== undefined, neighbours, parameters)
  )
}

/**
 * How far below the `k`-th best unrounded contextual score a match may sit and still belong to
 * the top `k` once scores are {@link rounded} (two rounding steps of `10^−SCORE_DIGITS`, with
 * room for a backend's own summation order): a bounded ranking keeps every match within it.
 *
 * @since 0.1.0
 * @category constants
 */
export const BOUND_MARGIN = 4 * 10 ** -SCORE_DIGITS

/**
 * A ranked tier's match as a backend reads it before fetching records: its own score, scope,
 * position, creation time and id (the tie-breaks of the ranking order).
 *
 * @since 0.1.0
 * @category models
 */
export interface Match extends Scored {
  readonly id: string
  readonly createdAtMillis: number
}

/**
 * Ranks a tier's matches: final scores by {@link withNeighbours}, best first, then newest, then
 * id ascending (code-unit order) — the order every backend returns.
 *
 * @since 0.1.0
 * @category scoring
 */
export const rank = <M extends Match>(
  matches: ReadonlyArray<M>,
  parameters: Parameters
): Array<{ readonly match: M; readonly score: number }> => {
  const finals = withNeighbours(matches, parameters)
  return matches.map((match, i) => ({ match, score: finals[i]! })).sort(rankOrder)
}

/**
 * A match read by a bounded ranking: its neighbours' own scores, one per
 * {@link neighbourOffsets} entry (`undefined` where none matches; all `undefined` for a record
 * without a conversation position).
 *
 * @since 0.1.0
 * @category models
 */
export interface Candidate<M extends Match> {
  readonly match: M
  readonly neighbours: ReadonlyArray<number | undefined>
}

/**
 * The unrounded contextual score a bounded ranking orders matches by before it keeps the top:
 * `own + neighbourWeight × Σ neighbours`. {@link contextual} is this value rounded, and rounding
 * never moves a score by more than half of {@link BOUND_MARGIN}, so every match of the top `k`
 * sits within {@link BOUND_MARGIN} of the `k`-th best bound.
 *
 * @since 0.1.0
 * @category scoring
 */
export const bound = (own: number, neighbours: ReadonlyArray<number | undefined>, parameters: Parameters): number => {
  let context = 0
  for (const score of neighbours) context += score ?? 0
  return own + parameters.neighbourWeight * context
}

/**
 * Ranks the candidates a bounded ranking kept: each one's final score by {@link contextual},
 * in {@link rank}'s order.
 *
 * @since 0.1.0
 * @category scoring
 */
export const rankCandidates = <M extends Match>(
  candidates: ReadonlyArray<Candidate<M>>,
  parameters: Parameters
): Array<{ readonly match: M; readonly score: number }> =>
  candidates.map(({ match, neighbours }) => ({
    match,
    score: contextual(match.score, match.position !== undefined, neighbours, parameters)
  })).sort(rankOrder)

const rankOrder = <M extends Match>(
  a: { readonly match: M; readonly score: number },
  b: { readonly match: M; readonly score: number }
) =>
  b.score - a.score || b.match.createdAtMillis - a.match.createdAtMillis ||
  (a.match.id < b.match.id ? -1 : a.match.id > b.match.id ? 1 : 0)

/**
 * The best `k` of a tier's matches in {@link rank}'s order, without ranking them all — the
 * scheme SQLite and PostgreSQL run in SQL (decision 0083): every match's {@link bound}, the `k`-th
 * best bound, then only the matches within {@link BOUND_MARGIN} of it ranked exactly
 * ({@link rankCandidates}). Equal to `rank(matches).slice(0, k)`: a match of the top `k` has a
 * final score at least the `k`-th best final score, hence a bound within the margin of the
 * `k`-th best bound.
 *
 * @since 0.1.0
 * @category scoring
 */
export const topK = <M extends Match>(
  matches: ReadonlyArray<M>,
  k: number,
  parameters: Parameters
): Array<{ readonly match: M; readonly score: number }> => {
  if (k <= 0 || matches.length === 0) return []
  const candidates = neighbourCandidates(matches, parameters)
  const bounds = candidates.map(({ neighbours, match }) => bound(match.score, neighbours, parameters))
  const kth = k >= bounds.length ? -Infinity : TopK.select(bounds, k, (a, b) => b - a)[k - 1]!
  return rankCandidates(candidates.filter((_, i) => bounds[i]! >= kth - BOUND_MARGIN), parameters).slice(0, k)
}

/** Each match with its neighbours' own scores (the best one per position), in input order. */
const neighbourCandidates = <M extends Scored>(
  matches: ReadonlyArray<M>,
  parameters: Parameters
): Array<{ readonly match: M; readonly neighbours: ReadonlyArray<number | undefined> }> => {
  const offsets = neighbourOffsets(parameters)
  const byPosition = new Map<string, number>()
  for (const m of matches) {
    if (m.position === undefined) continue
    const key = positionKey(m.scope, m.position.thread, m.position.turn)
    const held = byPosition.get(key)
    if (held === undefined || m.score > held) byPosition.set(key, m.score)
  }
  return matches.map((match) => {
    const position = match.position
    return {
      match,
      neighbours: position === undefined
        ? offsets.map(() => undefined)
        : offsets.map((offset) => byPosition.get(positionKey(match.scope, position.thread, position.turn + offset)))
    }
  })
}
