/**
 * Query planning for keyword search, shared by every backend (in-memory, SQLite, PostgreSQL).
 *
 * A recall query is usually an operator's message: about ten distinct tokens, stopwords included.
 * Scoring every posting of "the" or "what" costs most of a search and changes almost nothing in
 * the ranking. The planner splits the distinct query tokens, by how many records hold each one,
 * into two tiers:
 *
 * - **ranked**: the selective tokens (at most {@link PlannerOptions.maxRankedTokens}, rarest
 *   first). A backend scores and ranks the records that hold at least one of them, and fetches
 *   only the top of that ranking.
 * - **tail**: the pruned tokens (frequent ones, and any beyond the bound). Records that hold only
 *   tail tokens still match — the match set is the same as without planning, as the conformance
 *   kit requires — but they rank after every ranked-tier hit, newest first, and a backend reads
 *   them only when the ranked tier has fewer hits than the limit, stopping after the limit.
 *
 * At least one token is always ranked. See decision record 0035.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as Bm25 from "./Bm25.js"
import * as Bounded from "./Bounded.js"
import { STOPWORDS } from "./internal/functionWords.js"
import type { SearchHit, SearchResult } from "./MemoryStore.js"

/**
 * When a token is pruned from the ranked tier.
 *
 * - `maxDocumentShare`: a token held by more than this share of all records is pruned (0.1: ten
 *   per cent).
 * - `minPrunedPostings`: a token held by at most this many records is never pruned for frequency:
 *   below it, scoring its postings costs less than planning saves, and small stores rank on every
 *   token.
 * - `maxRankedTokens`: the most tokens the ranked tier holds; the rarest are kept.
 * - `idfPower`: each ranked token weighs `idf^idfPower` in a record's score ({@link weightOf}): 1 is
 *   BM25's own weight; 2 weighs the query's tokens by their IDF as well as the record's, as TF-IDF's
 *   cosine does, so one rare word a record shares with the query outweighs several common ones
 *   (decision 0153).
 * - `pruneFunctionWords`: the query's function words (`PriorSessionDigest.STOPWORDS`: "does", "when",
 *   "her"…) go to the tail however rare they are, so a record ranks on the words that say what the
 *   question is about. Chat turns are short, so in a store of them such words fall under the share
 *   and, squared, outweigh a content word ("What instruments does Melanie play?" ranked "What does
 *   it mean to you?" high). A query of function words alone still ranks its rarest. Off by
 *   default: held out, the rule chooses it only with `idfPower` 1, not yet shipped (decision 0209).
 *
 * @since 0.1.0
 * @category models
 */
export const PlannerOptions = Schema.Struct({
  maxDocumentShare: Schema.Number.pipe(
    Schema.greaterThan(0),
    Schema.lessThanOrEqualTo(1),
    Schema.annotations({ message: () => "maxDocumentShare must be a share above 0 and at most 1" })
  ),
  minPrunedPostings: Schema.NonNegativeInt.annotations({
    message: () => "minPrunedPostings must be a non-negative integer"
  }),
  maxRankedTokens: Bounded.int("maxRankedTokens", 1, 1_000),
  idfPower: Bounded.number("idfPower", 0.5, 4),
  pruneFunctionWords: Schema.Boolean
}).annotations({ identifier: "PlannerOptions" })
/** @since 0.1.0 @category models */
export type PlannerOptions = typeof PlannerOptions.Type

/**
 * The defaults every backend uses. Decision 0039 weighs lower shares: they speed a question's
 * search up but prune content words a question names, and lose evidence at 100k records. The share
 * is chosen with the ranking's other parameters, leave-one-dataset-out (decision 0150): 10% ranks
 * better than 5% on every dataset measured (words like "my" in a user's questions to an assistant
 * sit between the two), and better than 20%.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: PlannerOptions = {
  maxDocumentShare: 0.1,
  minPrunedPostings: 256,
  maxRankedTokens: 16,
  idfPower: 2,
  pruneFunctionWords: false
}

/**
 * What a backend knows about its index: how many records it holds, and how many hold a token.
 * Estimates are fine (a stale cache, planner statistics): they steer cost and rank, never the
 * match set.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenStatistics {
  readonly total: number
  readonly documentFrequency: (token: string) => number
}

/**
 * A planned query: the ranked tokens (never empty when the query had tokens) and the pruned tail.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchPlan {
  readonly ranked: ReadonlyArray<string>
  /** Each ranked token's weight in a record's score, in `ranked`'s order ({@link weightOf}). */
  readonly weights: ReadonlyArray<number>
  readonly tail: ReadonlyArray<string>
}

