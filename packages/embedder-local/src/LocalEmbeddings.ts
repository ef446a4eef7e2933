/**
 * Engram's `Embeddings` over the local sentence encoder ({@link LocalEmbeddingModel}): give it to a
 * store layer and the store keeps a 512-dimension vector for every deliverable record and fuses
 * vector search with its keyword ranking — semantic recall with no API key and no network.
 *
 * The identity the store records is the encoder with how it reads long texts
 * (`LocalEmbeddingModel.modelName`) at 512 dimensions: a store embedded by another model, or by
 * this one reading long texts otherwise, refuses to open until `engram embed --reembed`.
 *
 * What it costs (`docs/benchmarks.md`, decision 0152): about a second to load and 80-165 MB of
 * memory; a short turn or a query takes tens of milliseconds on two cores, a 2,000-character
 * message about 100-200 ms.
 *
 * @example
 * ```ts
 * import { LocalEmbeddings } from "@engram/embedder-local"
 * import { SqliteEngram } from "@engram/store-sqlite"
 * import { Layer } from "effect"
 *
 * const EngramLive = SqliteEngram.layer({ filename: "./.engram/engram.db" }).pipe(
 *   Layer.provide(LocalEmbeddings.layer())
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Embeddings from "@engram/core/Embeddings"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as LocalEmbeddingModel from "./LocalEmbeddingModel.js"

/**
 * The identity vectors made with `options` are stored under.
 *
 * @since 0.1.0
 * @category constants
 */
export const identity = (
  options: Partial<LocalEmbeddingModel.Options> = {}
): Embeddings.EmbedderIdentity => ({
  model: LocalEmbeddingModel.modelName({ ...LocalEmbeddingModel.defaultOptions, ...options }),
  dimensions: LocalEmbeddingModel.DIMENSIONS
})

/**
 * Loads the encoder and builds the embedder: texts go to the encoder `batchSize` at a time, every
 * vector is checked for its length and normalised (`Embeddings.make`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Partial<LocalEmbeddingModel.Options> = {}
): Effect.Effect<Embeddings.Service, LocalEmbeddingModel.LocalEmbedderUnavailable> =>
  Effect.map(LocalEmbeddingModel.makeEncoder(options), (encoder) =>
    Embeddings.make({
      identity: {
        model: LocalEmbeddingModel.modelName(encoder.options),
        dimensions: LocalEmbeddingModel.DIMENSIONS
      },
      batchSize: encoder.options.batchSize,
      embedMany: encoder.embed
    }))

/**
 * Provides `Embeddings.Embeddings` over the local encoder, loaded once when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<LocalEmbeddingModel.Options> = {}
): Layer.Layer<Embeddings.Embeddings, LocalEmbeddingModel.LocalEmbedderUnavailable> =>
  Layer.effect(Embeddings.Embeddings, make(options))
