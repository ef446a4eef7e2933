/**
 * The agent as every runtime reads it: a built agent (what `StablePrefix.buildAgent` returns —
 * its stable prefix, the same prefix as authored, the memory ids the prefix composed, where the
 * identity tier reads from, the overlay report, and its memory settings) and the one function that
 * maps a turn of it to the `ContextProjection` request.
 *
 * The native loop, the ACP assembler, replay, subagents and the server's projection preview all
 * call {@link planTurn}, so they cannot drift apart: for the same store, agent, scopes and query,
 * each asks for the same projection. The rules it carries, written here once:
 *
 * - **What a mode sends** ({@link inMode}): an `incognito` turn sends the prefix as authored (the
 *   Background without memory), withholds nothing and has no overlay report; a prefix that still
 *   holds memory is refused with {@link IncognitoPrefixHoldsMemory}. Every other mode sends the
 *   composed prefix and withholds the ids it composed from the projection.
 * - **The request**: the turn's session, number, query, mode and scopes; the runtime's working
 *   state and skills; the ids the sent prefix holds (`inPrefix`); the agent's identity source,
 *   which gives the identity tier and withholds memories at addresses the prefix holds; and whether
 *   to write the injection-log row.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ContextProjection } from "@engram/core"
 * import { Agent, StablePrefix } from "@engram/runtime"
 *
 * const preview = (query: string) =>
 *   Effect.gen(function*() {
 *     const built = yield* StablePrefix.buildAgent(yield* StablePrefix.decodeConfig({ spec: "user-background" }))
 *     const plan = yield* Agent.planTurn(built, {
 *       sessionId: "preview",
 *       turn: 0,
 *       query,
 *       mode: "native",
 *       scopes: built.scopes,
 *       record: false
 *     })
 *     const projection = yield* ContextProjection.ContextProjection
 *     return yield* projection.project(plan.request)
 *   })
 * ```
 *
 * @since 0.1.0
 */
import type { ContextProjection, MemoryOverlay, MemoryRecord, ProjectionLayout, PromptFragment } from "@engram/core"
import type * as Either from "effect/Either"
import * as internal from "./internal/agent.js"

/**
 * What a turn reads of a built agent; `StablePrefix.buildAgent` returns all of it, and every
 * field may be left out (an agent with no prefix composes nothing and withholds nothing).
 *
 * - `prefix`: the stable prefix;
 * - `authoredPrefix`: the same with the Background as authored, sent on incognito turns;
 * - `composedIds`: the memory ids `prefix` holds, never delivered again by the projection;
 * - `identity`: where the identity tier reads from (with the addresses `prefix` holds);
 * - `report`: the overlay report the prefix was built with (stored with each snapshot, for
 *   `Explain`);
 * - `projection`: the agent's projection settings (budget, window, recall) over the layer's.
 *
 * @since 0.1.0
 * @category models
 */
export interface Agent {
  readonly prefix?: ReadonlyArray<PromptFragment.AgentPromptSectionData> | undefined
  readonly authoredPrefix?: ReadonlyArray<PromptFragment.AgentPromptSectionData> | undefined
  readonly composedIds?: ReadonlyArray<string> | undefined
  readonly identity?: ContextProjection.IdentitySource | undefined
  readonly report?: MemoryOverlay.OverlayReport | undefined
  /**
   * The agent's own projection settings over the layer's defaults (its budget, window, recall
   * cap): two agents in one process each get their own (decision 0182).
   */
  readonly projection?: ContextProjection.ProjectionOverrides | undefined
}

/**
 * What an agent sends in one mode: the prefix, the memory ids it holds (which the projection
 * withholds), the overlay report that describes it (none on incognito turns) and the identity
 * source.
 *
 * @since 0.1.0
 * @category models
 */
export interface Sent {
  readonly prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly composedIds: ReadonlyArray<string>
  readonly report: MemoryOverlay.OverlayReport | undefined
  readonly identity: ContextProjection.IdentitySource | undefined
}

/**
 * One turn of an agent, as the runtime running it knows it: the session, the turn number, the
 * operator's input (`query`), the mode, the memory scopes the agent reads, the runtime's working
 * state and skills index, and whether to write the injection-log row (default: write it).
 *
 * @since 0.1.0
 * @category models
 */
export interface Turn {
  readonly sessionId: string
  readonly turn: number
  readonly query: string
  readonly mode: ProjectionLayout.ProjectionMode
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly workingState?: string | undefined
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
  readonly record?: boolean | undefined
  /** This turn's own projection settings, over the agent's (e.g. a smaller budget for one call). */
  readonly projection?: ContextProjection.ProjectionOverrides | undefined
}

/**
 * A planned turn: what the agent sends in the turn's mode ({@link Sent}) and the projection
 * request to hand `ContextProjection.project`.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnPlan extends Sent {
  readonly request: ContextProjection.ProjectionRequest
}

/**
 * An incognito turn was asked of an agent whose prefix holds memory and which has no authored
 * prefix to send instead. Spread the result of `StablePrefix.buildAgent` in (it carries
 * `authoredPrefix`).
 *
 * @since 0.1.0
 * @category errors
 */
export const IncognitoPrefixHoldsMemory = internal.IncognitoPrefixHoldsMemory
/** @since 0.1.0 @category errors */
export type IncognitoPrefixHoldsMemory = internal.IncognitoPrefixHoldsMemory

/**
 * What `agent` sends in `mode`: on an `incognito` turn the authored prefix (or the prefix, when
 * no authored one is given — refused with {@link IncognitoPrefixHoldsMemory} if it holds memory),
 * no composed ids and no overlay report; in every other mode the prefix, its composed ids and its
 * report. Pure.
 *
 * @since 0.1.0
 * @category planning
 */
export const inMode: (
  agent: Agent,
  mode: ProjectionLayout.ProjectionMode
) => Either.Either<Sent, IncognitoPrefixHoldsMemory> = internal.inMode

/**
 * The one mapping of a turn to its projection request: what `agent` sends in the turn's mode
 * ({@link inMode}) and the `ContextProjection.ProjectionRequest` for it — the turn's session,
 * number, query, mode and scopes, the working state and skills, `inPrefix` (the ids the sent
 * prefix holds), the agent's identity source, the record flag, and the projection settings — the
 * agent's, then the turn's, merged by `ContextProjection.settingsFor`'s rule. Every runtime calls it. Pure.
 *
 * @since 0.1.0
 * @category planning
 */
export const planTurn: (agent: Agent, turn: Turn) => Either.Either<TurnPlan, IncognitoPrefixHoldsMemory> =
  internal.planTurn
