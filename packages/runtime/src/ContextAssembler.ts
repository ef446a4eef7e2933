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
 * `compose(sessionId, query)` goes one step further and returns the request of the turn as
 * `ModelRequest.compose` — the one request composer every runtime uses — builds it: the agent's
 * stable prefix as the system message, the session's earlier inputs and answers, the operator
 * input, then the projection. It reports that request to the `PromptObserver` in context, as the
 * native loop does for each of its calls, so `PromptObserver.layerTelemetry` persists a snapshot
 * of every external turn and `Inspect` rebuilds it (one snapshot per turn, `call` 0: what the
 * external agent does with it afterwards is not Engram's to see).
 *
 * **The agent.** The prefix and the ids it composed travel together: `agent` is either a built
 * agent (fixed for the assembler's life) or an effect that builds it again for every turn
 * (`StablePrefix.buildAgent(config)`), so a memory promoted mid-session reaches the prefix on the
 * next turn, and the projection of that same turn withholds exactly the ids and addresses that
 * prefix holds — never the stale set of an earlier build (which would deliver a memory twice, or a
 * memory that left the prefix not at all). An `incognito` turn uses the authored prefix and no
 * composed ids. The prefix, the projection and the request come from `Turn` (decision 0166), as on every runtime.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextProjection } from "@engram/core"
 * import { ContextAssembler } from "@engram/runtime"
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
import {
  ContextProjection,
  type MemoryRecord,
  type ProjectionLayout,
  type PromptFragment,
  SessionStore
} from "@engram/core"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as Agent from "./Agent.js"
import * as ModelRequest from "./ModelRequest.js"
import type { BuiltAgent } from "./StablePrefix.js"
import * as Turn from "./Turn.js"

/**
 * The modes an external turn may be assembled in: `external` (the default), `autonomous` (a
 * goal-driven turn: no prior-session digest) and `incognito` (working state and skills only).
 *
 * @since 0.1.0
 * @category models
 */
export type AssemblyMode = Extract<ProjectionLayout.ProjectionMode, "external" | "autonomous" | "incognito">

/**
 * What every assembly of one agent shares.
 *
 * - `scopes`: the memory scopes the agent reads.
 * - `skills`: the skills index rows.
 * - `agent`: the agent (see `Agent.Agent`) — a value, or an effect that builds it again
 *   for every turn (e.g. `StablePrefix.buildAgent(config)`; its failure fails the turn with a
 *   `ProjectionFailure`). Without it: no prefix, nothing withheld, no identity tier.
 * - `record`: write an injection-log row per assembly (default true).
 *
 * @since 0.1.0
 * @category models
 */
export interface AssemblerConfig<R = never> {
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
  readonly agent?: Agent.Agent | Effect.Effect<Agent.Agent, unknown, R> | undefined
  readonly record?: boolean | undefined
}

/**
 * The config of an agent built with `StablePrefix.buildAgent`, fixed for the assembler's life: its
 * scopes and the agent. To follow promotions mid-session, pass `agent` as the build effect instead.
 *
 * @since 0.1.0
 * @category constructors
 */
export const configFromAgent = (
  agent: Pick<BuiltAgent, "scopes"> & Agent.Agent,
  extra: Omit<AssemblerConfig, "scopes" | "agent"> = {}
): AssemblerConfig => {
  const { scopes, ...rest } = agent
  return { ...extra, scopes, agent: rest }
}

/**
 * Per-turn options: the turn number (default: one more than the last turn assembled for the
 * session, starting at 1 as the native loop counts), the runtime's working state, and the mode
 * (default `external`).
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
 * Why an external turn could not be assembled.
 *
 * @since 0.1.0
 * @category errors
 */
export type AssemblyError = ContextProjection.ProjectionFailure | Agent.IncognitoPrefixHoldsMemory

/**
 * The assembler.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** The projected context of one external turn of `sessionId`, for the operator input `query`. */
  readonly assemble: (
    sessionId: string,
    query: string,
    options?: AssembleOptions
  ) => Effect.Effect<ProjectionLayout.ProjectedContext, AssemblyError>
  /**
   * The request of one external turn, composed by `ModelRequest.compose` from the agent's prefix
   * (the authored one on an incognito turn), the session's earlier inputs and answers, the
   * operator input `query` and the turn's projection (assembled as by `assemble`, against the
   * same build of the agent as the prefix), and reported to the `PromptObserver` in context.
   */
  readonly compose: (
    sessionId: string,
    query: string,
    options?: AssembleOptions
  ) => Effect.Effect<AssembledRequest, AssemblyError>
  /** Records the external agent's answer to the session's latest turn (the next turn's history). */
  readonly answered: (sessionId: string, text: string) => Effect.Effect<void>
  /**
   * The session's operator inputs and the external agent's answers, in order, as `compose` and
   * `answered` recorded them — what `Extraction` reads for an ACP session (`messages`).
   */
  readonly transcript: (sessionId: string) => Effect.Effect<ReadonlyArray<SessionStore.SessionMessage>>
}

