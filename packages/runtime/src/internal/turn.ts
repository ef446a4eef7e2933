/**
 * The body of `Turn`: the one assembly of a turn (plan → project → compose → observe).
 *
 * It imports only types from the public module, and nothing from `NativeRuntime.ts`: the native
 * loop imports the turn, never the other way (decision 0166).
 *
 * @internal
 */
import { ContextProjection } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Agent from "../Agent.js"
import * as ModelRequest from "../ModelRequest.js"
import * as PromptObserver from "../PromptObserver.js"
import type { Composed, Opened, Step, TurnAgent, TurnRequest, TurnSettings } from "../Turn.js"

export const open = (
  agent: TurnAgent,
  request: TurnRequest,
  settings?: TurnSettings
): Effect.Effect<Opened, ContextProjection.ProjectionFailure, ContextProjection.ContextProjection> =>
  Effect.gen(function*() {
    const plan = yield* Agent.planTurn(agent, {
      sessionId: request.sessionId,
      turn: request.turn,
      query: request.input.text,
      mode: agent.mode,
      scopes: agent.scopes,
      workingState: agent.workingState,
      skills: agent.skills,
      record: request.record,
      projection: settings
    }).pipe(
      // An incognito agent whose prefix holds memory: the turn's projection cannot be requested.
      Effect.mapError((cause) =>
        new ContextProjection.ProjectionFailure({ sessionId: request.sessionId, turn: request.turn, cause })
      )
    )
    const projection = yield* Effect.flatMap(
      ContextProjection.ContextProjection,
      (service) => service.project(plan.request)
    )
    return { agent, request, plan, projection }
  })

export const call = (opened: Opened, step: Step): Effect.Effect<Composed> =>
  Effect.gen(function*() {
    const { agent, plan, projection, request } = opened
    const inputs: ModelRequest.RequestInput = {
      prefix: plan.prefix,
      history: request.history,
      input: request.input,
      rounds: step.rounds,
      projection,
      cacheHints: agent.cacheHints
    }
    const composed = ModelRequest.compose(inputs)
    if (request.record !== false) {
      yield* PromptObserver.observe({
        sessionId: request.sessionId,
        turn: request.turn,
        call: step.call,
        request: composed,
        tools: step.tools,
        projection,
        inputs,
        scopes: agent.scopes,
        overlay: plan.report
      })
    }
    return { request: composed, inputs, projection }
  })

export const compose = (
  agent: TurnAgent,
  request: TurnRequest,
  settings?: TurnSettings
): Effect.Effect<Composed, ContextProjection.ProjectionFailure, ContextProjection.ContextProjection> =>
  Effect.flatMap(open(agent, request, settings), (opened) => call(opened, { call: 0, rounds: [], tools: [] }))