/**
 * A ranked token's weight in a record's score: its IDF among `total` records, `frequency` of which
 * hold it (`Bm25.idf`), raised to the planner's `idfPower`. Every backend sums these weights over
 * the ranked tokens a record holds and multiplies by `Bm25.lengthNorm`.
 *
 * @since 0.1.0
 * @category planning
 */
export const weightOf = (total: number, frequency: number, options: PlannerOptions = defaultOptions): number =>
  Bm25.idf(total, frequency) ** options.idfPower

/**
 * Plans a query's distinct tokens. Pure: the same tokens and statistics give the same plan.
 *
 * @since 0.1.0
 * @category planning
 */
export const plan = (
  tokens: ReadonlyArray<string>,
  statistics: TokenStatistics,
  options: PlannerOptions = defaultOptions
): SearchPlan => {
  const distinct = [...new Set(tokens)]
  const limit = Math.max(options.minPrunedPostings, options.maxDocumentShare * statistics.total)
  const pruned = (token: string) => options.pruneFunctionWords && STOPWORDS.has(token)
  // Function words sort after every other token when pruned, so the one token always ranked is a
  // content word whenever the query has one.
  const byFrequency = distinct
    .map((token, position) => ({ token, position, frequency: statistics.documentFrequency(token), fn: pruned(token) }))
    .sort((a, b) => Number(a.fn) - Number(b.fn) || a.frequency - b.frequency || a.position - b.position)
  const ranked: Array<string> = []
  const weights: Array<number> = []
  const tail: Array<string> = []
  for (const { fn, frequency, token } of byFrequency) {
    const keep = ranked.length === 0 ||
      (!fn && frequency <= limit && ranked.length < Math.max(1, options.maxRankedTokens))
    if (keep) {
      ranked.push(token)
      weights.push(weightOf(statistics.total, frequency, options))
    } else tail.push(token)
  }
  return { ranked, weights, tail }
}

/**
 * One tier of a planned search: match records holding any `include` token and none of the
 * `exclude` tokens. The ranked tier (`rank: true`) ranks them by relevance over the `include`
 * tokens. The tail tier (`rank: false`) needs no relevance order — its records share only pruned
 * tokens with the query — and takes the newest first (listing order), so a backend can stop
 * reading after `limit` matches instead of scoring every posting of a frequent token.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tier {
  readonly include: ReadonlyArray<string>
  /** The ranked tier's token weights, in `include`'s order (the plan's `weights`); empty for the tail. */
  readonly weights: ReadonlyArray<number>
  readonly exclude: ReadonlyArray<string>
  readonly rank: boolean
}

/**
 * The tiers a plan reads in an order: for `relevance` (the default), the ranked tier over the ranked
 * tokens and, when the plan pruned any, the tail tier of the records holding only the others; for
 * `newest`, one unranked tier over every token. What {@link run} fetches, and what a backend that
 * reads the tiers itself (a search read in pages) reads. Pure.
 *
 * @since 0.1.0
 * @category planning
 */
export const tiersOf = (
  searchPlan: SearchPlan,
  order: "relevance" | "newest" | undefined
): { readonly ranked: Tier | undefined; readonly tail: Tier | undefined } =>
  order === "newest"
    ? {
      ranked: undefined,
      tail: { include: [...searchPlan.ranked, ...searchPlan.tail], weights: [], exclude: [], rank: false }
    }
    : {
      ranked: { include: searchPlan.ranked, weights: searchPlan.weights, exclude: [], rank: true },
      tail: searchPlan.tail.length === 0
        ? undefined
        : { include: searchPlan.tail, weights: [], exclude: searchPlan.ranked, rank: false }
    }

/**
 * The score a backend gives the `position`-th hit of an unranked (tail) tier: decreasing with
 * the position. {@link runTiers} then scales it below the ranked tier.
 *
 * @since 0.1.0
 * @category planning
 */
export const tailScore = (position: number): number => 1 / (1 + position)

