/**
 * A scripted `LanguageModel`: a layer that answers every model request with what a script says,
 * and records every request it received. For tests, demos and replays — no network, no provider,
 * the same bytes every run.
 *
 * A script is a function of the request (the exact `Prompt` the model was sent, and the names of
 * the tools it was offered) returning response parts: text, tool calls, a finish part. A finish
 * part is added when the script gives none (`tool-calls` when the reply calls a tool, `stop`
 * otherwise).
 *
 * @example
 * import { LanguageModel } from "@effect/ai"
 * import { Effect } from "effect"
 * import { ScriptedModel } from "@engram/runtime/testing"
 *
 * const model = ScriptedModel.layer((request) =>
 *   ScriptedModel.lastUserText(request).includes("Doug")
 *     ? [ScriptedModel.toolCall("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })]
 *     : [ScriptedModel.text("Hello!")]
 * )
 *
 * const program = Effect.gen(function*() {
 *   const response = yield* LanguageModel.generateText({ prompt: "Hi" })
 *   const requests = yield* ScriptedModel.requests // every request the model got, in order
 *   return [response.text, requests.length]
 * }).pipe(Effect.provide(model))
 *
 * @since 0.1.0
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as Stream from "effect/Stream"

/**
 * One request the model received: its position (0-based, in arrival order), the prompt exactly as
 * sent, and the tools offered (names, in toolkit order, and their descriptions).
 *
 * @since 0.1.0
 * @category models
 */
export interface ScriptedRequest {
  readonly index: number
  readonly prompt: Prompt.Prompt
  readonly tools: ReadonlyArray<string>
  /** Each offered tool's description as the model was shown it, by name ("" when it has none). */
  readonly toolDescriptions?: Readonly<Record<string, string>> | undefined
}

/**
 * What a script answers: the response parts, in their encoded (wire) form.
 *
 * @since 0.1.0
 * @category models
 */
export type Reply = ReadonlyArray<Response.PartEncoded>

/**
 * A script: the reply to one request. It may be effectful (to wait, or to fail like a provider).
 *
 * @since 0.1.0
 * @category models
 */
export type Script = (request: ScriptedRequest) => Reply | Effect.Effect<Reply, AiError.AiError>

/**
 * The recorder of a scripted model: every request received so far, in arrival order.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly requests: Effect.Effect<ReadonlyArray<ScriptedRequest>>
}

/**
 * The recorder tag, provided next to the `LanguageModel` by {@link layer}.
 *
 * @since 0.1.0
 * @category tags
 */
export class ScriptedModel extends Context.Tag("@engram/runtime/ScriptedModel")<ScriptedModel, Service>() {}

/**
 * Every request the scripted model received so far, in arrival order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const requests: Effect.Effect<ReadonlyArray<ScriptedRequest>, never, ScriptedModel> = Effect.flatMap(
  ScriptedModel,
  (model) => model.requests
)

// ---------------------------------------------------------------------------------------------
// Reply parts
// ---------------------------------------------------------------------------------------------

/**
 * A text part.
 *
 * @since 0.1.0
 * @category replies
 */
export const text = (value: string): Response.TextPartEncoded => ({ type: "text", text: value })

/**
 * A tool call. The id defaults to `call-<request index>-<position in the reply>`, unique within
 * one model's life.
 *
 * @since 0.1.0
 * @category replies
 */
export const toolCall = (
  name: string,
  params: unknown,
  options?: { readonly id?: string }
): Response.ToolCallPartEncoded => ({
  type: "tool-call",
  id: options?.id ?? "",
  name,
  params,
  providerExecuted: false
})

/**
 * A finish part with a reason (and no usage figures).
 *
 * @since 0.1.0
 * @category replies
 */
export const finish = (reason: Response.FinishReason): Response.FinishPartEncoded => ({
  type: "finish",
  reason,
  usage: { inputTokens: undefined, outputTokens: undefined, totalTokens: undefined }
})

/**
 * A script that answers the n-th request with the n-th reply, and fails (as a provider would)
 * when it runs out.
 *
 * @since 0.1.0
 * @category scripts
 */
export const sequence = (replies: ReadonlyArray<Reply>): Script => (request) => {
  const reply = replies[request.index]
  return reply !== undefined ? reply : Effect.fail(
    new AiError.UnknownError({
      module: "ScriptedModel",
      method: "generateText",
      description: `the script has ${replies.length} replies and request #${request.index + 1} arrived`
    })
  )
}

// ---------------------------------------------------------------------------------------------
// Reading a request
// ---------------------------------------------------------------------------------------------

const textOfParts = (parts: ReadonlyArray<Prompt.Part>): string =>
  parts.map((part) => (part.type === "text" ? part.text : "")).join("")

/**
 * The system text of a request ("" when there is no system message).
 *
 * @since 0.1.0
 * @category reading
 */
