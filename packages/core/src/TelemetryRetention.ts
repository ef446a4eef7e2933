/**
 * How long the telemetry store keeps prompt snapshots. `TelemetryStore.prune` removes whole
 * sessions — their snapshots and their trajectory — by age and by count; {@link sessionsToPrune}
 * is the one rule every backend picks those sessions with. A {@link RetentionPolicy} says how much
 * to keep: {@link sweep} applies it once (what `engram telemetry prune` runs), and
 * {@link layer} applies it on a schedule for the lifetime of a layer.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import * as internal from "./internal/telemetryRows.js"
import { type PruneRequest, type PruneResult, TelemetryStore, type TelemetryStoreFailure } from "./TelemetryStore.js"

/**
 * The sessions a sweep removes, given each session's newest snapshot time (epoch ms). Every
 * backend decides with this function. Ties in time are broken by session id (the larger id is
 * the newer), so the choice is the same everywhere.
 *
 * @since 0.1.0
 * @category retention
 */
export const sessionsToPrune: (
  latest: ReadonlyArray<{ readonly sessionId: string; readonly at: number }>,
  request: PruneRequest,
  toMillis: (at: DateTime.Utc) => number
) => ReadonlyArray<string> = internal.sessionsToPrune

/**
 * How long prompt snapshots are kept: sessions whose newest snapshot is older than `maxAge`
 * are removed, and at most `maxSessions` sessions (those with the newest snapshots) are kept.
 * Either bound may be left out.
 *
 * @since 0.1.0
 * @category retention
 */
export interface RetentionPolicy {
  readonly maxAge?: Duration.DurationInput | undefined
  readonly maxSessions?: number | undefined
}

/**
 * One retention sweep now: `TelemetryStore.prune` with the cut-off `Clock` time
 * minus `maxAge`. Logs what it removed.
 *
 * @since 0.1.0
 * @category retention
 */
export const sweep = (policy: RetentionPolicy): Effect.Effect<PruneResult, TelemetryStoreFailure, TelemetryStore> =>
  Effect.gen(function*() {
    const store = yield* TelemetryStore
    const now = yield* DateTime.now
    const before = policy.maxAge === undefined ? undefined : DateTime.subtractDuration(now, policy.maxAge)
    const result = yield* store.prune({ before, keepSessions: policy.maxSessions })
    if (result.sessions.length > 0) {
      yield* Effect.logInfo("telemetry retention removed sessions").pipe(
        Effect.annotateLogs({ sessions: result.sessions.length, snapshots: result.snapshots, entries: result.entries })
      )
    }
    return result
  }).pipe(Effect.withSpan("engram.TelemetryStore.sweep"))

/**
 * Retention as a background fiber for the lifetime of the layer: a {@link sweep} at start and
 * then on `schedule` (e.g. `Schedule.spaced("1 hour")`). A failed sweep is logged and the next
 * one runs as planned.
 *
 * @since 0.1.0
 * @category retention
 */
export const layer = <Out>(
  policy: RetentionPolicy,
  schedule: Schedule.Schedule<Out, unknown>
): Layer.Layer<never, never, TelemetryStore> =>
  Layer.scopedDiscard(
    Effect.forkScoped(
      sweep(policy).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning("telemetry retention sweep failed").pipe(
            Effect.annotateLogs({ problem: error.message })
          )
        ),
        Effect.repeat(schedule)
      )
    )
  )
