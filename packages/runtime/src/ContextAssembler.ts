/**
 * The context assembler of the external runtime: what an agent that Engram does not run (an ACP
 * agent, another framework's loop) gets from Engram on each turn.
 *
 * `assemble(sessionId, query)` calls the same `ContextProjection` the native loop calls — mode
 * `external` — so an external agent receives byte for byte the projected context a native agent
 * would for the same store, query and state: the same sections, budget, `<injected_memory>`
 * envelope, incognito rule and injection-log row. The external runtime keeps its own session
 * history; the assembler only numbers the turns it assembles, per session.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextAssembler, ContextProjection } from "@engram/runtime"
 *
 * const AssemblerLive = ContextAssembler.layer({ scopes: ["global"] }).pipe(Layer.provide(ContextProjection.layer))
 *
 * const context = Effect.flatMap(ContextAssembler.ContextAssembler, (assembler) =>
 *   assembler.assemble("s-1", "what did we decide about the migration?")
 * ) // a ProjectedContext: put `context.text` in front of the prompt you send
 * ```
 *
 * @since 0.1.0
 */
import type { MemoryRecord, ProjectedContext } from "@engram/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { ContextProjection, type ProjectionFailure } from "./ContextProjection.js"
import type { BuiltAgent } from "./StablePrefix.js"

/**
 * The modes an external turn may be assembled in: `external` (the default), `autonomous` (a
 * goal-driven turn: no prior-session digest) and `incognito` (working state and skills only).
 *
 * @since 0.1.0
 * @category models
 */
export type AssemblyMode = Extract<ProjectedContext.ProjectionMode, "external" | "autonomous" | "incognito">

/**
 * What every assembly of one agent shares.
 *
 * - `scopes`: the memory scopes the agent reads.
 * - `skills`: the skills index rows.
 * - `inPrefix`: the memory ids the agent's stable prefix already holds (never delivered twice).
 * - `record`: write an injection-log row per assembly (default true).
 *
 * @since 0.1.0
 * @category models
 */
export interface AssemblerConfig {
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly skills?: ReadonlyArray<ProjectedContext.SkillRow> | undefined
  readonly inPrefix?: ReadonlyArray<string> | undefined
  readonly record?: boolean | undefined
}

/**
 * The config of an agent built with `StablePrefix.buildAgent`: its scopes, and its composed ids
 * as `inPrefix`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const configFromAgent = (
  agent: Pick<BuiltAgent, "scopes" | "composedIds">,
  extra: Omit<AssemblerConfig, "scopes" | "inPrefix"> = {}
): AssemblerConfig => ({ ...extra, scopes: agent.scopes, inPrefix: agent.composedIds })

/**
 * Per-turn options: the turn number (default: one more than the last turn assembled for the
 * session, starting at 0), the runtime's working state, and the mode (default `external`).
 *
 * @since 0.1.0
 * @category models
 */
export interface AssembleOptions {
  readonly turn?: number | undefined
  readonly workingState?: string | undefined
  readonly mode?: AssemblyMode | undefined
}

/**
 * The assembler.
 *
 * @since 0.1.0
 * @category models
 */
export interface ContextAssemblerService {
  /** The projected context of one external turn of `sessionId`, for the operator input `query`. */
  readonly assemble: (
    sessionId: string,
    query: string,
    options?: AssembleOptions
  ) => Effect.Effect<ProjectedContext.ProjectedContext, ProjectionFailure>
}

/**
 * The assembler tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ContextAssembler extends Context.Tag("@engram/ContextAssembler")<
  ContextAssembler,
  ContextAssemblerService
>() {}

/**
 * Builds an assembler over the `ContextProjection` in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (config: AssemblerConfig): Effect.Effect<ContextAssemblerService, never, ContextProjection> =>
  Effect.gen(function*() {
    const projection = yield* ContextProjection
    const nextTurn = yield* Ref.make(new Map<string, number>())
    const assemble = (sessionId: string, query: string, options: AssembleOptions = {}) =>
      Effect.gen(function*() {
        const turn = yield* Ref.modify(nextTurn, (turns) => {
          const turn = options.turn ?? turns.get(sessionId) ?? 0
          return [turn, new Map(turns).set(sessionId, Math.max(turns.get(sessionId) ?? 0, turn + 1))] as const
        })
        return yield* projection.project({
          sessionId,
          turn,
          query,
          scopes: config.scopes,
          mode: options.mode ?? "external",
          ...(options.workingState !== undefined ? { workingState: options.workingState } : {}),
          ...(config.skills !== undefined ? { skills: config.skills } : {}),
          ...(config.inPrefix !== undefined ? { inPrefix: config.inPrefix } : {}),
          ...(config.record !== undefined ? { record: config.record } : {})
        })
      }).pipe(Effect.withSpan("engram.assembler.assemble", { attributes: { sessionId } }))
    return { assemble } satisfies ContextAssemblerService
  })

/**
 * The assembler as a layer over `ContextProjection`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: AssemblerConfig): Layer.Layer<ContextAssembler, never, ContextProjection> =>
  Layer.effect(ContextAssembler, make(config))
