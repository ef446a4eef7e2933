/**
 * What an MCP client's model should read before it answers: the agent's stable prefix (its
 * identity, guidelines and the composed Background — promoted memories folded into the declared
 * sections) and the projection of a query (working state, always-on memory, the identity tier,
 * the prior-session digest and recall, inside the `<injected_memory>` envelope).
 *
 * It is built by the functions every runtime calls, never a mapping of its own:
 * `StablePrefix.buildAgent` (rebuilt on every call, so a memory promoted a moment ago is in it),
 * `Agent.planTurn` (the one turn → projection-request mapping, mode `external`),
 * `ContextProjection.project`, and `ModelRequest.compose` for the request reported to the
 * `PromptObserver` in context — so `engram inspect` shows what an MCP client was given, as it
 * shows a native turn. The server delivers it three ways (see `EngramMcp`): as the `instructions`
 * of `initialize`, as the resource {@link CONTEXT_URI}, and as the tool `memory_context`.
 *
 * @since 0.1.0
 */
import * as Tool from "@effect/ai/Tool"
import * as Toolkit from "@effect/ai/Toolkit"
import {
  ContextProjection,
  ErrorClass,
  type MemoryStore,
  type PromotionStore,
  PromptFragment,
  RoutingSpecs,
  SessionStore
} from "@engram/core"
import { Agent, MemoryTools, ModelRequest, PromptObserver, StablePrefix } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Schema from "effect/Schema"

/**
 * The URI of the context resource: the agent's context for no particular query (the prefix, and
 * the identity tier and always-on memory of the projection).
 *
 * @since 0.1.0
 * @category constants
 */
export const CONTEXT_URI = "engram://context"

/**
 * The session id the server's context turns are recorded under (injection log, prompt snapshots)
 * unless configured otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_SESSION_ID = "mcp"

/**
 * The agent whose context the server delivers: its config as `engram compose` reads it (persona,
 * guidelines, declared Background, scopes…). The memory tools' `scope`, `background` and `spec`
 * override the config's, so the Background is composed by the very spec saves are routed by.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentContextConfig {
  readonly memory: MemoryTools.MemoryToolsConfig
  readonly agent?: StablePrefix.AgentConfig | undefined
  readonly sessionId?: string | undefined
}

/**
 * The context of one query: `background` is the stable prefix as a system prompt holds it,
 * `projection` the turn's projected context (empty when there is nothing to project), `text`
 * both, joined by a blank line, and `memoryIds` every memory either carries.
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContextView = Schema.Struct({
  text: Schema.String,
  background: Schema.String,
  projection: Schema.String,
  memoryIds: Schema.Array(Schema.String)
}).annotations({ identifier: "AgentContextView" })
/** @since 0.1.0 @category schemas */
export type ContextView = typeof ContextView.Type

/**
 * The `memory_context` tool: the agent's context for a query — who the user is, the Background,
 * and what memory is relevant to the query.
 *
 * @since 0.1.0
 * @category tools
 */
export const MemoryContext = Tool.make("memory_context", {
  description: "Read your context before you answer: who the user is (the Background and identity), how you work, " +
    "and the saved memories relevant to the query. Call it at the start of a conversation and whenever the " +
    "topic changes; pass the user's message as query.",
  parameters: {
    query: Schema.optionalWith(Schema.String.pipe(Schema.maxLength(10_000)), { default: () => "" }).annotations({
      description: "The user's message, or what you need context about (default: none — identity and Background only)."
    })
  },
  success: ContextView,
  failure: MemoryTools.MemoryToolError,
  failureMode: "return"
}).annotate(Tool.Readonly, true).annotate(Tool.Destructive, false).annotate(Tool.Idempotent, true)

/**
 * The context toolkit: `memory_context`.
 *
 * @since 0.1.0
 * @category tools
 */
export const ContextToolkit = Toolkit.make(MemoryContext)

/**
 * The agent config the context is built from: `config.agent` (or an agent with no authored
 * sections) with the memory tools' scope, Background and spec.
 *
 * @since 0.1.0
 * @category constructors
 */
