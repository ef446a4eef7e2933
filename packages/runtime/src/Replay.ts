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
 * {@link verifySession} checks a replay against what was stored: each replayed call's
 * model-visible bytes against the call's prompt snapshot rebuilt from the trajectory
 * (`Inspect`), reporting the first differing byte with its offset and the text around it.
 *
 * How the calls of a turn are recovered: a turn opens with an operator input; its first call
 * carried the input and the projection, and each stored tool message answers one more call. A
 * turn that ended with an answer made `1 + tool messages` calls; a suspended turn, one per
 * stored tool message plus the one that asked for approval.
 *
 * @since 0.1.0
 */
import { type ContextProjection, type ProjectionLayout, SessionStore, type TelemetryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Inspect from "./Inspect.js"
import * as internal from "./internal/nativeLoop.js"
import * as ModelRequest from "./ModelRequest.js"
import type { NativeAgent } from "./NativeRuntime.js"
import * as PromptObserver from "./PromptObserver.js"
import * as Turn from "./Turn.js"

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
  readonly projection: ProjectionLayout.ProjectedContext
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
  ContextProjection.ProjectionFailure | SessionStore.SessionStoreFailure,
  SessionStore.SessionStore | ContextProjection.ContextProjection
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
      // Neither recorded nor observed: a replay rebuilds the requests, it runs no turn.
      const opened = yield* Turn.open(agent, {
        sessionId,
        turn: t + 1,
        history: messages.slice(0, start),
        input,
        record: false
      })
      const segment = messages.slice(start + 1, end)
      // Call 0 had no rounds; each stored tool message closed a round and opened the next call.
      const cuts = [0, ...segment.flatMap((message, i) => (message._tag === "ToolMessage" ? [i + 1] : []))]
      for (const [call, cut] of cuts.entries()) {
        const { request } = yield* Turn.call(opened, { call, rounds: segment.slice(0, cut), tools: agent.offered })
        calls.push({ sessionId, turn: t + 1, call, request, projection: opened.projection })
      }
    }
    return calls
  }).pipe(Effect.withSpan("agent.replay", { attributes: { sessionId: options.sessionId } }))

const encoder = new TextEncoder()
const decoder = new TextDecoder()

/**
 * Where two texts first differ: the UTF-8 byte offset, and up to `context` bytes either side of
 * it in each text (decoded, so a cut multi-byte character shows as U+FFFD).
 *
 * @since 0.1.0
 * @category models
 */
export interface ByteDifference {
  readonly offset: number
  readonly expectedBytes: number
  readonly actualBytes: number
  readonly expected: string
  readonly actual: string
}

/**
 * The first differing byte of `expected` and `actual` (UTF-8), or `undefined` when they are the
 * same bytes. A text that is a prefix of the other differs at its end. Pure.
 *
 * @since 0.1.0
 * @category verifying
 */
export const firstDifference = (expected: string, actual: string, context = 40): ByteDifference | undefined => {
  const a = encoder.encode(expected)
  const b = encoder.encode(actual)
  const shared = Math.min(a.length, b.length)
  let offset = 0
  while (offset < shared && a[offset] === b[offset]) offset++
  if (offset === a.length && offset === b.length) return undefined
  const around = (bytes: Uint8Array) =>
    decoder.decode(bytes.subarray(Math.max(0, offset - context), Math.min(bytes.length, offset + context)))
  return { offset, expectedBytes: a.length, actualBytes: b.length, expected: around(a), actual: around(b) }
}

/**
 * One call of a verification: whether a stored snapshot exists for it and whether the re-run sent
 * the same model-visible bytes (`difference` says where they first part).
 *
 * @since 0.1.0
 * @category models
 */
export interface VerifiedCall {
  readonly turn: number
  readonly call: number
  readonly stored: boolean
  readonly matches: boolean
  readonly difference: ByteDifference | undefined
}

/**
 * Re-runs session `sessionId` for `agent` ({@link replaySession}) and checks every call against
 * its stored snapshot, rebuilt from the trajectory: the model-visible bytes
 * (`PromptObserver.modelVisible`) must be equal. A replayed call with no stored snapshot, or a
 * stored one with no replayed call, is reported as not matching.
 *
 * @since 0.1.0
 * @category verifying
 */
export const verifySession = (options: {
  readonly agent: NativeAgent
  readonly sessionId: string
}): Effect.Effect<
  ReadonlyArray<VerifiedCall>,
  | ContextProjection.ProjectionFailure
  | SessionStore.SessionStoreFailure
  | Inspect.SnapshotUnreadable
  | TelemetryStore.TelemetryStoreFailure,
  SessionStore.SessionStore | ContextProjection.ContextProjection | TelemetryStore.TelemetryStore
> =>
  Effect.gen(function*() {
    const replayed = yield* replaySession(options)
    const stored = yield* Inspect.inspectSession(options.sessionId)
    const key = (turn: number, call: number) => `${turn}/${call}`
    const byKey = new Map(stored.map((c) => [key(c.snapshot.turn, c.snapshot.call), c] as const))
    const out: Array<VerifiedCall> = replayed.map((r) => {
      const s = byKey.get(key(r.turn, r.call))
      byKey.delete(key(r.turn, r.call))
      if (s === undefined) return { turn: r.turn, call: r.call, stored: false, matches: false, difference: undefined }
      const difference = firstDifference(PromptObserver.modelVisible(s.request), PromptObserver.modelVisible(r.request))
      return { turn: r.turn, call: r.call, stored: true, matches: difference === undefined, difference }
    })
    for (const s of byKey.values()) {
      out.push({
        turn: s.snapshot.turn,
        call: s.snapshot.call,
        stored: true,
        matches: false,
        difference: firstDifference(PromptObserver.modelVisible(s.request), "")
      })
    }
    return out
  }).pipe(Effect.withSpan("engram.replay.verify", { attributes: { sessionId: options.sessionId } }))
