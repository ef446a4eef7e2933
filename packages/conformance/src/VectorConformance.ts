/**
 * The vector capability tier of the conformance kit: a backend built with the deterministic test
 * embedder (`Embeddings.layerTest`) must return the same top k as an exact reference computed
 * here, honour every filter before the top k, store a record whose embedding failed, and — when
 * the backend persists its index (`options.vectorIndex`) — refuse another embedder with a typed
 * `EmbedderMismatch` until it is reset, and backfill what is missing.
 *
 * @example
 * ```ts
 * import { runVectorConformance } from "@engram/conformance"
 * import { MemoryStore } from "@engram/core"
 *
 * runVectorConformance("in-memory", MemoryStore.layerMemoryWithVectors)
 * ```
 *
 * @since 0.1.0
 */
import { describe } from "@effect/vitest"
import type { Embeddings, MemoryStore, VectorIndex } from "@engram/core"
import type * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import { vectorTier } from "./internal/vectors.js"

/**
 * Options for {@link runVectorConformance}.
 *
 * @since 0.1.0
 * @category models
 */
export interface VectorConformanceOptions<RExtra = never> {
  /** Opens the backend's vector index over the same storage as the store of the build. */
  readonly vectorIndex?: Effect.Effect<VectorIndex.Service, unknown, RExtra>
}

/**
 * Registers the vector tier for one backend. `layer` builds a fresh store that keeps vectors over
 * the `Embeddings` service it requires (e.g. `MemoryStore.layerMemoryWithVectors`); the kit
 * provides the embedder to it. Call it at the top level of a vitest file.
 *
 * @since 0.1.0
 * @category conformance
 */
export const runVectorConformance = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, E, Embeddings.Embeddings>,
  options: VectorConformanceOptions<RExtra> = {}
): void => {
  describe(`MemoryStore vector tier: ${name}`, () => vectorTier(layer, options.vectorIndex))
}
