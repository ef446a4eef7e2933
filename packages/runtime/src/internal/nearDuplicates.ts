/**
 * When a candidate is already known: the same words, the same values, or — with an embedder — a
 * paraphrase in the same slot stating the same values.
 */
import { Embeddings, type MemoryRecord, Routing, SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"
import type { Candidate } from "./extractionModel.js"

export const sameWords = (a: string, b: string): boolean => Routing.contentKey(a) === Routing.contentKey(b)

const wordPattern = /[\p{L}\p{N}]+/gu

/**
 * The values a sentence states, as near-duplicate detection compares them: every word with a
 * digit in it, and every capitalised word after the first (names, places, days, products), folded
 * as search folds words. Two sentences that state different values are never near-duplicates,
 * however close their vectors: "The standup is at 9am" and "… at 10am", "The user's name is Doug"
 * and "… Douglas" are a correction, not a paraphrase.
 *
 * @since 0.1.0
 * @category deduplication
 */
export const valuesOf = (text: string): ReadonlySet<string> => {
  const values = new Set<string>()
  let first = true
  for (const [word] of text.matchAll(wordPattern)) {
    if (/\p{N}/u.test(word) || (!first && /^\p{Lu}/u.test(word))) {
      for (const token of SearchTokenizer.tokenize(word)) values.add(token)
    }
    first = false
  }
  return values
}

const sameValues = (a: string, b: string): boolean => {
  const x = valuesOf(a)
  const y = valuesOf(b)
  return x.size === y.size && [...x].every((value) => y.has(value))
}

/** The slot a label names: the spec's canonical key when it declares one, else the label's slug. */
export const slotOf = (spec: Pick<Routing.MemoryRoutingSpec, "keys">, label: string): string =>
  Routing.declaredKeyOf(spec, label)?.key ?? Routing.slugify(label)

/**
 * The live memory a candidate nearly duplicates, by embedding: among `neighbours` (live memories
 * of the candidate's scope), those in the same slot — when both carry a label, the labels fold to
 * the same key — that state the same values ({@link valuesOf}), the one whose vector is nearest
 * the candidate's, when its cosine similarity is at least `threshold`. One embedding call, over the
 * candidate and those neighbours; `undefined` when none qualifies.
 *
 * @since 0.1.0
 * @category deduplication
 */
export const nearDuplicateOf = (
  candidate: Pick<Candidate, "content" | "label">,
  neighbours: ReadonlyArray<MemoryRecord.MemoryRecord>,
  options: {
    readonly embeddings: Embeddings.Service
    readonly threshold: number
    readonly spec: Pick<Routing.MemoryRoutingSpec, "keys">
  }
): Effect.Effect<
  { readonly record: MemoryRecord.MemoryRecord; readonly similarity: number } | undefined,
  Embeddings.EmbeddingFailure
> =>
  Effect.gen(function*() {
    const slot = candidate.label === undefined ? undefined : slotOf(options.spec, candidate.label)
    const eligible = neighbours.filter((record) =>
      (slot === undefined || record.label === undefined || slotOf(options.spec, record.label) === slot) &&
      sameValues(record.content, candidate.content)
    )
    if (eligible.length === 0) return undefined
    const [query, ...vectors] = yield* options.embeddings.embed([
      candidate.content,
      ...eligible.map((record) => record.content)
    ])
    let best: { readonly record: MemoryRecord.MemoryRecord; readonly similarity: number } | undefined
    eligible.forEach((record, i) => {
      const similarity = Embeddings.dot(query!, vectors[i]!)
      if (similarity >= options.threshold && (best === undefined || similarity > best.similarity)) {
        best = { record, similarity }
      }
    })
    return best
  })

/**
 * How a run catches near-duplicates: the embedder and the threshold ({@link nearDuplicateOf}).
 * Without it, only exact and canonical-key duplicates are caught.
 *
 * @since 0.1.0
 * @category deduplication
 */
export interface NearDuplicates {
  readonly embeddings: Embeddings.Service
  readonly threshold: number
}
