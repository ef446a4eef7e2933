/**
 * A SQL memory store's constructors, derived from the one `make` its body exports (options, and
 * the embedder when it keeps vectors): the store that searches by keyword and the store that keeps
 * vectors over the `Embeddings` service it requires, each as an Effect and as a layer. Both SQL
 * stores' public modules are these four, so the vectors twin of each is written once.
 *
 * @since 0.1.0
 */
import { Embeddings, MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The four constructors of a memory store (see the module description).
 *
 * @since 0.1.0
 * @category models
 */
export interface Constructors<E, R> {
  readonly make: (options?: MemoryStore.StoreOptions) => Effect.Effect<MemoryStore.Service, E, R>
  readonly makeWithVectors: (
    options?: MemoryStore.StoreOptions
  ) => Effect.Effect<MemoryStore.Service, E, R | Embeddings.Embeddings>
  readonly layer: (options?: MemoryStore.StoreOptions) => Layer.Layer<MemoryStore.MemoryStore, E, R>
  readonly layerWithVectors: (
    options?: MemoryStore.StoreOptions
  ) => Layer.Layer<MemoryStore.MemoryStore, E, R | Embeddings.Embeddings>
}

/**
 * The four constructors over `make`: without an embedder it builds the keyword store, with one
 * the store that keeps vectors.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromMake = <E, R>(
  make: (
    options: MemoryStore.StoreOptions,
    embeddings?: Embeddings.Service
  ) => Effect.Effect<MemoryStore.Service, E, R>
): Constructors<E, R> => {
  const makeWithVectors = (options: MemoryStore.StoreOptions = {}) =>
    Effect.flatMap(Embeddings.Embeddings, (embeddings) => make(options, embeddings))
  return {
    make: (options = {}) => make(options),
    makeWithVectors,
    layer: (options = {}) => Layer.effect(MemoryStore.MemoryStore, make(options)),
    layerWithVectors: (options) => Layer.effect(MemoryStore.MemoryStore, makeWithVectors(options))
  }
}
