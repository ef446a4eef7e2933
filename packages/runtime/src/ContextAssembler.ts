/**
 * The context assembler of the external runtime: what an agent that Engram does not run (an ACP
 * agent, another framework's loop) gets from Engram on each turn.
 *
 * `assemble(sessionId, query)` calls the same `ContextProjection` the native loop calls — mode
 * `external` — so an external agent receives byte for byte the projected context a native agent
 * would for the same store, query and state: the same sections, budget, `<injected_memory>`
 * envelope (identity tier included), incognito rule and injection-log row. The external runtime
 * keeps its own session history; the assembler only numbers the turns it assembles, per session.
 *
 * `compose(sessionId, query)` goes one step further and returns the model request of the turn's
 * first call as `ModelRequest.compose` — the one request composer every runtime uses — builds it:
 * the agent's stable prefix as the system message, the operator input, then the projection.
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
import { type MemoryRecord, MemoryWrite, type ProjectedContext, type PromptFragment, SessionStore } from "@engram/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import { ContextProjection, type IdentitySource, type ProjectionFailure } from "./ContextProjection.js"
import * as ModelRequest from "./ModelRequest.js"
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
 * - `identity`: where the identity tier reads from (`StablePrefix.buildAgent`'s `identity`).
 * - `prefix`: the agent's stable prefix, for {@link ContextAssemblerService.compose}.
 * - `record`: write an injection-log row per assembly (default true).
 *
 * @since 0.1.0
 * @category models
 */
export interface AssemblerConfig {
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly skills?: ReadonlyArray<ProjectedContext.SkillRow> | undefined
  readonly inPrefix?: ReadonlyArray<string> | undefined
  readonly identity?: IdentitySource | undefined
  readonly prefix?: ReadonlyArray<PromptFragment.AgentPromptSectionData> | undefined
  readonly record?: boolean | undefined
}

/**
 * The config of an agent built with `StablePrefix.buildAgent`: its scopes, its composed ids as
 * `inPrefix`, its identity source and its prefix.
 *
 * @since 0.1.0
 * @category constructors
 */
export const configFromAgent = (
  agent: Pick<BuiltAgent, "scopes" | "composedIds"> & Partial<Pick<BuiltAgent, "identity" | "prefix">>,
  extra: Omit<AssemblerConfig, "scopes" | "inPrefix" | "identity" | "prefix"> = {}
): AssemblerConfig => ({
  ...extra,
  scopes: agent.scopes,
  inPrefix: agent.composedIds,
  ...(agent.identity !== undefined ? { identity: agent.identity } : {}),
  ...(agent.prefix !== undefined ? { prefix: agent.prefix } : {})
})

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
  /**
   * The model request of the turn's first call, composed by `ModelRequest.compose` from the
   * config's prefix, the operator input `query` and the turn's projection (assembled as by
   * `assemble`), with the projection itself.
   */
  readonly compose: (
    sessionId: string,
    query: string,
    options?: AssembleOptions
  ) => Effect.Effect<AssembledRequest, ProjectionFailure>
}

/**
 * A composed external turn: the request and the projection in it.
 *
 * @since 0.1.0
 * @category models
 */
export interface AssembledRequest {
  readonly request: ModelRequest.ModelRequest
  readonly projection: ProjectedContext.ProjectedContext
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
          ...(config.identity !== undefined ? { identity: config.identity } : {}),
          ...(config.record !== undefined ? { record: config.record } : {})
        })
      }).pipe(Effect.withSpan("engram.assembler.assemble", { attributes: { sessionId } }))
    const compose = (sessionId: string, query: string, options: AssembleOptions = {}) =>
      Effect.gen(function*() {
        const input = new SessionStore.OperatorMessage({ text: query, at: yield* MemoryWrite.now })
        const projection = yield* assemble(sessionId, query, options)
        const request = ModelRequest.compose({ prefix: config.prefix ?? [], history: [], input, rounds: [], projection })
        return { request, projection } satisfies AssembledRequest
      })
    return { assemble, compose } satisfies ContextAssemblerService
  })

/**
 * The assembler as a layer over `ContextProjection`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (config: AssemblerConfig): Layer.Layer<ContextAssembler, never, ContextProjection> =>
  Layer.effect(ContextAssembler, make(config))
