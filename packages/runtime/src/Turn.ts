/**
 * One turn, assembled in one place: the agent's prefix and the turn's projection request
 * (`Agent.planTurn`), the projection (`ContextProjection`), each model call's request
 * (`ModelRequest.compose`) and its snapshot (`PromptObserver.observe`). The native loop, the ACP
 * assembler (`ContextAssembler`), MCP's `memory_context`, the server's projection preview and
 * `Replay` all go through it, so for one agent and one input they send the same bytes
 * (`test/oneTurn.test.ts`; decision 0166).
 *
 * A module of functions over the `ContextProjection` in context, not a service: a turn holds no
 * state and no configuration of its own — settings travel with the call, defaults sit in the
 * projection's layer.
 *
 * @example
 * ```ts
 * import { DateTime, Effect } from "effect"
 * import { SessionStore } from "@engram/core"
 * import { Turn } from "@engram/runtime"
 *
 * declare const agent: Turn.TurnAgent
 *
 * // Turn 1 of session s-1, with a 2,000-token budget for this call over the agent's own.
 * const composed = Effect.gen(function*() {
 *   const input = new SessionStore.OperatorMessage({ text: "who am I?", at: yield* DateTime.now })
 *   return yield* Turn.compose(agent, { sessionId: "s-1", turn: 1, input, history: [] }, { budgetTokens: 2_000 })
 * })
 * ```
 *
 * @since 0.1.0
 */
import type * as Prompt from "@effect/ai/Prompt"
import type { ContextProjection, MemoryRecord, ProjectionLayout, SessionStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import type * as Agent from "./Agent.js"
import * as internal from "./internal/turn.js"
import type * as ModelRequest from "./ModelRequest.js"

/**
 * The agent a turn is assembled for, built once (`StablePrefix.buildAgent` plus the transport's
 * mode, or `NativeRuntime.make`): its prefix, composed ids, identity source and overlay report
 * (`Agent.Agent`), its own projection settings (`projection`), and
 *
 * - `scopes`: the memory scopes its projection reads — the one source of a turn's scopes;
 * - `mode`: the runtime mode its turns run in;
 * - `workingState`, `skills`: runtime state passed to every projection (trusted, not memory);
 * - `cacheHints`: provider options marking the stable prefix and the newest input for caching.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnAgent extends Agent.Agent {
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly mode: ProjectionLayout.ProjectionMode
  readonly workingState?: string | undefined
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
  readonly cacheHints?: Prompt.ProviderOptions | undefined
}

/**
 * One operator input in one session: `turn` counted from 1 on every transport; `history` the
 * session's messages before it; `record: false` (previews, replay) writes no injection row and
 * reports no snapshot.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnRequest {
  readonly sessionId: string
  readonly turn: number
  readonly input: SessionStore.OperatorMessage
  readonly history: ReadonlyArray<SessionStore.SessionMessage>
  readonly record?: boolean | undefined
}

/**
 * One call's own projection settings, over the agent's (decision 0165).
 *
 * @since 0.1.0
 * @category models
 */
export type TurnSettings = ContextProjection.ProjectionOverrides

/**
 * A planned and projected turn: what every model call of the turn is composed from.
 *
 * @since 0.1.0
 * @category models
 */
export interface Opened {
  readonly agent: TurnAgent
  readonly request: TurnRequest
  readonly plan: Agent.TurnPlan
  readonly projection: ProjectionLayout.ProjectedContext
}

/**
 * One model call of an opened turn: its number (from 0), the tool rounds so far and the tools
 * offered.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly call: number
  readonly rounds: ReadonlyArray<SessionStore.SessionMessage>
  readonly tools: ReadonlyArray<string>
}

/**
 * One composed model call: the request, what it was composed from, and the turn's projection.
 *
 * @since 0.1.0
 * @category models
 */
export interface Composed {
  readonly request: ModelRequest.ModelRequest
  readonly inputs: ModelRequest.RequestInput
  readonly projection: ProjectionLayout.ProjectedContext
}

/**
 * Plans and projects a turn, once per turn: `Agent.planTurn` over the agent (its mode, scopes,
 * working state, skills and settings, then `settings` over them), then the projection. An
 * incognito agent whose prefix holds memory fails with `ProjectionFailure`.
 *
 * @since 0.1.0
 * @category turn
 */
export const open: (
  agent: TurnAgent,
  request: TurnRequest,
  settings?: TurnSettings
) => Effect.Effect<Opened, ContextProjection.ProjectionFailure, ContextProjection.ContextProjection> = internal.open

/**
 * Composes one model call of an opened turn and reports its snapshot to the `PromptObserver` in
 * context (none when the request's `record` is `false`).
 *
 * @since 0.1.0
 * @category turn
 */
export const call: (opened: Opened, step: Step) => Effect.Effect<Composed> = internal.call

/**
 * The whole turn for a one-call transport (MCP, ACP, the preview): {@link open}, then call 0 with
 * no rounds and no tools.
 *
 * @since 0.1.0
 * @category turn
 */
export const compose: (
  agent: TurnAgent,
  request: TurnRequest,
  settings?: TurnSettings
) => Effect.Effect<Composed, ContextProjection.ProjectionFailure, ContextProjection.ContextProjection> =
  internal.compose
