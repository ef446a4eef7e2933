/**
 * The `Embeddings` service: vectors for records and queries, for the optional embedding tier of
 * search. Engram ships no model: a user provides one (for example `@engram/runtime`'s
 * `ModelEmbeddings.layer` over `@effect/ai`'s `EmbeddingModel`, which `@effect/ai-openai`
 * implements), and a store's `WithVectors` layer (which requires this service) stores a vector
 * for every deliverable record and fuses vector search with BM25 (decisions 0052-0054, 0161 (c)).
 *
 * The embedder's identity — its model name and dimensions — is stored with the vectors: a store
 * whose vectors came from another model is refused ({@link EmbedderMismatch}) until it is
 * re-embedded (`engram embed --reembed`).
 *
 * {@link layerTest} is a deterministic embedder for tests and offline use: hashed character
 * trigrams and stems. It knows no synonyms; it finds sub-word overlap ("postgres" near
 * "PostgreSQL") that whole-token search cannot.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as Bounded from "./Bounded.js"
import * as ErrorClass from "./ErrorClass.js"
import * as TestEmbedder from "./internal/testEmbedder.js"

/**
 * Which embedder produced a vector: the model's name and the vectors' dimensions. Stored beside
 * the vectors; two identities are the same embedder when both fields are equal.
 *
 * @since 0.1.0
 * @category models
 */
export const EmbedderIdentity = Schema.Struct({
  model: Schema.String.pipe(
    Schema.minLength(1),
    Schema.maxLength(200),
    Schema.annotations({ message: () => "the embedder's model name must be 1-200 characters" })
  ),
  dimensions: Bounded.int("the embedder's dimensions", 1, 16_384)
}).annotations({ identifier: "EmbedderIdentity" })
/** @since 0.1.0 @category models */
export type EmbedderIdentity = typeof EmbedderIdentity.Type

/**
 * Renders an identity for messages: `model (dimensions d)`.
 *
 * @since 0.1.0
 * @category models
 */
export const describe = (identity: EmbedderIdentity): string => `${identity.model} (${identity.dimensions} dimensions)`

/**
 * True when both identities name the same model with the same dimensions.
 *
 * @since 0.1.0
 * @category models
 */
export const sameIdentity = (a: EmbedderIdentity, b: EmbedderIdentity): boolean =>
  a.model === b.model && a.dimensions === b.dimensions

/**
 * The embedder failed (the provider refused, timed out, or returned vectors of the wrong size).
 * Writes never fail for it: the record is stored and its vector backfilled by `engram embed`.
 *
 * @since 0.1.0
 * @category errors
 */
export class EmbeddingFailure extends ErrorClass.TaggedError<EmbeddingFailure>()("EmbeddingFailure", {
  model: Schema.String,
  reason: Schema.String
}, {
  errorClass: "Unavailable",
  message: (self) => `the embedder ${self.model} failed: ${self.reason}`
}) {}

/**
 * The store's vectors came from another embedder (another model, or other dimensions). Vectors of
 * two models are not comparable, so the store refuses the new one until it is re-embedded.
 *
 * @since 0.1.0
 * @category errors
 */
export class EmbedderMismatch extends ErrorClass.TaggedError<EmbedderMismatch>()("EmbedderMismatch", {
  stored: EmbedderIdentity,
  given: EmbedderIdentity
}, {
  errorClass: "Misconfigured",
  message: (self) =>
    `the store's vectors were made by ${describe(self.stored)}, not ${describe(self.given)}: ` +
    "run `engram embed --reembed` with the new embedder to replace them, or use the embedder that made them"
}) {}

/**
 * Fails unless `given` is the identity a store holds; when it holds none, `adopt` records `given`
 * through `claim` (the first embedder to write claims the store) and otherwise passes. The one
 * rule every backend's vector index applies before it reads or writes a vector.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkIdentity = <E, R>(
  stored: Effect.Effect<Option.Option<EmbedderIdentity>, E, R>,
  claim: (identity: EmbedderIdentity) => Effect.Effect<unknown, E, R>,
  given: EmbedderIdentity,
  adopt: boolean
): Effect.Effect<void, E | EmbedderMismatch, R> =>
  Effect.flatMap(stored, (held): Effect.Effect<void, E | EmbedderMismatch, R> => {
    if (Option.isNone(held)) return adopt ? Effect.asVoid(claim(given)) : Effect.void
    return sameIdentity(held.value, given)
      ? Effect.void
      : Effect.fail(new EmbedderMismatch({ stored: held.value, given }))
  })

/**
 * Fails with the first vector whose length is not `given.dimensions`.
 *
 * @since 0.1.0
 * @category checks
 */
export const checkLengths = (
  given: EmbedderIdentity,
  vectors: ReadonlyArray<Float32Array>
): Effect.Effect<void, EmbedderMismatch> => {
  const wrong = vectors.find((vector) => vector.length !== given.dimensions)
  return wrong === undefined ? Effect.void : Effect.fail(
    new EmbedderMismatch({ stored: given, given: { model: given.model, dimensions: wrong.length } })
  )
}

