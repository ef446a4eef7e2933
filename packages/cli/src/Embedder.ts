/**
 * The embedder a command runs with, as `--embedder test|local|openai` chooses it (with `--embedder-model`
 * and `--embedder-dimensions` for vectors made otherwise than by default): `engram embed` gives the
 * store its vectors with it, and the commands that recall (`engram memory search`, `engram mcp`,
 * `engram extract`) search hybrid with it — the store's vectors next to its keyword index. Without
 * the option those commands stay lexical.
 *
 * The same defaults as `engram embed` (the deterministic test embedder at its own dimensions, the
 * local sentence encoder of `@engram/embedder-local` at its 512, or OpenAI's
 * `text-embedding-3-small` at 1536), so a store embedded with `engram embed --embedder X` is
 * searched with `--embedder X`. A store whose vectors came from another embedder refuses to open
 * (the store's check, `Embeddings.EmbedderMismatch`). OpenAI's client is loaded only when chosen
 * (`Provider`); the test embedder lives in core's `Embeddings`, which every store loads anyway.
 *
 * @since 0.1.0
 */
import * as Embeddings from "@engram/core/Embeddings"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Flags from "./Flags.js"
import * as Provider from "./Provider.js"

/**
 * The embedders `--embedder` names.
 *
 * @since 0.1.0
 * @category constants
 */
export const EMBEDDERS = ["test", "local", "openai"] as const

/**
 * An embedder `--embedder` names.
 *
 * @since 0.1.0
 * @category models
 */
export type Embedder = typeof EMBEDDERS[number]

/**
 * The OpenAI embedding model `--embedder openai` uses unless another is named.
 *
 * @since 0.1.0
 * @category constants
 */
export const OPENAI_MODEL = "text-embedding-3-small"

/**
 * The dimensions of OpenAI's vectors unless others are named.
 *
 * @since 0.1.0
 * @category constants
 */
export const OPENAI_DIMENSIONS = 1536

/**
 * The dimensions of the local sentence encoder's vectors.
 *
 * @since 0.1.0
 * @category constants
 */
export const LOCAL_DIMENSIONS = 512

const EMBEDDER_HELP = "The deterministic test embedder (offline), the local sentence encoder (offline, needs " +
  "@engram/embedder-local installed), or OpenAI's embeddings API (OPENAI_API_KEY)."

/**
 * `--embedder`, `--embedder-model`, `--embedder-dimensions`: the options of a command that recalls
 * (optional: without `--embedder` it searches by keyword only).
 *
 * @since 0.1.0
 * @category options
 */
export const recallOptions = {
  embedder: Flags.optional(
    Flags.choice(
      "embedder",
      EMBEDDERS,
      `Search hybrid: keywords and the store's vectors (made by engram embed with the same embedder). ${EMBEDDER_HELP} ` +
        "Default: keywords only."
    )
  ),
  embedderModel: Flags.optional(
    Flags.text(
      "embedder-model",
      Flags.NonEmpty,
      `With --embedder openai, the embedding model (default ${OPENAI_MODEL}).`,
      "name"
    )
  ),
  embedderDimensions: Flags.optional(
    Flags.text(
      "embedder-dimensions",
      Flags.WholeNumber,
      `With --embedder, the vectors' dimensions (test: ${Embeddings.TEST_DIMENSIONS}, local: ${LOCAL_DIMENSIONS}, ` +
        `openai: ${OPENAI_DIMENSIONS}).`,
      "n"
    )
  )
}

/**
 * What the recall options chose.
 *
 * @since 0.1.0
 * @category models
 */
export interface Choice {
  readonly embedder: Embedder | undefined
  readonly embedderModel?: string | undefined
  readonly embedderDimensions?: number | undefined
}

/**
 * The embedder `embedder` names at `model` and `dimensions` (each defaulting as `engram embed`'s).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  embedder: Embedder,
  options: { readonly model?: string | undefined; readonly dimensions?: number | undefined } = {}
): Effect.Effect<Embeddings.Service, Provider.ProviderNotConfigured, Scope.Scope> => {
  switch (embedder) {
    case "test":
      return Effect.succeed(Embeddings.makeTest({ dimensions: options.dimensions ?? Embeddings.TEST_DIMENSIONS }))
    case "local":
      // One model, one size: a name or size the encoder does not have is refused, not ignored.
      return options.model !== undefined ||
          (options.dimensions !== undefined && options.dimensions !== LOCAL_DIMENSIONS)
        ? Effect.fail(
          new Provider.ProviderNotConfigured({
            problem:
              `--embedder local has one model at ${LOCAL_DIMENSIONS} dimensions: leave out its model and dimensions`
          })
        )
        : Provider.localEmbeddings
    case "openai":
      return Provider.openAiEmbeddings(options.model ?? OPENAI_MODEL, options.dimensions ?? OPENAI_DIMENSIONS)
  }
}

/**
 * The `Embeddings` service the recall options chose, for a store layer (and an extraction) to be
 * built with: the store then keeps vectors for what it writes and searches hybrid
 * (`StoreBackend.layer` picks the store's vectors layer when given one). Without `--embedder` there
 * is none: `undefined`, and the store searches by keyword.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  choice: Choice
): Layer.Layer<Embeddings.Embeddings, Provider.ProviderNotConfigured> | undefined =>
  choice.embedder === undefined
    ? undefined
    : Layer.scoped(
      Embeddings.Embeddings,
      make(choice.embedder, { model: choice.embedderModel, dimensions: choice.embedderDimensions })
    )
