/**
 * The models the `engram` command can reach — the one place it builds a model provider. The CLI
 * ships no model: OpenAI is reached through `@effect/ai-openai` (loaded only when chosen) with the
 * key in `OPENAI_API_KEY`, for embeddings (`engram embed --embedder openai`) and for a language
 * model (`engram extract --model openai[:<model>]`); the offline sentence encoder of
 * `@engram/embedder-local` (`--embedder local`) when that package is installed beside the CLI. `--model scripted:<file>` answers from a JSON
 * file of scripted replies ({@link ScriptedReplies}) instead — for tests and demos: no network,
 * the same answer every run.
 *
 * @since 0.1.0
 */
import type * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Embeddings from "@engram/core/Embeddings"
import * as ErrorClass from "@engram/core/ErrorClass"
import * as Config from "effect/Config"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"

/**
 * The environment variable OpenAI's key is read from.
 *
 * @since 0.1.0
 * @category constants
 */
export const OPENAI_KEY = "OPENAI_API_KEY"

/**
 * The OpenAI language model `--model openai` uses.
 *
 * @since 0.1.0
 * @category constants
 */
export const OPENAI_LANGUAGE_MODEL = "gpt-4o-mini"

/**
 * No model provider is configured for what the command asked: `problem` names what to set.
 * A misconfiguration (exit 1, nothing written).
 *
 * @since 0.1.0
 * @category errors
 */
export class ProviderNotConfigured extends ErrorClass.TaggedError<ProviderNotConfigured>()("ProviderNotConfigured", {
  problem: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) => self.problem
}) {}

/**
 * A scripted model's file could not be read or does not hold {@link ScriptedReplies}.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidScript extends ErrorClass.TaggedError<InvalidScript>()("InvalidScript", {
  path: Schema.String,
  detail: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `the scripted model ${self.path} ${self.detail}`
}) {}

/**
 * Token usage a scripted reply reports, as a provider would.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScriptedUsage = Schema.Struct({
  inputTokens: Schema.NonNegativeInt,
  outputTokens: Schema.NonNegativeInt
})

/**
 * One scripted reply: the text the model answers (`text`), or a JSON object it answers as its JSON
 * text (`object`: what a structured call such as extraction's decodes), and the
 * usage it reports.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScriptedReply = Schema.Union(
  Schema.Struct({ text: Schema.String, usage: Schema.optional(ScriptedUsage) }),
  Schema.Struct({
    object: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
    usage: Schema.optional(ScriptedUsage)
  })
)
/** @since 0.1.0 @category schemas */
export type ScriptedReply = typeof ScriptedReply.Type

/**
 * A scripted model's file: `{"replies": [...]}`, the n-th model call of the command answered with
 * the n-th reply (a call past the last fails, as a provider would).
 *
 * @since 0.1.0
 * @category schemas
 */
export const ScriptedReplies = Schema.Struct({ replies: Schema.Array(ScriptedReply) }).annotations({
  identifier: "ScriptedReplies"
})
/** @since 0.1.0 @category schemas */
export type ScriptedReplies = typeof ScriptedReplies.Type

/**
 * A language model choice, as `--model` takes it: `openai` (the default model), `openai:<model>`,
 * or `scripted:<file>`.
 *
 * @since 0.1.0
 * @category models
 */
export type ModelChoice =
  | { readonly _tag: "OpenAi"; readonly model: string }
  | { readonly _tag: "Scripted"; readonly path: string }

/**
 * `--model`'s text as a {@link ModelChoice}, or what is wrong with it.
 *
 * @since 0.1.0
 * @category parsing
 */
export const parseModelChoice = (text: string): Either.Either<ModelChoice, string> => {
  if (text === "openai") return Either.right({ _tag: "OpenAi", model: OPENAI_LANGUAGE_MODEL })
  const colon = text.indexOf(":")
  const kind = colon < 0 ? text : text.slice(0, colon)
  const value = colon < 0 ? "" : text.slice(colon + 1)
  if (kind === "openai" && value !== "") return Either.right({ _tag: "OpenAi", model: value })
  if (kind === "scripted" && value !== "") return Either.right({ _tag: "Scripted", path: value })
  return Either.left(`${JSON.stringify(text)} is not a model: use openai, openai:<model> or scripted:<file>`)
}

/**
 * How a choice reads in reports: `openai:<model>` or `scripted:<file>`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeModel = (choice: ModelChoice): string =>
  choice._tag === "OpenAi" ? `openai:${choice.model}` : `scripted:${choice.path}`

const readKey = Config.option(Config.redacted(OPENAI_KEY)).pipe(Effect.orElseSucceed(() => Option.none()))

/**
 * Whether `OPENAI_API_KEY` is set (what a command without `--model` falls back to).
 *
 * @since 0.1.0
 * @category accessors
 */
export const openAiConfigured: Effect.Effect<boolean> = Effect.map(readKey, Option.isSome)

/**
 * OpenAI's client over Node's HTTP client, with the key from `OPENAI_API_KEY` — what every
 * OpenAI-backed model of the CLI is built on. `needs` names what asked, for the message when the
 * key is missing ("--embedder openai needs OPENAI_API_KEY in the environment").
 *
 * @since 0.1.0
 * @category layers
 */
export const openAiClient = (needs: string) =>
  Effect.gen(function*() {
    const key = yield* readKey
    if (Option.isNone(key)) {
      return yield* new ProviderNotConfigured({ problem: `${needs} needs ${OPENAI_KEY} in the environment` })
    }
    const [{ OpenAiClient }, { layerUndici }] = yield* Effect.promise(() =>
      Promise.all([import("@effect/ai-openai"), import("@effect/platform-node/NodeHttpClient")])
    )
    const apiKey: Redacted.Redacted = key.value
    return OpenAiClient.layer({ apiKey }).pipe(Layer.provide(layerUndici))
  })