/**
 * Runs a plan through a backend's tier query: the ranked tier first, then — only when it returned
 * fewer than `limit` hits — the tail tier (newest first) for the rest. Tail hits' scores are scaled strictly
 * below the lowest ranked-tier score (keeping their own order), so scores stay non-increasing.
 *
 * @since 0.1.0
 * @category planning
 */
export const runTiers = <E, R>(
  searchPlan: SearchPlan,
  limit: number,
  fetch: (tier: Tier, limit: number) => Effect.Effect<SearchResult, E, R>
): Effect.Effect<SearchResult, E, R> =>
  Effect.gen(function*() {
    if (searchPlan.ranked.length === 0) return { hits: [], skipped: 0 }
    const { ranked, tail } = tiersOf(searchPlan, "relevance")
    const first = yield* fetch(ranked!, limit)
    if (first.hits.length >= limit || tail === undefined) return first
    const rest = yield* fetch(tail, limit - first.hits.length)
    return { hits: [...first.hits, ...belowScores(first.hits, rest.hits)], skipped: first.skipped + rest.skipped }
  })

/**
 * Runs a search in the `newest` order: one unranked tier over every token of the plan, newest
 * first, stopping after `limit` — the same match set as {@link runTiers}, without scoring.
 *
 * @since 0.1.0
 * @category planning
 */
export const runNewest = <E, R>(
  searchPlan: SearchPlan,
  limit: number,
  fetch: (tier: Tier, limit: number) => Effect.Effect<SearchResult, E, R>
): Effect.Effect<SearchResult, E, R> =>
  searchPlan.ranked.length === 0
    ? Effect.succeed({ hits: [], skipped: 0 })
    : fetch(tiersOf(searchPlan, "newest").tail!, limit)

/**
 * Runs a plan in the order the search options ask for: {@link runTiers} for `relevance` (the
 * default), {@link runNewest} for `newest`.
 *
 * @since 0.1.0
 * @category planning
 */
export const run = <E, R>(
  searchPlan: SearchPlan,
  limit: number,
  order: "relevance" | "newest" | undefined,
  fetch: (tier: Tier, limit: number) => Effect.Effect<SearchResult, E, R>
): Effect.Effect<SearchResult, E, R> =>
  order === "newest" ? runNewest(searchPlan, limit, fetch) : runTiers(searchPlan, limit, fetch)

/**
 * `hits` rescaled strictly below the lowest score of `above`, order kept; unchanged when `above`
 * is empty: how {@link runTiers} scores the tail tier's hits after the ranked tier's (for a backend
 * that reads the tiers itself).
 *
 * @since 0.1.0
 * @category planning
 */
export const belowScores = (
  above: ReadonlyArray<SearchHit>,
  hits: ReadonlyArray<SearchHit>
): ReadonlyArray<SearchHit> => {
  if (above.length === 0) return hits
  const lowest = above[above.length - 1]!.score
  return hits.map((hit) => {
    // s / (1 + s) is in [0, 1) and increasing in s: positive scores land in [0, lowest), others in
    // [lowest - 1, lowest).
    const s = Math.max(0, hit.score)
    const share = s / (1 + s)
    return { record: hit.record, score: lowest > 0 ? lowest * share : lowest - 1 + share }
  })
}

/**
 * How hybrid search fuses its two ranked lists, by `method`:
 *
 * - `"rank"` (reciprocal rank fusion): a hit at rank r (from 1) of a list adds `weight / (k + r)`
 *   to its score. Every list gives its head the same pull, however sure or unsure it is.
 * - `"score"` (standardised scores, decision 0187): each list's scores become z-scores over the
 *   hits read from it (`(score − mean) / standard deviation`), and a hit's fused score is
 *   `lexicalWeight × z_keyword + vectorWeight × z_vector`; a hit one list lacks gets that list's
 *   lowest z (the keyword list's at score 0 or below, where a record that does not match sits).
 *   A hit counts by how far it stands above the rest of its own list: a keyword hit far above
 *   the others keeps its place, and a record the words do not match at all must stand far above
 *   the vector list's rest to pass the records they do. No rank constant, and no scale to tune:
 *   BM25's and the encoder's units cancel.
 *
 * Options:
 *
 * - `k`: `"rank"`'s rank constant (60, as in Cormack et al. 2009): larger flattens the lists' heads.
 * - `lexicalWeight`, `vectorWeight`: each list's weight; 0 leaves a list out of the ranking
 *   (its hits still match when the other list ranks them).
 * - `minSimilarity`: a vector hit enters the fusion only above this cosine similarity, so a query
 *   near nothing does not fill the results with the least far records.
 * - `candidates`: how deep each list is read before fusing: its best `max(limit, candidates)`
 *   hits. A record ranked just past the limit in both lists can then beat one only a single list
 *   holds, and the fused order of the first `limit` hits no longer depends on the limit asked
 *   for while it is at most `candidates`.
 *
 * @since 0.1.0
 * @category models
 */
