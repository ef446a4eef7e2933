/**
 * What a store holds of each session, in one line: how many turns and messages its history has,
 * how many model calls were stored as prompt snapshots and when the last one was sent. `engram
 * sessions` lists them and `GET /api/sessions` serves them (scoped by `ScopeView`), newest first.
 *
 * The `SessionStore` is read when one is provided (its histories give the messages); without one
 * (a server that serves telemetry only) a session is what its stored snapshots say.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as SessionStore from "./SessionStore.js"
import * as TelemetryStore from "./TelemetryStore.js"

/**
 * One session: its id; `turns` (operator inputs in its history, or stored turns when it has no
 * history); `messages` in its history; `calls` stored as prompt snapshots; `lastCallAt`, when the latest stored call was sent
 * (`null` without one).
 *
 * @since 0.1.0
 * @category models
 */
export class SessionSummary extends Schema.Class<SessionSummary>("SessionSummary")({
  sessionId: SessionStore.SessionId,
  turns: Schema.NonNegativeInt,
  messages: Schema.NonNegativeInt,
  calls: Schema.NonNegativeInt,
  lastCallAt: Schema.NullOr(Schema.DateTimeUtc)
}) {}

/**
 * The one order sessions are listed in: the latest stored call first; sessions without a stored
 * call after them, by id (`SessionStore.compareSessionIds`).
 *
 * @since 0.1.0
 * @category ordering
 */
export const newestFirst = (a: SessionSummary, b: SessionSummary): number => {
  if (a.lastCallAt !== null && b.lastCallAt !== null) {
    const byTime = DateTime.toEpochMillis(b.lastCallAt) - DateTime.toEpochMillis(a.lastCallAt)
    if (byTime !== 0) return byTime
  } else if (a.lastCallAt !== null || b.lastCallAt !== null) {
    return a.lastCallAt === null ? 1 : -1
  }
  return SessionStore.compareSessionIds(a.sessionId, b.sessionId)
}

/**
 * The summary of one session, from its history and its stored snapshots.
 *
 * @since 0.1.0
 * @category constructors
 */
export const summarize = (
  sessionId: SessionStore.SessionId
): Effect.Effect<
  SessionSummary,
  SessionStore.SessionStoreFailure | TelemetryStore.TelemetryStoreFailure,
  SessionStore.SessionStore | TelemetryStore.TelemetryStore
> =>
  Effect.gen(function*() {
    const sessions = yield* SessionStore.SessionStore
    const history = (yield* sessions.load(sessionId)).messages
    const { snapshots } = yield* Effect.flatMap(
      TelemetryStore.TelemetryStore,
      (store) => store.listSnapshots(sessionId)
    )
    const inputs = history.filter((message) => message._tag === "OperatorMessage").length
    const storedTurns = new Set(snapshots.map((snapshot) => snapshot.turn)).size
    const lastCallAt = snapshots.reduce<DateTime.Utc | null>(
      (latest, snapshot) =>
        latest === null || DateTime.toEpochMillis(snapshot.at) > DateTime.toEpochMillis(latest) ? snapshot.at : latest,
      null
    )
    return new SessionSummary({
      sessionId,
      turns: Math.max(inputs, storedTurns),
      messages: history.length,
      calls: snapshots.length,
      lastCallAt
    })
  })

/**
 * Every session the store holds something of — a history (`SessionStore`) or injection rows
 * (`TelemetryStore`) — summarized, {@link newestFirst}.
 *
 * @since 0.1.0
 * @category accessors
 */
export const list: Effect.Effect<
  ReadonlyArray<SessionSummary>,
  SessionStore.SessionStoreFailure | TelemetryStore.TelemetryStoreFailure,
  SessionStore.SessionStore | TelemetryStore.TelemetryStore
> = Effect.gen(function*() {
  const kept = yield* Effect.flatMap(SessionStore.SessionStore, (sessions) => sessions.listSessions())
  const logged = yield* Effect.flatMap(TelemetryStore.TelemetryStore, (store) => store.listSessions())
  const ids = [...new Set([...kept, ...logged])]
  const summaries = yield* Effect.forEach(ids, summarize)
  return [...summaries].sort(newestFirst)
})
