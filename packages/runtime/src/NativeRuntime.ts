/**
 * The native runtime: Engram's agent loop on `@effect/ai` — a `LanguageModel` and the memory
 * toolkit, called until the model stops calling tools.
 *
 * One turn:
 *
 * 1. the session's stored history is loaded (legacy context frames stay stored but are stripped
 *    from what the model sees);
 * 2. the context is projected **once**, with the operator's input as the query
 *    (`ContextProjection.project`, which writes the turn's injection-log row);
 * 3. the operator input is stored, and the model is called with
 *    `stable prefix ⊕ history ⊕ input ⊕ projection ⊕ the turn's rounds so far` (see
 *    {@link ModelRequest});
 * 4. the tools the model called run, their results are stored, and the model is called again —
 *    with the same projection — until it answers without calling a tool.
 *
 * Only operator, assistant and tool messages are stored. The projection is a local value of the
 * turn: it is never written to the `SessionStore`, never kept on the agent, and never seen by
 * another turn — one built agent serves any number of concurrent turns.
 *
 * **Approval.** Tools named in `approval` (or matched by it) need the operator's approval: when
 * the model calls one, the turn stores the assistant's message, records a `PendingInterrupt`, and
 * returns `Suspended` — nothing of that round runs yet. {@link resume} takes the operator's
 * decision, projects the turn again (once, with the turn's newest operator input, writing its own
 * injection-log row under the same turn number), runs the approved calls, reports the denied ones
 * to the model as failures, and carries on with the loop.
 *
 * @example
 * import { Effect, Layer } from "effect"
 * import { RoutingPresets } from "@engram/core"
 * import { NativeRuntime } from "@engram/runtime"
 *
 * const turn = Effect.gen(function*() {
 *   const agent = yield* NativeRuntime.make({
 *     prefix: [],
 *     memory: {
 *       scope: "global",
 *       background: RoutingPresets.userBackgroundSections,
 *       spec: RoutingPresets.userBackground
 *     }
 *   })
 *   return yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: "Hi, I'm Doug" })
 * })
 * // provide: a LanguageModel (a provider's, or ScriptedModel.layer from "@engram/runtime/testing"),
 * // SessionStore, ContextProjection, MemoryStore and PromotionStore.
 *
 * @since 0.1.0
 */
import type * as AiError from "@effect/ai/AiError"
import type * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import type {
  ContextProjection,
  MemoryOverlay,
  MemoryRecord,
  MemoryStore,
  MemoryStoreError,
  ProjectionLayout,
  PromotionStore,
  PromptFragment,
  RoutingSpecs,
  SessionStore
} from "@engram/core"
import type * as Effect from "effect/Effect"
import type * as Agent from "./Agent.js"
import type * as Extraction from "./Extraction.js"
import * as internal from "./internal/nativeLoop.js"
import type * as MemoryTools from "./MemoryTools.js"
import type * as NativeRuntimeError from "./NativeRuntimeError.js"
import type * as StablePrefix from "./StablePrefix.js"

export {
  /** @since 0.1.0 @category errors */
  CallLimitReached,
  /** @since 0.1.0 @category errors */
  InvalidTurn,
  /** @since 0.1.0 @category errors */
  NothingToResume,
  /** @since 0.1.0 @category errors */
  SessionAwaitingApproval,
  /** @since 0.1.0 @category errors */
  ToolNameClash
} from "./NativeRuntimeError.js"

/**
 * The memory tools of the native runtime: the memory toolkit's.
 *
 * @since 0.1.0
 * @category models
 */
export type Tools = Toolkit.Tools<typeof MemoryTools.MemoryToolkit>

/**
 * A toolkit the agent offers beside the memory toolkit: its tools and a handler that takes the
 * JSON arguments a model sends (decoding them with each tool's schema). Make one from an
 * `@effect/ai` toolkit with {@link toolkit}.
 *
 * @since 0.1.0
 * @category models
 */
export interface AgentToolkit {
  readonly tools: Readonly<Record<string, Tool.Any>>
  readonly handle: (name: string, params: unknown) => Effect.Effect<Tool.HandlerResult<Tool.Any>, unknown>
}

