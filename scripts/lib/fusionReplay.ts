/**
 * Hybrid search's fusion replayed in process, for choosing its options leave-one-dataset-out like
 * the keyword ranking's (decision 0151): a question's keyword list (from `rankingReplay`), its
 * vector list (the exact dot product with every turn of its conversation, rounded to 6 decimals and
 * ties to the id, as every backend's vector index ranks, decision 0053), both read
 * `max(limit, candidates)` deep, fused by core's own `SearchPlan.fuse`.
 */
import type { MemoryStore } from "@engram/core"
import { Embeddings, SearchPlan } from "@engram/core"
import type { Dataset } from "./datasets/Dataset.js"
import { recallAt } from "./datasets/Dataset.js"

/** Vectors of a dataset's turns (by id) and questions (in order). */
export interface DatasetVectors {
  readonly turns: ReadonlyMap<string, Float32Array>
  readonly questions: ReadonlyArray<Float32Array>
}

/** Each question's vector list: every turn of its conversation by similarity, best first (the first `depth`). */
export const vectorLists = (
  dataset: Dataset,
  vectors: DatasetVectors,
  depth: number
): Array<ReadonlyArray<{ readonly id: string; readonly score: number }>> => {
  const byScope = new Map<string, Array<string>>()
  for (const turn of dataset.turns) byScope.set(turn.scope, [...(byScope.get(turn.scope) ?? []), turn.id])
  return dataset.questions.map((question, i) =>
    (byScope.get(question.scope) ?? [])
      .map((id) => ({
        id,
        score: Math.round(Embeddings.dot(vectors.questions[i]!, vectors.turns.get(id)!) * 1e6) / 1e6
      }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .slice(0, depth)
  )
}

// `SearchPlan.fuse` reads a hit's record id and nothing else of the record.
const hit = (id: string, score: number) => ({ record: { id }, score }) as unknown as MemoryStore.SearchHit

/** The first `limit` ids of the fused ranking of one question (`lexical` with the store's scores). */
export const fusedIds = (
  lexical: ReadonlyArray<{ readonly id: string; readonly score: number }>,
  vector: ReadonlyArray<{ readonly id: string; readonly score: number }>,
  limit: number,
  options: SearchPlan.FusionOptions
): Array<string> => {
  const depth = Math.max(limit, options.candidates)
  return SearchPlan.fuse(
    lexical.slice(0, depth).map((h) => hit(h.id, h.score)),
    vector.filter((v) => v.score > options.minSimilarity).slice(0, depth).map((v) => hit(v.id, v.score)),
    limit,
    options
  ).map((h) => h.record.id)
}

/**
 * The fusion options the grid tries: decision 0151's reciprocal-rank grid (320) and decision
 * 0187's standardised scores (56; the rank constant does not apply to them).
 */
export const grid = (): Array<SearchPlan.FusionOptions> => [
  ...[10, 30, 60, 120].flatMap((k) =>
    [0.25, 0.5, 0.75, 1, 1.5].flatMap((vectorWeight) =>
      [-1, 0.2, 0.3, 0.4].flatMap((minSimilarity) =>
        [0, 20, 50, 100].map((candidates) => ({
          method: "rank" as const,
          k,
          lexicalWeight: 1,
          vectorWeight,
          minSimilarity,
          candidates
        }))
      )
    )
  ),
  ...[0.1, 0.2, 0.3, 0.5, 0.75, 1, 1.5].flatMap((vectorWeight) =>
    [-1, 0.3].flatMap((minSimilarity) =>
      [10, 20, 50, 100].map((candidates) => ({
        method: "score" as const,
        k: 10,
        lexicalWeight: 1,
        vectorWeight,
        minSimilarity,
        candidates
      }))
    )
  )
]

/** R@5 and R@10 of the fused ranking (searches of limit 10), one dataset stored one way. */
export const recallOf = (
  dataset: Dataset,
  lexical: ReadonlyArray<ReadonlyArray<{ readonly id: string; readonly score: number }>>,
  vector: ReadonlyArray<ReadonlyArray<{ readonly id: string; readonly score: number }>>,
  options: SearchPlan.FusionOptions
): { readonly r5: number; readonly r10: number } => {
  const fused = dataset.questions.map((_, i) => fusedIds(lexical[i]!, vector[i]!, 10, options))
  return { r5: recallAt(dataset.questions, fused, 5), r10: recallAt(dataset.questions, fused, 10) }
}