/**
 * The `Embeddings` service over OpenAI's embeddings API (`engram embed --embedder openai`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const openAiEmbeddings = (
  model: string,
  dimensions: number
): Effect.Effect<Embeddings.Service, ProviderNotConfigured, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* openAiClient("--embedder openai")
    const [{ OpenAiEmbeddingModel }, ModelEmbeddings, EmbeddingsModule] = yield* Effect.promise(() =>
      Promise.all([
        import("@effect/ai-openai"),
        import("@engram/runtime/ModelEmbeddings"),
        import("@engram/core/Embeddings")
      ])
    )
    const context = yield* Layer.build(
      ModelEmbeddings.layer({ model, dimensions }).pipe(
        Layer.provide(OpenAiEmbeddingModel.layerBatched({ model, config: { dimensions } })),
        Layer.provide(client)
      )
    )
    return yield* Effect.provide(EmbeddingsModule.Embeddings, context)
  })

/**
 * The package `--embedder local` loads.
 *
 * @since 0.1.0
 * @category constants
 */
export const LOCAL_EMBEDDER_PACKAGE = "@engram/embedder-local"

/**
 * The offline sentence encoder of `@engram/embedder-local` (`--embedder local`): no key, no network.
 * The CLI does not carry it (its weights are 28 MB); it is loaded from beside the CLI when chosen,
 * and a missing package is a {@link ProviderNotConfigured} naming the install command.
 *
 * @since 0.1.0
 * @category constructors
 */
export const localEmbeddings: Effect.Effect<Embeddings.Service, ProviderNotConfigured> = Effect.gen(function*() {
  const module = yield* Effect.tryPromise({
    try: () => import("@engram/embedder-local/LocalEmbeddings"),
    catch: () =>
      new ProviderNotConfigured({
        problem: `--embedder local needs the package ${LOCAL_EMBEDDER_PACKAGE}: install it beside engram ` +
          `(npm install -g ${LOCAL_EMBEDDER_PACKAGE} for a global engram, npm install ${LOCAL_EMBEDDER_PACKAGE} in a project)`
      })
  })
  return yield* module.make().pipe(
    Effect.mapError((error) => new ProviderNotConfigured({ problem: `--embedder local: ${error.message}` }))
  )
})

const decodeReplies = Schema.decodeUnknown(Schema.parseJson(ScriptedReplies), { onExcessProperty: "error" })

/**
 * The replies of a scripted model's file, decoded with {@link ScriptedReplies}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const readScript = (path: string): Effect.Effect<ScriptedReplies, InvalidScript> =>
  Effect.gen(function*() {
    const text = yield* Effect.try({
      try: () => NodeFs.readFileSync(path, "utf8"),
      catch: (error) =>
        new InvalidScript({
          path,
          detail: `cannot be read: ${error instanceof Error ? error.message : String(error)}`
        })
    })
    return yield* decodeReplies(text).pipe(
      Effect.mapError((error) => new InvalidScript({ path, detail: `is not a scripted model file: ${error.message}` }))
    )
  })

/**
 * The language model a command asked for: `choice` when given; otherwise OpenAI's default model
 * when `OPENAI_API_KEY` is set; otherwise {@link ProviderNotConfigured}, naming what to set.
 * `command` names the command in that message. Nothing is loaded or read before the choice is
 * known: the OpenAI modules only for OpenAI, the file only for a scripted model.
 *
 * @since 0.1.0
 * @category layers
 */
export const languageModel = (
  command: string,
  choice: ModelChoice | undefined
): Effect.Effect<
  { readonly model: ModelChoice; readonly layer: Layer.Layer<LanguageModel.LanguageModel> },
  ProviderNotConfigured | InvalidScript
> =>
  Effect.gen(function*() {
    const model: ModelChoice | undefined = choice ??
      ((yield* openAiConfigured) ? { _tag: "OpenAi", model: OPENAI_LANGUAGE_MODEL } : undefined)
    if (model === undefined) {
      return yield* new ProviderNotConfigured({
        problem: `${command} needs a language model: set ${OPENAI_KEY} (OpenAI), ` +
          `or pass --model openai[:<model>] or --model scripted:<file> (for tests and demos)`
      })
    }
    if (model._tag === "Scripted") {
      const { replies } = yield* readScript(model.path)
      const ScriptedModel = yield* Effect.promise(() => import("@engram/runtime/ScriptedModel"))
      const script = ScriptedModel.sequence(replies.map((reply) => [
        ScriptedModel.text("text" in reply ? reply.text : JSON.stringify(reply.object)),
        {
          type: "finish",
          reason: "stop",
          usage: {
            inputTokens: reply.usage?.inputTokens,
            outputTokens: reply.usage?.outputTokens,
            totalTokens: reply.usage === undefined ? undefined : reply.usage.inputTokens + reply.usage.outputTokens
          }
        }
      ]))
      return { model, layer: ScriptedModel.layer(script) }
    }
    const client = yield* openAiClient(`--model ${describeModel(model)}`)
    const { OpenAiLanguageModel } = yield* Effect.promise(() => import("@effect/ai-openai"))
    // Not OpenAI's strict structured outputs: strict mode requires every property, and the answers'
    // schemas have optional ones (a candidate's label, supersedes). The answer is decoded anyway.
    return {
      model,
      layer: OpenAiLanguageModel.layer({ model: model.model, config: { strict: false } }).pipe(Layer.provide(client))
    }
  })