/**
 * A user's `@effect/ai` toolkit (with its handlers, e.g. `yield* MyToolkit` under
 * `MyToolkit.toLayer(...)`) as an {@link AgentToolkit}. The services its handlers need are taken
 * from the context now, so the built agent needs nothing more at run time.
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolkit = <T extends Record<string, Tool.Any>>(
  withHandler: Toolkit.WithHandler<T>
): Effect.Effect<AgentToolkit, never, Tool.Requirements<T[keyof T]>> => internal.toolkitOf(withHandler)

/**
 * The modes the native loop runs in (`external` is the ACP assembler's):
 *
 * - `native`: the full projection; both memory tools offered.
 * - `autonomous`: a goal-driven turn; the projection leaves out the prior-session digest.
 * - `incognito`: working state and skills only; no memory tool is offered, so nothing is read
 *   from or written to memory, and the prefix is the authored one (`authoredPrefix`): no
 *   promoted memory reaches the model.
 * - `subagent`: nothing projected; only `memory_recall` is offered.
 *
 * @since 0.1.0
 * @category models
 */
export type NativeMode = Exclude<ProjectionLayout.ProjectionMode, "external">

/**
 * How a native agent is built.
 *
 * - `prefix`, `composedIds`, `authoredPrefix`, `identity`: the stable prefix, the memory ids it
 *   composed, the same prefix with the Background as authored (no memory) and where the
 *   projection's identity tier reads from — what `StablePrefix.buildAgent` returns (spread its
 *   result in, or build with {@link fromConfig}). An `incognito` agent sends `authoredPrefix`;
 *   built from a prefix holding memory and no `authoredPrefix`, it fails with
 *   `Agent.IncognitoPrefixHoldsMemory`.
 * - `memory`: the memory tools' configuration (scope, declared Background, routing spec).
 * - `scopes`: the scopes the projection reads (default: `[memory.scope]`).
 * - `mode`: default `native`.
 * - `workingState`, `skills`: passed to every projection.
 * - `memoryTools`: the memory tools offered (default: both; `memory_recall` only for a
 *   `subagent`; an `incognito` agent is offered none, whatever this says).
 * - `toolkits`: the user's own tools, offered beside the memory tools in every mode (see
 *   {@link toolkit}); a name used twice, or a memory tool's name, fails the build
 *   with {@link ToolNameClash}.
 * - `approval`: the tools that need the operator's approval — a list of tool names, or a predicate
 *   over a call. It applies to every tool, the user's as much as the memory tools.
 * - `maxCalls`: the most model calls one turn may make (default 16).
 * - `projection`: the agent's projection settings — its budget (`budgetTokens` from 256, or
 *   `contextWindowTokens` × `budgetPct`), recall cap and conversation window — over the
 *   `ContextProjection` layer's defaults.
 * - `cacheHints`: the provider options that mark prompt-cache breakpoints at the end of the stable
 *   prefix and at the turn's input (default `ModelRequest.CACHE_HINTS`, Anthropic's cache control;
 *   `false` for none). They are never put inside the projection.
 * - `extraction`: the extraction service (`yield* Extraction.Extraction` under `Extraction.layer`)
 *   each completed turn hands its session to (its `schedule`: the turn returns at once); without
 *   it, nothing is extracted after a turn (decision 0166).
 *
 * @since 0.1.0
 * @category models
 */
export interface NativeAgentOptions {
  readonly prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly composedIds?: ReadonlyArray<string> | undefined
  readonly authoredPrefix?: ReadonlyArray<PromptFragment.AgentPromptSectionData> | undefined
  readonly identity?: ContextProjection.IdentitySource | undefined
  /** The overlay report the prefix was built with (`buildAgent` returns it); prompt snapshots keep it for `Explain`. */
  readonly report?: MemoryOverlay.OverlayReport | undefined
  readonly memory: MemoryTools.MemoryToolsConfig
  readonly memoryTools?: ReadonlyArray<keyof Tools & string> | undefined
  readonly toolkits?: ReadonlyArray<AgentToolkit> | undefined
  readonly cacheHints?: Prompt.ProviderOptions | false | undefined
  readonly scopes?: ReadonlyArray<MemoryRecord.Scope> | undefined
  readonly mode?: NativeMode | undefined
  readonly workingState?: string | undefined
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
  readonly approval?: ReadonlyArray<string> | ((call: SessionStore.ToolCall) => boolean) | undefined
  readonly maxCalls?: number | undefined
  /** The agent's own projection settings (budget, window, recall) over the layer's (decision 0182). */
  readonly projection?: ContextProjection.ProjectionOverrides | undefined
  readonly extraction?: Extraction.Service | undefined
}