export const FusionOptions = Schema.Struct({
  method: Schema.Literal("rank", "score"),
  k: Bounded.number("k", 0, 10_000),
  lexicalWeight: Bounded.number("lexicalWeight", 0, 100),
  vectorWeight: Bounded.number("vectorWeight", 0, 100),
  minSimilarity: Bounded.number("minSimilarity", -1, 1),
  candidates: Bounded.int("candidates", 0, 1_000)
}).annotations({ identifier: "FusionOptions" })
/** @since 0.1.0 @category models */
export type FusionOptions = typeof FusionOptions.Type

/**
 * The fusion defaults, chosen with the local sentence encoder's vectors on LoCoMo and BEAM by the
 * rule every held-out figure was chosen by (decisions 0151, 0187, 0220): the largest worst gain over
 * keyword-only search at R@5 and R@10, on every dataset and both ways of storing it. Standardised
 * scores, the vector list weighing 0.75 of the keyword list, each list read 100 deep, with the
 * query embedded as the statement it asks about (`Embeddings.queryText`, decision 0220): worst gain
 * +3.0 points on LoCoMo, BEAM 128K and BEAM 500K, where decision 0187's 0.3 gains +1.4. `k` is reciprocal
 * rank fusion's, kept for `method: "rank"`. The similarity floor stays at decision 0054's 0, which
 * suits any model. Another model's scores spread differently: measure with
 * `npm run bench -- recall`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultFusion: FusionOptions = {
  method: "score",
  k: 10,
  lexicalWeight: 1,
  vectorWeight: 0.75,
  minSimilarity: 0,
  candidates: 100
}

/**
 * A search's own tuning, carried by its options (`MemoryQuery.SearchOptions`): the planner's
 * ({@link PlannerOptions}), the hybrid fusion's ({@link FusionOptions}) and the keyword ranking's
 * (`Bm25.Parameters`) fields this search sets; every field left out is the store's default
 * ({@link resolve}). Decoded with the rest of the options, so a bad value fails the search naming
 * the field. Decision 0165: tuning is an argument, not a service in context.
 *
 * @since 0.1.0
 * @category models
 */
export const SearchTuning = Schema.Struct({
  plan: Schema.optional(Schema.partialWith(PlannerOptions, { exact: true })),
  fusion: Schema.optional(Schema.partialWith(FusionOptions, { exact: true })),
  ranking: Schema.optional(Schema.partialWith(Bm25.Parameters, { exact: true }))
})
/** @since 0.1.0 @category models */
export type SearchTuning = typeof SearchTuning.Type

/**
 * The tuning one search runs with, every field set.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedTuning {
  readonly plan: PlannerOptions
  readonly fusion: FusionOptions
  readonly ranking: Bm25.Parameters
}

/**
 * The one default of each tuning field: {@link defaultOptions}, {@link defaultFusion} and
 * `Bm25.defaultParameters`.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultTuning: ResolvedTuning = {
  plan: defaultOptions,
  fusion: defaultFusion,
  ranking: Bm25.defaultParameters
}

/**
 * The tuning a search runs with: the call's fields (`options.plan`, `options.fusion`,
 * `options.ranking`) over the store's `defaults` ({@link defaultTuning} unless the store was built
 * with others). Every backend reads its search's tuning through this one function. Pure.
 *
 * @example
 * ```ts
 * import { SearchPlan } from "@engram/core"
 *
 * // Rank on every token half the records or fewer hold, for this search only.
 * const tuning = SearchPlan.resolve({ plan: { maxDocumentShare: 0.5 } })
 * ```
 *
 * @since 0.1.0
 * @category planning
 */
