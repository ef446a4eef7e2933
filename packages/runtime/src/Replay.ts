/**
 * Replay: the model requests of a stored session, rebuilt from what the session stores — its
 * operator, assistant and tool messages — with each turn's context projected afresh.
 *
 * A session never stores its projections, so replaying it cannot re-send stale context: every
 * turn is projected again from the stores as they are now, through the same `ContextProjection`
 * and the same request composition as the live loop (`ModelRequest.compose`). Against the same
 * store state (same records, same clock), the replayed requests are byte-identical to the ones
 * the model received live; after the memory changed, they show what the model would be sent now.
 *
 * Nothing is called and nothing is written: no model call, no tool run, and no injection-log row
 * (the projection runs with `record: false`).
 *
 * How the calls of a turn are recovered: a turn opens with an operator input; its first call
 * carried the input and the projection, and each stored tool message answers one more call. A
 * turn that ended with an answer made `1 + tool messages` calls; a suspended turn, one per
 * stored tool message plus the one that asked for approval.
 *
 * @since 0.1.0
 */
import { type ProjectedContext, SessionStore } from "@engram/core"
import * as Effect from "effect/Effect"
import type { ContextProjection, ProjectionFailure } from "./ContextProjection.js"
import * as internal from "./internal/nativeLoop.js"
import * as ModelRequest from "./ModelRequest.js"
import type { NativeAgent } from "./NativeRuntime.js"

/**
 * One replayed model call: where it sat in the session and the request it was (or would now be)
 * sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReplayedCall {
  readonly sessionId: string
  readonly turn: number
  readonly call: number
  readonly request: ModelRequest.ModelRequest
  readonly projection: ProjectedContext.ProjectedContext
}

/**
 * Rebuilds every model request of session `sessionId` for `agent`, in call order.
 *
 * @since 0.1.0
 * @category replay
 */
export const replaySession = (options: {
  readonly agent: NativeAgent
  readonly sessionId: string
}): Effect.Effect<
  ReadonlyArray<ReplayedCall>,
  ProjectionFailure | SessionStore.SessionStoreFailure,
  SessionStore.SessionStore | ContextProjection
> =>
  Effect.gen(function*() {
    const { agent, sessionId } = options
    const messages = (yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.load(sessionId))).messages
    const starts: Array<number> = []
    messages.forEach((message, index) => {
      if (internal.isOperatorInput(message)) starts.push(index)
    })
    const calls: Array<ReplayedCall> = []
    for (const [t, start] of starts.entries()) {
      const end = starts[t + 1] ?? messages.length
      const input = messages[start] as SessionStore.OperatorMessage
      const turn = { agent, sessionId, turn: t + 1, history: messages.slice(0, start), input }
      const projection = yield* internal.project(turn, false)
      const segment = messages.slice(start + 1, end)
      // Call 0 had no rounds; each stored tool message closed a round and opened the next call.
      const cuts = [0, ...segment.flatMap((message, i) => (message._tag === "ToolMessage" ? [i + 1] : []))]
      cuts.forEach((cut, call) => {
        const request = ModelRequest.compose({
          prefix: agent.prefix,
          history: turn.history,
          input,
          rounds: segment.slice(0, cut),
          projection,
          cacheHints: agent.cacheHints
        })
        calls.push({ sessionId, turn: turn.turn, call, request, projection })
      })
    }
    return calls
  }).pipe(Effect.withSpan("agent.replay", { attributes: { sessionId: options.sessionId } }))
