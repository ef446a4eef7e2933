/**
 * `MemoryStore.search`'s keyword ranking replayed in process, for choosing its parameters over a
 * grid: the same tokens (`SearchTokenizer`), the same plan (`SearchPlan.plan` over the dataset's
 * exact statistics), the same own scores (the plan's token weights summed in its order, times
 * `Bm25.lengthNorm`, rounded), the same conversation context (`Bm25.contextual`: by thread and turn
 * for records stored with positions, by the scope's write order for episodes stored without, decision
 * 0233) and the same order
 * (score, then newest, then id), then the unranked tail newest first — what the in-memory store
 * does for a question asked within its conversation, without a store per setting.
 *
 * A dataset is tokenized once ({@link prepare}); its questions' matches are collected once per
 * planner setting ({@link collect}); a BM25 setting then ranks every question in a few milliseconds
 * ({@link topIds}). The bench checks the replay against the stores (`--check-replay`); the figures
 * it reports come from the stores.
 */
import { Bm25, SearchPlan, SearchTokenizer } from "@engram/core"
import type { Dataset, Variant } from "./datasets/Dataset.js"
import { contentOf } from "./datasets/Dataset.js"

/** Records written per `MemoryStore.write` call by the benches: records of one call share a creation time. */
export const WRITE_BATCH = 1_000

/** The widest neighbour window the replay prepares for. */
export const MAX_WINDOW = 3

interface Doc {
  readonly id: string
  readonly scope: string
  readonly thread: string
  readonly turn: number
  readonly tokens: ReadonlySet<string>
  readonly length: number
  /** Write order: the bench writes the turns in dataset order, {@link WRITE_BATCH} per call. */
  readonly order: number
  /** Its place in its scope's write order (`MemoryQuery.WRITE_ORDER_THREAD`): the turns are all episodes. */
  readonly place: number
}

/** A dataset tokenized as a store indexes it, with its statistics and each question's tokens. */
export interface Prepared {
  readonly dataset: Dataset
  readonly docs: ReadonlyArray<Doc>
  readonly byScope: ReadonlyMap<string, ReadonlyArray<Doc>>
  readonly postings: ReadonlyMap<string, ReadonlyArray<Doc>>
  readonly averageLength: number
  readonly questionTokens: ReadonlyArray<ReadonlyArray<string>>
}

/** Tokenizes a dataset's turns (the searchable text of a record holding `"<speaker>: <text>"`) and questions. */
export const prepare = (dataset: Dataset): Prepared => {
  const places = new Map<string, number>()
  const docs: Array<Doc> = dataset.turns.map((turn, order) => {
    const tokens = new Set(
      SearchTokenizer.tokenize(SearchTokenizer.searchableText({ content: contentOf(turn), tags: [] }))
    )
    const place = places.get(turn.scope) ?? 0
    places.set(turn.scope, place + 1)
    return {
      id: turn.id,
      scope: turn.scope,
      thread: turn.thread,
      turn: turn.turn,
      tokens,
      length: tokens.size,
      order,
      place
    }
  })
  const byScope = new Map<string, Array<Doc>>()
  const postings = new Map<string, Array<Doc>>()
  for (const doc of docs) {
    const scoped = byScope.get(doc.scope)
    if (scoped === undefined) byScope.set(doc.scope, [doc])
    else scoped.push(doc)
    for (const token of doc.tokens) {
      const list = postings.get(token)
      if (list === undefined) postings.set(token, [doc])
      else list.push(doc)
    }
  }
  const averageLength = docs.reduce((sum, doc) => sum + doc.length, 0) / Math.max(1, docs.length)
  return {
    dataset,
    docs,
    byScope,
    postings,
    averageLength,
    questionTokens: dataset.questions.map((q) => SearchTokenizer.distinctTokens(q.text))
  }
}

/** One question's ranked-tier matches, in the order the store breaks ties (newest first, then id). */
export interface Matches {
  readonly ids: ReadonlyArray<string>
  /** Σ of the plan's weights over the ranked tokens each match holds, summed in the plan's order. */
  readonly idfSum: Float64Array
  readonly length: Float64Array
  /**
   * For each match, the index of the match at each offset `−MAX_WINDOW … −1, 1 … MAX_WINDOW` in its
   * thread (−1 where none): `2 × MAX_WINDOW` entries a match.
   */
  readonly neighbours: Int32Array
  /** The same by the scope's write order: the neighbours of records stored without positions. */
  readonly writeNeighbours: Int32Array
  /** The unranked tail's ids, newest first, as many as the limit could need. */
  readonly tail: ReadonlyArray<string>
}

const OFFSETS = [
  ...Array.from({ length: MAX_WINDOW }, (_, i) => i - MAX_WINDOW),
  ...Array.from(
    { length: MAX_WINDOW },
    (_, i) => i + 1
  )
]

