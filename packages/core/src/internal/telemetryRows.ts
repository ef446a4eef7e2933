/**
 * The telemetry store's errors, the checks and encodings a backend runs before it writes, and the
 * rule that picks the sessions a prune removes — shared by `TelemetryStore` and
 * `TelemetryRetention` (which document and export them), `InjectionLog` and the in-memory store,
 * so that the in-memory store imports no values from its public module. The error classes are
 * documented here and re-exported by name, so that a type inferred from one (in another package's
 * declarations) is named through `TelemetryStore`.
 *
 * @internal
 */
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ErrorClass from "../ErrorClass.js"
import { describeParseError } from "../MemoryWrite.js"
import * as PromptSnapshot from "../PromptSnapshot.js"
import { sortSessionIds } from "../SessionStore.js"
import type { PruneRequest } from "../TelemetryStore.js"
import * as Trajectory from "../Trajectory.js"
import { onFirstCall } from "./onFirstCall.js"

/**
 * A row failed to encode (e.g. an incognito row naming memories). Nothing was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTelemetryRow extends ErrorClass.TaggedError<InvalidTelemetryRow>()("InvalidTelemetryRow", {
  problem: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `telemetry row is invalid and was not stored: ${self.problem}`
}) {}

/**
 * The backend itself failed (I/O, connection, SQL). The operation left the store as it was.
 *
 * @since 0.1.0
 * @category errors
 */
export class TelemetryStoreFailure
  extends ErrorClass.Failure<TelemetryStoreFailure>()("TelemetryStoreFailure", "telemetry store")
{}

/**
 * A snapshot for the same `(sessionId, turn, call)` is already stored. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicateSnapshot extends ErrorClass.TaggedError<DuplicateSnapshot>()("DuplicateSnapshot", {
  sessionId: Schema.String,
  turn: Schema.Number,
  call: Schema.Number
}, {
  errorClass: "Conflict",
  message: (self) =>
    `a prompt snapshot of session ${self.sessionId}, turn ${self.turn}, call ${self.call} is already stored; ` +
    "snapshots are append-only"
}) {}

export const prepareSnapshot = (
  snapshot: PromptSnapshot.PromptSnapshot,
  entries: ReadonlyArray<Trajectory.TrajectoryEntry>
): Effect.Effect<
  {
    readonly encoded: typeof PromptSnapshot.PromptSnapshot.Encoded
    readonly entries: ReadonlyArray<Trajectory.TrajectoryEntry>
  },
  InvalidTelemetryRow
> =>
  Effect.gen(function*() {
    const encoded = yield* Either.match(PromptSnapshot.encode(snapshot), {
      onLeft: (error) => Effect.fail(new InvalidTelemetryRow({ problem: describeParseError(error) })),
      onRight: Effect.succeed
    })
    for (const entry of entries) {
      const problem = Trajectory.invalidEntry(entry)
      if (problem !== undefined) return yield* new InvalidTelemetryRow({ problem })
    }
    for (
      const [kind, hash] of [
        ["prefix", snapshot.prefix.hash],
        ["projection", snapshot.projection.hash],
        ["overlay", snapshot.overlay]
      ] as const
    ) {
      if (hash !== null && !entries.some((e) => e._tag === "Blob" && e.kind === kind && e.hash === hash)) {
        return yield* new InvalidTelemetryRow({
          problem: `the snapshot names the ${kind} ${hash}, but no such ${kind} blob is among its entries`
        })
      }
    }
    return { encoded, entries }
  })

export const decodeSnapshotRow = (
  body: unknown,
  usage: unknown
): Either.Either<PromptSnapshot.PromptSnapshot, string> =>
  typeof body !== "object" || body === null || Array.isArray(body)
    ? Either.left("the stored snapshot is not a JSON object")
    : PromptSnapshot.decodeStored(usage === null || usage === undefined ? body : { ...body, usage })

const encodeUsageEither = onFirstCall(() => Schema.encodeEither(PromptSnapshot.TokenUsage))

export const encodeUsage = (
  usage: PromptSnapshot.TokenUsage
): Effect.Effect<typeof PromptSnapshot.TokenUsage.Encoded, InvalidTelemetryRow> =>
  Either.match(encodeUsageEither(usage), {
    onLeft: (error) => Effect.fail(new InvalidTelemetryRow({ problem: `usage: ${describeParseError(error)}` })),
    onRight: Effect.succeed
  })

export const sessionsToPrune = (
  latest: ReadonlyArray<{ readonly sessionId: string; readonly at: number }>,
  request: PruneRequest,
  toMillis: (at: DateTime.Utc) => number
): ReadonlyArray<string> => {
  const newestFirst = [...latest].sort((a, b) =>
    b.at - a.at || (a.sessionId < b.sessionId ? 1 : a.sessionId > b.sessionId ? -1 : 0)
  )
  const cutoff = request.before === undefined ? undefined : toMillis(request.before)
  const keep = request.keepSessions === undefined ? Infinity : Math.max(0, Math.floor(request.keepSessions))
  return sortSessionIds(
    newestFirst.filter((s, index) => index >= keep || (cutoff !== undefined && s.at < cutoff)).map((s) => s.sessionId)
  )
}