export const resolve = (
  options: SearchTuning | undefined,
  defaults: ResolvedTuning = defaultTuning
): ResolvedTuning => ({
  plan: options?.plan === undefined ? defaults.plan : { ...defaults.plan, ...options.plan },
  fusion: options?.fusion === undefined ? defaults.fusion : { ...defaults.fusion, ...options.fusion },
  ranking: options?.ranking === undefined ? defaults.ranking : { ...defaults.ranking, ...options.ranking }
})

/**
 * A search's tuning over a store's own defaults, field by field: what `options` sets wins, what it
 * leaves out is `defaults`'. The store layers' `search` option reaches every search through this
 * (`MemoryStore.withSearchDefaults`); {@link resolve} then fills what both leave out. Pure.
 *
 * @since 0.1.0
 * @category planning
 */
export const withDefaults = (options: SearchTuning | undefined, defaults: SearchTuning): SearchTuning => ({
  plan: { ...defaults.plan, ...options?.plan },
  fusion: { ...defaults.fusion, ...options?.fusion },
  ranking: { ...defaults.ranking, ...options?.ranking }
})

/** Each hit's z-score over `scores`, and the z a hit absent from the list gets (that of `absent`). */
const standardised = (scores: ReadonlyArray<number>, absent: number) => {
  const mean = scores.reduce((a, b) => a + b, 0) / Math.max(1, scores.length)
  const deviation = Math.sqrt(scores.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, scores.length))
  // A list of one score, or of equal scores, says nothing about which hit is better: z 0 for all.
  const z = (x: number) => (deviation > 0 ? (x - mean) / deviation : 0)
  return { z, absent: z(absent) }
}

/**
 * Fuses a lexical and a vector ranking (each best first) by `options.method` ({@link FusionOptions})
 * and keeps the best `limit`. Ties go to the better single rank, then to the id. A record in both
 * lists appears once, with the lexical list's record. Pure.
 *
 * @since 0.1.0
 * @category planning
 */
export const fuse = (
  lexical: ReadonlyArray<SearchHit>,
  vector: ReadonlyArray<SearchHit>,
  limit: number,
  options: FusionOptions = defaultFusion
): ReadonlyArray<SearchHit> => {
  const fused = new Map<string, { record: SearchHit["record"]; score: number; best: number }>()
  const add = (hits: ReadonlyArray<SearchHit>, share: (hit: SearchHit, rank: number) => number, absent: number) => {
    const seen = new Set<string>()
    hits.forEach((hit, index) => {
      const rank = index + 1
      seen.add(hit.record.id)
      const entry = fused.get(hit.record.id)
      if (entry === undefined) fused.set(hit.record.id, { record: hit.record, score: share(hit, rank), best: rank })
      else {
        entry.score += share(hit, rank)
        entry.best = Math.min(entry.best, rank)
      }
    })
    if (absent !== 0) { for (const [id, entry] of fused) if (!seen.has(id)) entry.score += absent }
  }
  if (options.method === "score") {
    // The lexical list first, so its absent share reaches only vector-only hits, added after it.
    const lexicalZ = standardised(lexical.map((hit) => hit.score), Math.min(0, ...lexical.map((hit) => hit.score)))
    const vectorZ = standardised(vector.map((hit) => hit.score), vector[vector.length - 1]?.score ?? 0)
    add(lexical, (hit) => options.lexicalWeight * lexicalZ.z(hit.score), 0)
    const lexicalAbsent = options.lexicalWeight * lexicalZ.absent
    const lexicalIds = new Set(lexical.map((hit) => hit.record.id))
    add(
      vector,
      (hit) => (lexicalIds.has(hit.record.id) ? 0 : lexicalAbsent) + options.vectorWeight * vectorZ.z(hit.score),
      options.vectorWeight * vectorZ.absent
    )
  } else {
    add(lexical, (_, rank) => options.lexicalWeight / (options.k + rank), 0)
    add(vector, (_, rank) => options.vectorWeight / (options.k + rank), 0)
  }
  return [...fused.values()]
    .sort((a, b) =>
      b.score - a.score || a.best - b.best || (a.record.id < b.record.id ? -1 : a.record.id > b.record.id ? 1 : 0)
    )
    .slice(0, limit)
    .map(({ record, score }) => ({ record, score }))
}