/**
 * A built agent: immutable, shared by every turn that runs on it.
 *
 * @since 0.1.0
 * @category models
 */
export interface NativeAgent {
  readonly prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly composedIds: ReadonlyArray<string>
  /** The overlay report the prefix was built with, if given (none for an incognito agent); `Agent.Agent`'s name. */
  readonly report: MemoryOverlay.OverlayReport | undefined
  /** The provider options marking cache breakpoints, if any (see `ModelRequest.compose`). */
  readonly cacheHints: Prompt.ProviderOptions | undefined
  /** The memory tools' configuration (a subagent inherits it). */
  readonly memory: MemoryTools.MemoryToolsConfig
  readonly identity: ContextProjection.IdentitySource | undefined
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly mode: NativeMode
  readonly workingState: string | undefined
  readonly skills: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
  readonly maxCalls: number
  /** The tool names offered to the model in this mode. */
  readonly offered: ReadonlyArray<string>
  /** Every tool of the agent (memory and user tools) and the one handler over them. */
  readonly toolkit: AgentToolkit
  readonly needsApproval: (call: SessionStore.ToolCall) => boolean
  /** The agent's own projection settings, if any. */
  readonly projection: ContextProjection.ProjectionOverrides | undefined
  /** The extraction each completed turn is handed to, if any. */
  readonly extraction: Extraction.Service | undefined
}

/**
 * The default limit of model calls in one turn.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_MAX_CALLS: number = internal.DEFAULT_MAX_CALLS

/**
 * Why an agent could not be built: two tools share a name, or an incognito agent's prefix holds
 * memory (`Agent.IncognitoPrefixHoldsMemory`).
 *
 * @since 0.1.0
 * @category errors
 */
export type BuildError = NativeRuntimeError.ToolNameClash | Agent.IncognitoPrefixHoldsMemory

/**
 * Builds an agent: resolves its options, binds the memory tools' handlers to the stores in
 * context, and joins the user's toolkits to them. What the agent sends in its mode is
 * `Agent.inMode`'s answer.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: NativeAgentOptions
): Effect.Effect<NativeAgent, BuildError, MemoryStore.MemoryStore | PromotionStore.PromotionStore> =>
  internal.make(options)

/**
 * What {@link fromConfig} takes beside the config: every {@link NativeAgentOptions} field that
 * the build does not give (the prefix, composed ids, authored prefix, identity source, overlay
 * report, scopes and memory settings come from `StablePrefix.buildAgent`), and the memory tools'
 * own options (`sourceType`, `provenanceTags`, `recallLimit`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ConfigOptions extends
  Omit<
    NativeAgentOptions,
    "prefix" | "composedIds" | "authoredPrefix" | "identity" | "report" | "memory" | "scopes"
  >
{
  readonly memory?: Pick<MemoryTools.MemoryToolsConfig, "sourceType" | "provenanceTags" | "recallLimit"> | undefined
}

/**
 * Why {@link fromConfig} could not build an agent: the config did not decode or names no routing
 * spec (its memory tools need one), the prefix could not be built, or {@link make} refused it.
 *
 * @since 0.1.0
 * @category errors
 */
export type ConfigError =
  | BuildError
  | StablePrefix.InvalidAgentConfig
  | StablePrefix.SectionOrderError
  | RoutingSpecs.RoutingSpecNotFound
  | PromotionStore.PromotionStoreFailure
  | MemoryStoreError.MemoryStoreFailure