export const agentConfigOf = (config: AgentContextConfig): StablePrefix.AgentConfig => ({
  ...(config.agent ?? emptyAgent),
  scope: config.memory.scope,
  background: config.memory.background,
  spec: config.memory.spec.key
})

const emptyAgent: StablePrefix.AgentConfig = {
  persona: "",
  operatingModel: "",
  roster: [],
  toolGuidance: [],
  guidelines: [],
  background: { sections: [] },
  awareness: "",
  scope: "global",
  plugins: []
}

/** A failure as the sentence the client reads; what the model cannot fix is logged, not sent. */
const refuse = (error: ErrorClass.Classifiable): Effect.Effect<never, MemoryTools.MemoryToolError> => {
  const errorClass = ErrorClass.classify(error)
  if (errorClass !== "Unavailable" && errorClass !== "Misconfigured" && errorClass !== "StorageFull") {
    return Effect.fail(new MemoryTools.MemoryToolError({ message: error.message }))
  }
  return Effect.zipRight(
    Effect.logError("memory_context failed").pipe(Effect.annotateLogs({ problem: error.message, errorClass })),
    Effect.fail(
      new MemoryTools.MemoryToolError({
        message: errorClass === "Unavailable"
          ? "the memory store is unavailable right now; try again later"
          : errorClass === "StorageFull"
          ? "the memory store is full; nothing was saved (see the server's log)"
          : "the agent's context could not be built because of a configuration error (see the server's log)"
      })
    )
  )
}

/**
 * The service: `contextFor(query)` builds the agent and the projection of one external turn and
 * reports the request to the `PromptObserver` in context; each call is the next turn of the
 * server's session.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly contextFor: (query: string) => Effect.Effect<ContextView, MemoryTools.MemoryToolError>
}

/**
 * Builds the service over the stores and the `ContextProjection` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: AgentContextConfig
): Effect.Effect<
  Service,
  never,
  MemoryStore.MemoryStore | PromotionStore.PromotionStore | ContextProjection.ContextProjection
> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<MemoryStore.MemoryStore | PromotionStore.PromotionStore>()
    const projection = yield* ContextProjection.ContextProjection
    const agentConfig = agentConfigOf(config)
    const specs = RoutingSpecs.layer({ [config.memory.spec.key]: config.memory.spec })
    const sessionId = config.sessionId ?? DEFAULT_SESSION_ID
    const turns = yield* Ref.make(0)

    const contextFor = (query: string) =>
      Effect.gen(function*() {
        const turn = yield* Ref.getAndUpdate(turns, (n) => n + 1)
        const agent = yield* StablePrefix.buildAgent(agentConfig).pipe(Effect.provide(specs), Effect.provide(context))
        const plan = yield* Agent.planTurn(agent, {
          sessionId,
          turn,
          query,
          mode: "external",
          scopes: agent.scopes
        })
        const projected = yield* projection.project(plan.request)
        const input = new SessionStore.OperatorMessage({ text: query, at: yield* DateTime.now })
        const inputs: ModelRequest.RequestInput = {
          prefix: plan.prefix,
          history: [],
          input,
          rounds: [],
          projection: projected
        }
        const request = ModelRequest.compose(inputs)
        yield* PromptObserver.observe({
          sessionId,
          turn,
          call: 0,
          request,
          tools: [],
          projection: projected,
          inputs,
          scopes: agent.scopes,
          overlay: plan.report
        })
        const background = PromptFragment.joinPrompt(plan.prefix)
        return {
          text: [background, projected.text].filter((part) => part.length > 0).join("\n\n"),
          background,
          projection: projected.text,
          memoryIds: ModelRequest.memoryIdsOf(request)
        } satisfies ContextView
      }).pipe(
        Effect.catchAll(refuse),
        Effect.withSpan("mcp.context", { attributes: { sessionId } })
      )

    return { contextFor }
  })

/**
 * The `memory_context` handler over a service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (service: Service) =>
  ContextToolkit.toLayer({ memory_context: (params) => service.contextFor(params.query) })