/**
 * An embedder: its identity, how many texts it takes per call, and `embed`, which returns one
 * unit-length vector of `identity.dimensions` numbers per text, in order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly identity: EmbedderIdentity
  readonly batchSize: number
  readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Float32Array>, EmbeddingFailure>
}

/**
 * The embeddings service tag. Optional everywhere: without it, search is lexical.
 *
 * @since 0.1.0
 * @category tags
 */
export class Embeddings extends Context.Tag("@engram/core/Embeddings")<Embeddings, Service>() {}

/** Texts per call when a provider does not say: small enough for every provider's request limit. */
const DEFAULT_BATCH_SIZE = 64

/**
 * Scales a vector to unit length (a zero vector stays zero), as 32-bit floats.
 *
 * @since 0.1.0
 * @category vectors
 */
export const normalise = (vector: ReadonlyArray<number> | Float32Array): Float32Array => {
  let sum = 0
  for (let i = 0; i < vector.length; i++) sum += vector[i]! * vector[i]!
  const out = new Float32Array(vector.length)
  if (sum === 0) return out
  const scale = 1 / Math.sqrt(sum)
  for (let i = 0; i < vector.length; i++) out[i] = vector[i]! * scale
  return out
}

// An English question's opening: its interrogative (with "many", "long"… after "how") and the
// auxiliary that follows it ("What did", "How often does", "Where is").
const interrogative =
  /^\s*(?:what|when|where|who|whom|which|why|how)(?:\s+(?:many|much|long|often|old))?\s+(?:(?:is|are|was|were|do|does|did|has|have|had|can|could|would|will|should|might)\s+)?/i

/**
 * The text a search embeds for its query (decision 0220): an English question without its opening
 * interrogative and auxiliary and without its question mark — "When did Caroline go to the support
 * group?" is embedded as "Caroline go to the support group". A sentence encoder places a question
 * near other questions; the records are statements, and what the question is about is in its
 * rest. A query that is nothing but the opening is embedded as it is.
 *
 * @since 0.1.0
 * @category vectors
 */
export const queryText = (query: string): string => {
  const rest = query.replace(interrogative, "").replace(/\?+\s*$/, "")
  return rest.trim().length > 0 ? rest : query
}

/**
 * The dot product of two vectors of the same length: their cosine similarity when both are unit
 * length, which is what every backend ranks by.
 *
 * @since 0.1.0
 * @category vectors
 */
export const dot = (a: Float32Array, b: Float32Array): number => {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!
  return sum
}

/**
 * Builds an embedder from a function that embeds many texts. Calls are cut into batches of
 * `batchSize`; every vector is checked against the identity's dimensions and normalised; any
 * failure becomes an {@link EmbeddingFailure}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <E>(options: {
  readonly identity: EmbedderIdentity
  readonly batchSize?: number | undefined
  readonly embedMany: (
    texts: ReadonlyArray<string>
  ) => Effect.Effect<ReadonlyArray<ReadonlyArray<number> | Float32Array>, E>
}): Service => {
  const { identity } = options
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH_SIZE))
  const failure = (reason: string) => new EmbeddingFailure({ model: identity.model, reason })
  const batch = (texts: ReadonlyArray<string>) =>
    options.embedMany(texts).pipe(
      Effect.catchAllDefect((defect) => Effect.fail(defect)),
      Effect.mapError((error) =>
        error instanceof EmbeddingFailure ? error : failure(error instanceof Error ? error.message : String(error))
      ),
      Effect.flatMap((vectors) => {
        if (vectors.length !== texts.length) {
          return Effect.fail(failure(`returned ${vectors.length} vectors for ${texts.length} texts`))
        }
        const wrong = vectors.find((vector) => vector.length !== identity.dimensions)
        return wrong === undefined
          ? Effect.succeed(vectors.map(normalise))
          : Effect.fail(failure(`returned a vector of ${wrong.length} dimensions, not ${identity.dimensions}`))
      })
    )
  return {
    identity,
    batchSize,
    embed: (texts) =>
      Effect.gen(function*() {
        const out: Array<Float32Array> = []
        for (let start = 0; start < texts.length; start += batchSize) {
          out.push(...(yield* batch(texts.slice(start, start + batchSize))))
        }
        return out
      })
  }
}

/**
 * The deterministic test embedder's default dimensions.
 *
 * @since 0.1.0
 * @category constants
 */
export const TEST_DIMENSIONS = 256

/**
 * The deterministic test embedder: no model, no network, the same vector for the same text on
 * every machine. Each word contributes its stem and the character trigrams of the word, hashed
 * (FNV-1a) into `dimensions` signed buckets; the sum is normalised. Texts are near when they share
 * stems or sub-words: "postgres" is near "PostgreSQL", "deploy" near "redeployed". It knows no
 * meaning: "who am I?" is not near "The user is called Doug". Its model name is
 * `engram-test-trigram-v1`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeTest = (options?: { readonly dimensions?: number | undefined }): Service => {
  const dimensions = options?.dimensions ?? TEST_DIMENSIONS
  return make({
    identity: { model: TestEmbedder.MODEL, dimensions },
    embedMany: (texts) => Effect.succeed(texts.map((text) => TestEmbedder.embed(text, dimensions)))
  })
}

/**
 * Provides the deterministic test embedder ({@link makeTest}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTest = (options?: { readonly dimensions?: number | undefined }): Layer.Layer<Embeddings> =>
  Layer.succeed(Embeddings, makeTest(options))
