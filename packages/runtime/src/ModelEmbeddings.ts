/**
 * Engram's `Embeddings` over `@effect/ai`'s `EmbeddingModel`: any provider that implements it
 * (for example `@effect/ai-openai`'s `OpenAiEmbeddingModel.layerBatched`) becomes the embedder of
 * the optional vector tier. `EmbeddingModel` does not say which model it runs nor how long its
 * vectors are, so the layer is told both: they are the identity stored with the vectors, and a
 * vector of another length is an `EmbeddingFailure` rather than a silently mixed index.
 *
 * @example
 * ```ts
 * import { OpenAiClient, OpenAiEmbeddingModel } from "@effect/ai-openai"
 * import { NodeHttpClient } from "@effect/platform-node"
 * import { ModelEmbeddings } from "@engram/runtime"
 * import { Config, Layer } from "effect"
 *
 * const EmbeddingsLive = ModelEmbeddings.layer({ model: "text-embedding-3-small", dimensions: 1536 }).pipe(
 *   Layer.provide(OpenAiEmbeddingModel.layerBatched({ model: "text-embedding-3-small" })),
 *   Layer.provide(OpenAiClient.layerConfig({ apiKey: Config.redacted("OPENAI_API_KEY") })),
 *   Layer.provide(NodeHttpClient.layerUndici)
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import { Embeddings } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Which model the `EmbeddingModel` runs, how many dimensions its vectors have, and how many texts
 * go in one call (default 64).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  readonly model: string
  readonly dimensions: number
  readonly batchSize?: number | undefined
}

/**
 * Builds the embedder over the `EmbeddingModel` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: Options
): Effect.Effect<Embeddings.Service, never, EmbeddingModel.EmbeddingModel> =>
  Effect.map(EmbeddingModel.EmbeddingModel, (model) =>
    Embeddings.make({
      identity: { model: options.model, dimensions: options.dimensions },
      batchSize: options.batchSize,
      embedMany: (texts) => model.embedMany(texts)
    }))

/**
 * Provides `Embeddings.Embeddings` over the `EmbeddingModel` in context.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Embeddings.Embeddings, never, EmbeddingModel.EmbeddingModel> =>
  Layer.effect(Embeddings.Embeddings, make(options))
