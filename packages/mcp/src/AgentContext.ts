/**
 * What an MCP client's model should read before it answers: the agent's stable prefix (its
 * identity, guidelines and the composed Background — promoted memories folded into the declared
 * sections) and the projection of a query (working state, always-on memory, the identity tier,
 * the prior-session digest and recall, inside the `<injected_memory>` envelope).
 *
 * It is built by the functions every runtime calls, never a mapping of its own:
 * `StablePrefix.buildAgent` (rebuilt on every call, so a memory promoted a moment ago is in it)
 * and `Turn.compose` (the one assembly of a turn, mode `external`: plan, project, compose, and the
 * request reported to the `PromptObserver` in context) — so `engram inspect` shows what an MCP
 * client was given, as it shows a native turn. The server delivers it three ways (see `EngramMcp`): as the `instructions`
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
  SessionStore,
  TelemetryStore,
  Trajectory
} from "@engram/core"
import { MemoryTools, ModelRequest, StablePrefix, Turn } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
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
 * The session id {@link make} records turns under when it is given none. The MCP server gives
 * every connection a session of its own ({@link connectionSessionId}) unless one is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_SESSION_ID = "mcp"

/**
 * The session an MCP connection's turns are recorded under when none is configured: the name the
 * client gave in `initialize` (lower-cased, to 64 letters, digits, `.`, `_` and `-`; `mcp` when
 * nothing is left) and the connection's id, so two connections never share turns. Pure.
 *
 * @since 0.1.0
 * @category constructors
 */
export const connectionSessionId = (clientName: string, connectionId: string): string => {
  const name = clientName.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 64)
  return `${name === "" ? DEFAULT_SESSION_ID : name}-${connectionId}`
}

/**
 * What an MCP client is told first, whatever the store holds: what Engram is to it and how to
 * read and save memory. The agent's context (possibly empty) follows it in `instructions`.
 *
 * @since 0.1.0
 * @category constants
 */
export const USAGE = "You have a long-term memory (Engram). Call memory_context with the user's message before you " +
  "answer: it returns who the user is, how to work with them and the saved memories relevant to the message. When " +
  "the user tells you something lasting about themselves, their work or their preferences, save it with memory_save " +
  "(kind, content and, for a named attribute, a label); memory_recall searches what was saved."

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
 * reports the request to the `PromptObserver` in context; each call is the next turn of
 * `sessionId`.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly sessionId: string
  readonly contextFor: (query: string) => Effect.Effect<ContextView, MemoryTools.MemoryToolError>
}

/**
 * Where the session stands: the turn after the last one stored (injection log or snapshots), and
 * the messages its trajectory holds — the history every later call is composed over, so each
 * stored call rebuilds byte for byte. A new session: turn 1, no history.
 */
const resume = (sessionId: string) =>
  Effect.gen(function*() {
    const telemetry = yield* TelemetryStore.TelemetryStore
    const logged = (yield* telemetry.listInjections(sessionId)).rows.map((row) => row.turn)
    const snapshots = (yield* telemetry.listSnapshots(sessionId, {})).snapshots
    const history: Array<SessionStore.SessionMessage> = []
    if (snapshots.length > 0) {
      for (const entry of (yield* telemetry.readTrajectory(sessionId)).messages) {
        const message = Either.getOrUndefined(Trajectory.messageOf(entry))
        // A message that no longer decodes (or a gap) ends the history that can be rebuilt.
        if (message === undefined || entry.seq !== history.length) break
        history.push(message)
      }
    }
    // Turns are counted from 1, as the native loop counts them (decision 0166).
    return { turn: Math.max(0, ...logged, ...snapshots.map((snapshot) => snapshot.turn)) + 1, history }
  }).pipe(
    Effect.catchAll((error) =>
      Effect.as(
        Effect.logWarning("the session's stored turns could not be read; numbering from 1").pipe(
          Effect.annotateLogs({ sessionId, problem: error.message })
        ),
        { turn: 1, history: [] as Array<SessionStore.SessionMessage> }
      )
    )
  )

/**
 * Builds the service over the stores and the `ContextProjection` in context. Its turns continue
 * after the session's stored ones, so a session resumed by a later connection keeps its history.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  config: AgentContextConfig
): Effect.Effect<
  Service,
  never,
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | ContextProjection.ContextProjection
  | TelemetryStore.TelemetryStore
> =>
  Effect.gen(function*() {
    const context = yield* Effect.context<MemoryStore.MemoryStore | PromotionStore.PromotionStore>()
    const projection = yield* ContextProjection.ContextProjection
    const agentConfig = agentConfigOf(config)
    const specs = RoutingSpecs.layer({ [config.memory.spec.key]: config.memory.spec })
    const sessionId = config.sessionId ?? DEFAULT_SESSION_ID
    const resumed = yield* resume(sessionId)
    const turns = yield* Ref.make(resumed.turn)
    // The session's messages so far: each call's query follows the earlier ones, as in a native
    // session's trajectory (the client's own conversation is not Engram's to see).
    const history = yield* Ref.make<ReadonlyArray<SessionStore.SessionMessage>>(resumed.history)

    const contextFor = (query: string) =>
      Effect.gen(function*() {
        const turn = yield* Ref.getAndUpdate(turns, (n) => n + 1)
        const input = new SessionStore.OperatorMessage({ text: query, at: yield* DateTime.now })
        const earlier = yield* Ref.getAndUpdate(history, (messages) => [...messages, input])
        const built = yield* StablePrefix.buildAgent(agentConfig).pipe(Effect.provide(specs), Effect.provide(context))
        // The one assembly of a turn (decision 0166); an MCP client is an external agent.
        const { inputs, request } = yield* Turn.compose({ ...built, mode: "external" }, {
          sessionId,
          turn,
          input,
          history: earlier
        }).pipe(Effect.provideService(ContextProjection.ContextProjection, projection))
        const projected = inputs.projection
        const background = PromptFragment.joinPrompt(inputs.prefix)
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

    return { sessionId, contextFor }
  })

/**
 * The `memory_context` handler over a service.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (service: Service) =>
  ContextToolkit.toLayer({ memory_context: (params) => service.contextFor(params.query) })