/** Each question's matches under the planner options `planner` (tail up to `limit`). */
export const collect = (
  prepared: Prepared,
  planner: SearchPlan.PlannerOptions,
  limit: number
): ReadonlyArray<Matches> => {
  const statistics: SearchPlan.TokenStatistics = {
    total: prepared.docs.length,
    documentFrequency: (token) => prepared.postings.get(token)?.length ?? 0
  }
  return prepared.dataset.questions.map((question, qi) => {
    const plan = SearchPlan.plan(prepared.questionTokens[qi]!, statistics, planner)
    const sums = new Map<Doc, number>()
    for (const [t, token] of plan.ranked.entries()) {
      const weight = plan.weights[t]!
      for (const doc of prepared.postings.get(token) ?? []) {
        if (doc.scope === question.scope) sums.set(doc, (sums.get(doc) ?? 0) + weight)
      }
    }
    // The store's tie order: later write batches first (newer), then id in code-unit order.
    const docs = [...sums.keys()].sort((a, b) =>
      Math.floor(b.order / WRITE_BATCH) - Math.floor(a.order / WRITE_BATCH) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    )
    const at = new Map<string, number>()
    const atPlace = new Map<number, number>()
    docs.forEach((doc, i) => {
      at.set(`${doc.thread}\u0000${doc.turn}`, i)
      atPlace.set(doc.place, i)
    })
    const neighbours = new Int32Array(docs.length * OFFSETS.length).fill(-1)
    const writeNeighbours = new Int32Array(docs.length * OFFSETS.length).fill(-1)
    docs.forEach((doc, i) =>
      OFFSETS.forEach((offset, j) => {
        neighbours[i * OFFSETS.length + j] = at.get(`${doc.thread}\u0000${doc.turn + offset}`) ?? -1
        writeNeighbours[i * OFFSETS.length + j] = atPlace.get(doc.place + offset) ?? -1
      })
    )
    const tail: Array<string> = []
    if (plan.tail.length > 0 && docs.length < limit) {
      const scoped = prepared.byScope.get(question.scope) ?? []
      for (let i = scoped.length - 1; i >= 0 && docs.length + tail.length < limit; i--) {
        const doc = scoped[i]!
        if (!sums.has(doc) && plan.tail.some((t) => doc.tokens.has(t))) tail.push(doc.id)
      }
    }
    return {
      ids: docs.map((doc) => doc.id),
      idfSum: Float64Array.from(docs, (doc) => sums.get(doc)!),
      length: Float64Array.from(docs, (doc) => doc.length),
      neighbours,
      writeNeighbours,
      tail
    }
  })
}

/**
 * The first `k` ids `MemoryStore.search` returns for one question, given its matches, the BM25
 * parameters and how the records were stored (with positions, or without: by write order).
 */
export const topIds = (
  matches: Matches,
  averageLength: number,
  parameters: Bm25.Parameters,
  variant: Variant,
  k: number
): Array<string> => topScored(matches, averageLength, parameters, variant, k).map((hit) => hit.id)

/**
 * {@link topIds} with each hit's score, as the store's keyword search gives it (the unranked tail
 * scores 0): what score-reading fusion needs.
 */
export const topScored = (
  matches: Matches,
  averageLength: number,
  parameters: Bm25.Parameters,
  variant: Variant,
  k: number
): Array<{ readonly id: string; readonly score: number }> => {
  const around = variant === "positions" ? matches.neighbours : matches.writeNeighbours
  const n = matches.ids.length
  const own = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    own[i] = Bm25.rounded(matches.idfSum[i]! * Bm25.lengthNorm(matches.length[i]!, averageLength, parameters))
  }
  let final = own
  if (parameters.neighbourWindow > 0 && parameters.neighbourWeight > 0) {
    final = new Float64Array(n)
    const context: Array<number | undefined> = []
    for (let i = 0; i < n; i++) {
      context.length = 0
      for (let j = 0; j < OFFSETS.length; j++) {
        if (Math.abs(OFFSETS[j]!) > parameters.neighbourWindow) continue
        const at = around[i * OFFSETS.length + j]!
        context.push(at < 0 ? undefined : own[at]!)
      }
      final[i] = Bm25.contextual(own[i]!, true, context, parameters)
    }
  }
  // Best k by score; among equal scores the lower index (the store's tie order) first.
  const best: Array<number> = []
  for (let i = 0; i < n; i++) {
    const score = final[i]!
    if (best.length === k && score <= final[best[k - 1]!]!) continue
    let at = best.length
    while (at > 0 && final[best[at - 1]!]! < score) at--
    best.splice(at, 0, i)
    if (best.length > k) best.pop()
  }
  const hits = best.map((i) => ({ id: matches.ids[i]!, score: final[i]! }))
  return hits.length >= k ? hits : [...hits, ...matches.tail.slice(0, k - hits.length).map((id) => ({ id, score: 0 }))]
}

/** The ids the store returns for every question of a prepared dataset, stored the `variant` way. */
export const rankAll = (
  prepared: Prepared,
  collected: ReadonlyArray<Matches>,
  variant: Variant,
  parameters: Bm25.Parameters,
  k: number
): Array<Array<string>> => collected.map((matches) => topIds(matches, prepared.averageLength, parameters, variant, k))

/** {@link rankAll} with each hit's score ({@link topScored}). */
export const rankAllScored = (
  prepared: Prepared,
  collected: ReadonlyArray<Matches>,
  variant: Variant,
  parameters: Bm25.Parameters,
  k: number
): Array<Array<{ readonly id: string; readonly score: number }>> =>
  collected.map((matches) => topScored(matches, prepared.averageLength, parameters, variant, k))