/**
 * A composed external turn: the request, the prefix in it and the projection in it.
 *
 * @since 0.1.0
 * @category models
 */
export interface AssembledRequest {
  readonly request: ModelRequest.ModelRequest
  readonly prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly projection: ProjectionLayout.ProjectedContext
  readonly turn: number
}

/**
 * The assembler tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ContextAssembler extends Context.Tag("@engram/runtime/ContextAssembler")<
  ContextAssembler,
  Service
>() {}

/**
 * Builds an assembler over the `ContextProjection` in context (and what the `agent` effect
 * needs, taken from the context now).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <R = never>(
  config: AssemblerConfig<R>
): Effect.Effect<Service, never, ContextProjection.ContextProjection | R> =>
  Effect.gen(function*() {
    const projection = yield* ContextProjection.ContextProjection
    const context = yield* Effect.context<R>()
    const nextTurn = yield* Ref.make(new Map<string, number>())
    // Each session's operator inputs and the external agent's answers, as `compose` saw them.
    const streams = yield* Ref.make(new Map<string, ReadonlyArray<SessionStore.SessionMessage>>())

    const agentOf = (
      sessionId: string,
      turn: number
    ): Effect.Effect<Agent.Agent, ContextProjection.ProjectionFailure> =>
      config.agent === undefined
        ? Effect.succeed({})
        : Effect.isEffect(config.agent)
        ? config.agent.pipe(
          Effect.provide(context),
          Effect.mapError((cause) =>
            cause instanceof ContextProjection.ProjectionFailure
              ? cause
              : new ContextProjection.ProjectionFailure({ sessionId, turn, cause })
          )
        )
        : Effect.succeed(config.agent)

    /**
     * One turn against one build of the agent, through `Turn.open` (decision 0166): the assembler's
     * scopes, skills and the call's mode and working state are the agent's. `advance` appends the
     * input to the session's stream (`compose`); `assemble` only reads it.
     */
    const openTurn = (sessionId: string, query: string, options: AssembleOptions, advance: boolean) =>
      Effect.gen(function*() {
        const turn = yield* Ref.modify(nextTurn, (turns) => {
          // Counted from 1, as the native loop counts its turns.
          const turn = options.turn ?? turns.get(sessionId) ?? 1
          return [turn, new Map(turns).set(sessionId, Math.max(turns.get(sessionId) ?? 1, turn + 1))] as const
        })
        const agent = yield* agentOf(sessionId, turn)
        const input = new SessionStore.OperatorMessage({ text: query, at: yield* DateTime.now })
        const history = advance
          ? yield* Ref.modify(streams, (all) => {
            const before = all.get(sessionId) ?? []
            return [before, new Map(all).set(sessionId, [...before, input])] as const
          })
          : (yield* Ref.get(streams)).get(sessionId) ?? []
        const turnAgent: Turn.TurnAgent = {
          ...agent,
          scopes: config.scopes,
          mode: options.mode ?? "external",
          workingState: options.workingState,
          skills: config.skills
        }
        return yield* Turn.open(turnAgent, { sessionId, turn, input, history, record: config.record }).pipe(
          Effect.provideService(ContextProjection.ContextProjection, projection),
          // The assembler's callers are told the incognito rule by its own name (AssemblyError).
          Effect.catchTag("ProjectionFailure", (failure) =>
            Effect.fail(failure.cause instanceof Agent.IncognitoPrefixHoldsMemory ? failure.cause : failure))
        )
      }).pipe(Effect.withSpan("engram.assembler.assemble", { attributes: { sessionId } }))

    const assemble = (sessionId: string, query: string, options: AssembleOptions = {}) =>
      Effect.map(openTurn(sessionId, query, options, false), (opened) =>
        opened.projection)

    const compose = (sessionId: string, query: string, options: AssembleOptions = {}) =>
      Effect.gen(function*() {
        const opened = yield* openTurn(sessionId, query, options, true)
        const { request } = yield* Turn.call(opened, { call: 0, rounds: [], tools: [] })
        return {
          request,
          prefix: opened.plan.prefix,
          projection: opened.projection,
          turn: opened.request.turn
        } satisfies AssembledRequest
      })

    const answered = (sessionId: string, text: string) =>
      Effect.flatMap(DateTime.now, (at) =>
        Ref.update(streams, (all) => {
          const before = all.get(sessionId)
          if (before === undefined) return all
          const answer = new SessionStore.AssistantMessage({ text, toolCalls: [], at })
          return new Map(all).set(sessionId, [...before, answer])
        }))

    const transcript = (sessionId: string) => Effect.map(Ref.get(streams), (all) => all.get(sessionId) ?? [])

    return { assemble, compose, answered, transcript } satisfies Service
  })

/**
 * The assembler as a layer over `ContextProjection` (and what the `agent` effect needs).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <R = never>(
  config: AssemblerConfig<R>
): Layer.Layer<ContextAssembler, never, ContextProjection.ContextProjection | R> =>
  Layer.effect(ContextAssembler, make(config))