/**
 * Builds an agent from its configuration, the way every runtime does: decodes it
 * (`StablePrefix.decodeConfig`), builds its stable prefix from the stores
 * (`StablePrefix.buildAgent`) and makes the agent ({@link make}) with the build's prefix, composed
 * ids, authored prefix, identity source, overlay report and scopes, and its memory settings (the
 * config's scope and Background, the spec it names, resolved by `RoutingSpecs`). A config that
 * names no spec is refused with `StablePrefix.InvalidAgentConfig` before any store is read.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { NativeRuntime } from "@engram/runtime"
 *
 * const turn = Effect.gen(function*() {
 *   const agent = yield* NativeRuntime.fromConfig(
 *     { persona: "You are a companion.", spec: "user-background" },
 *     { workingState: "goal: plan the week" }
 *   )
 *   return yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: "Hi, I'm Doug" })
 * })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromConfig = (
  config: StablePrefix.AgentConfigInput,
  options: ConfigOptions = {}
): Effect.Effect<
  NativeAgent,
  ConfigError,
  RoutingSpecs.RoutingSpecs | MemoryStore.MemoryStore | PromotionStore.PromotionStore
> => internal.fromConfig(config, options)

/**
 * A turn that finished: the model's final text, the turn number, the turn's projection and how
 * many model calls the turn made (counting those before a suspension).
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnCompleted {
  readonly _tag: "Completed"
  readonly sessionId: string
  readonly turn: number
  readonly text: string
  readonly projection: ProjectionLayout.ProjectedContext
  readonly calls: number
}

/**
 * A turn waiting for the operator: `pending` are the tool calls that need approval. Resume it
 * with {@link resume}.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnSuspended {
  readonly _tag: "Suspended"
  readonly sessionId: string
  readonly turn: number
  readonly pending: ReadonlyArray<SessionStore.ToolCall>
  readonly projection: ProjectionLayout.ProjectedContext
  readonly calls: number
}

/**
 * What a turn (or a resume) returns.
 *
 * @since 0.1.0
 * @category models
 */
export type TurnResult = TurnCompleted | TurnSuspended

/**
 * The operator's decision on a suspended turn: approve every pending call, deny every one, or
 * approve the listed call ids and deny the rest. `reason` is passed to the model with a denial.
 *
 * @since 0.1.0
 * @category models
 */
export type ApprovalDecision =
  | { readonly _tag: "ApproveAll" }
  | { readonly _tag: "DenyAll"; readonly reason?: string | undefined }
  | { readonly _tag: "ApproveOnly"; readonly ids: ReadonlyArray<string>; readonly reason?: string | undefined }

/**
 * Approve every pending call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const approveAll: ApprovalDecision = { _tag: "ApproveAll" }

/**
 * Deny every pending call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const denyAll = (reason?: string): ApprovalDecision => ({ _tag: "DenyAll", reason })

/**
 * Approve the calls with these ids; deny the others.
 *
 * @since 0.1.0
 * @category constructors
 */
export const approveOnly = (ids: ReadonlyArray<string>, reason?: string): ApprovalDecision => ({
  _tag: "ApproveOnly",
  ids,
  reason
})

/**
 * Everything a turn can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type TurnError =
  | AiError.AiError
  | ContextProjection.ProjectionFailure
  | SessionStore.SessionStoreFailure
  | SessionStore.InvalidSessionData
  | NativeRuntimeError.SessionAwaitingApproval
  | NativeRuntimeError.CallLimitReached
  | NativeRuntimeError.InvalidTurn

/**
 * What a turn needs: a language model, the session store and the projection. (The memory tools
 * were bound to their stores when the agent was built.)
 *
 * @since 0.1.0
 * @category models
 */
export type TurnContext = LanguageModel.LanguageModel | SessionStore.SessionStore | ContextProjection.ContextProjection

/**
 * Runs one turn of `agent` in session `sessionId` with the operator's `input` (and, optionally,
 * this turn's own projection `settings` over the agent's).
 *
 * @since 0.1.0
 * @category running
 */
export const runTurn = (options: {
  readonly agent: NativeAgent
  readonly sessionId: string
  readonly input: string
  /** This turn's projection settings over the agent's (e.g. a smaller budget for one call). */
  readonly settings?: ContextProjection.ProjectionOverrides | undefined
}): Effect.Effect<TurnResult, TurnError, TurnContext> => internal.runTurn(options)

/**
 * Resumes the suspended turn of session `sessionId` with the operator's decision.
 *
 * @since 0.1.0
 * @category running
 */
export const resume = (options: {
  readonly agent: NativeAgent
  readonly sessionId: string
  readonly decision: ApprovalDecision
}): Effect.Effect<
  TurnResult,
  Exclude<TurnError, NativeRuntimeError.SessionAwaitingApproval> | NativeRuntimeError.NothingToResume,
  TurnContext
> => internal.resume(options)