export const systemText = (request: { readonly prompt: Prompt.Prompt }): string =>
  request.prompt.content.flatMap((message) => (message.role === "system" ? [message.content] : [])).join("\n")

/**
 * The text of every user message of a request, in order.
 *
 * @since 0.1.0
 * @category reading
 */
export const userTexts = (request: { readonly prompt: Prompt.Prompt }): ReadonlyArray<string> =>
  request.prompt.content.flatMap((message) => (message.role === "user" ? [textOfParts(message.content)] : []))

/**
 * The text of the last user message whose text does not start with a projection tag — the
 * operator's newest input as the model saw it ("" when there is none).
 *
 * @since 0.1.0
 * @category reading
 */
export const lastUserText = (request: { readonly prompt: Prompt.Prompt }): string => {
  const texts = userTexts(request).filter((text) => !/^<(?:working_state|skills_index|injected_memory)>\n/.test(text))
  return texts[texts.length - 1] ?? ""
}

/**
 * The tool results the request carries after its last user message (what the model is being
 * answered with in this round of a turn).
 *
 * @since 0.1.0
 * @category reading
 */
export const pendingToolResults = (
  request: { readonly prompt: Prompt.Prompt }
): ReadonlyArray<Prompt.ToolResultPart> => {
  const out: Array<Prompt.ToolResultPart> = []
  for (const message of request.prompt.content) {
    if (message.role === "user") out.length = 0
    if (message.role === "tool") out.push(...message.content)
  }
  return out
}

const encodePrompt = Schema.encodeSync(Prompt.Prompt)

/**
 * The prompt as canonical JSON: two requests are byte-identical when these strings are equal.
 *
 * @since 0.1.0
 * @category reading
 */
export const promptJson = (prompt: Prompt.Prompt): string => JSON.stringify(encodePrompt(prompt))

// ---------------------------------------------------------------------------------------------
// The layer
// ---------------------------------------------------------------------------------------------

const withIdsAndFinish = (reply: Reply, index: number): Array<Response.PartEncoded> => {
  let calls = 0
  const parts = reply.map((part): Response.PartEncoded => {
    if (part.type !== "tool-call") return part
    const position = calls++
    return part.id === "" ? { ...part, id: `call-${index}-${position}` } : part
  })
  if (!parts.some((part) => part.type === "finish")) parts.push(finish(calls > 0 ? "tool-calls" : "stop"))
  return parts
}

const toStreamParts = (parts: ReadonlyArray<Response.PartEncoded>, index: number): Array<Response.StreamPartEncoded> =>
  parts.flatMap((part, position): Array<Response.StreamPartEncoded> => {
    switch (part.type) {
      case "text": {
        const id = `text-${index}-${position}`
        return [{ type: "text-start", id }, { type: "text-delta", id, delta: part.text }, { type: "text-end", id }]
      }
      case "tool-call":
      case "finish":
        return [part]
      default:
        return []
    }
  })

/**
 * Builds a scripted model: the `LanguageModel` service and its recorder.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (script: Script) =>
  Effect.gen(function*() {
    const received: Array<ScriptedRequest> = []
    const answer = (options: LanguageModel.ProviderOptions) =>
      Effect.suspend(() => {
        const request: ScriptedRequest = {
          index: received.length,
          prompt: options.prompt,
          tools: options.tools.map((tool) => tool.name),
          toolDescriptions: Object.fromEntries(options.tools.map((tool) => [tool.name, tool.description ?? ""]))
        }
        received.push(request)
        return Effect.try({
          try: () => script(request),
          catch: (cause) =>
            new AiError.UnknownError({
              module: "ScriptedModel",
              method: "generateText",
              description: "the script threw",
              cause
            })
        }).pipe(
          Effect.flatMap((reply) => (Effect.isEffect(reply) ? reply : Effect.succeed(reply))),
          Effect.map((reply) => ({ index: request.index, parts: withIdsAndFinish(reply, request.index) }))
        )
      })
    const model = yield* LanguageModel.make({
      generateText: (options) => Effect.map(answer(options), ({ parts }) => parts),
      streamText: (options) =>
        Stream.unwrap(
          Effect.map(answer(options), ({ index, parts }) => Stream.fromIterable(toStreamParts(parts, index)))
        )
    })
    const recorder: Service = { requests: Effect.sync(() => [...received]) }
    return { model, recorder }
  })

/**
 * The scripted model as a layer: a `LanguageModel` that answers with `script`, and the
 * {@link ScriptedModel} recorder. Each build starts with an empty record.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (script: Script): Layer.Layer<LanguageModel.LanguageModel | ScriptedModel> =>
  Layer.effectContext(
    Effect.map(make(script), ({ model, recorder }) =>
      Context.make(LanguageModel.LanguageModel, model).pipe(Context.add(ScriptedModel, recorder)))
  )
