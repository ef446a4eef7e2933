/**
 * Inspect: what the model saw on any stored call, rebuilt from the session's trajectory.
 *
 * For each stored `PromptSnapshot`, {@link inspectSession} reads the prefix and projection blobs
 * and the message stream the snapshot names, and composes the request again with
 * `ModelRequest.compose` — the function the live loop used — so the result is the request as sent,
 * fragment by fragment with sources and memory ids, plus the projection's budget report. Each
 * rebuilt request is checked against the hash the snapshot recorded at call time (`verified`); a
 * mismatch or a missing entry is reported, never papered over.
 *
 * A library function, so the CLI (`engram inspect`) and the HTTP server render the same data.
 *
 * @since 0.1.0
 */
import { ErrorClass, MemoryQuery, MemoryStore, type MemoryStoreError } from "@engram/core"
import { ProjectionLayout, type PromptSnapshot, type SessionStore, TelemetryStore, Trajectory } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ModelRequest from "./ModelRequest.js"
import * as PromptObserver from "./PromptObserver.js"

/**
 * One stored call, rebuilt: the snapshot, the request and projection recomposed from the
 * trajectory, and whether the rebuilt request hashes to what was recorded when it was sent.
 *
 * @since 0.1.0
 * @category models
 */
export interface InspectedCall {
  readonly snapshot: PromptSnapshot.PromptSnapshot
  readonly request: ModelRequest.ModelRequest
  readonly projection: ProjectionLayout.ProjectedContext
  readonly verified: boolean
  /**
   * Memories forgotten since the call whose text was removed from what it refers to
   * (`PromptSnapshot.redacted`): the rebuild then shows `[forgotten]` in their place and no
   * longer hashes to what was sent.
   */
  readonly redacted: ReadonlyArray<string>
}

/**
 * A stored call could not be rebuilt: an entry it names is missing from the trajectory or does
 * not decode.
 *
 * @since 0.1.0
 * @category errors
 */
export class SnapshotUnreadable extends ErrorClass.TaggedError<SnapshotUnreadable>()("SnapshotUnreadable", {
  sessionId: Schema.String,
  turn: Schema.Number,
  call: Schema.Number,
  problem: Schema.String
}, {
  errorClass: "Unavailable",
  message: (self) =>
    `the snapshot of session ${self.sessionId}, turn ${self.turn}, call ${self.call} cannot be rebuilt: ` +
    self.problem
}) {}

/**
 * Rebuilds one snapshot's request from a trajectory (pure).
 *
 * @since 0.1.0
 * @category inspecting
 */
export const rebuild = (
  snapshot: PromptSnapshot.PromptSnapshot,
  trajectory: Trajectory.StoredTrajectory
): Either.Either<InspectedCall, string> =>
  Either.gen(function*() {
    const blob = (kind: Trajectory.BlobKind, hash: string) => {
      const found = trajectory.blobs.find((b) => b.kind === kind && b.hash === hash)
      return found === undefined ? Either.left(`the ${kind} ${hash} is not in the trajectory`) : Either.right(found)
    }
    const prefix = snapshot.prefix.hash === null
      ? []
      : yield* Either.flatMap(blob("prefix", snapshot.prefix.hash), Trajectory.prefixOf)
    const projection = snapshot.projection.hash === null
      ? ProjectionLayout.composeProjectedContext({ now: snapshot.at }, {
        mode: snapshot.mode,
        budget: ProjectionLayout.unbounded
      })
      : yield* Either.flatMap(blob("projection", snapshot.projection.hash), Trajectory.projectionOf)
    const messages: Array<SessionStore.SessionMessage> = []
    for (let seq = 0; seq < snapshot.messages.count; seq++) {
      const entry = trajectory.messages.find((m) => m.seq === seq)
      if (entry === undefined) return yield* Either.left(`message #${seq} is not in the trajectory`)
      messages.push(yield* Trajectory.messageOf(entry))
    }
    const at = snapshot.messages.input
    if (at === null) return yield* Either.left("the snapshot names no operator input")
    const input = messages[at]!
    if (input._tag !== "OperatorMessage") return yield* Either.left(`message #${at} is not an operator input`)
    const request = ModelRequest.compose({
      prefix,
      history: messages.slice(0, at),
      input,
      rounds: messages.slice(at + 1),
      projection
    })
    return {
      snapshot,
      request,
      projection,
      verified: PromptObserver.requestHash(request) === snapshot.request.hash,
      redacted: snapshot.redacted
    }
  })

/**
 * Every stored call of session `sessionId` (optionally one turn, one call), rebuilt, in turn and
 * call order.
 *
 * @since 0.1.0
 * @category inspecting
 */
export const inspectSession = (
  sessionId: string,
  filter: TelemetryStore.SnapshotFilter = {}
): Effect.Effect<
  ReadonlyArray<InspectedCall>,
  SnapshotUnreadable | TelemetryStore.TelemetryStoreFailure,
  TelemetryStore.TelemetryStore
> =>
  Effect.gen(function*() {
    const store = yield* TelemetryStore.TelemetryStore
    const { snapshots } = yield* store.listSnapshots(sessionId, filter)
    if (snapshots.length === 0) return []
    const trajectory = yield* store.readTrajectory(sessionId)
    return yield* Effect.forEach(snapshots, (snapshot) =>
      Either.match(rebuild(snapshot, trajectory), {
        onLeft: (problem) =>
          Effect.fail(new SnapshotUnreadable({ sessionId, turn: snapshot.turn, call: snapshot.call, problem })),
        onRight: Effect.succeed
      }))
  }).pipe(Effect.withSpan("engram.inspect", { attributes: { sessionId } }))

/**
 * A memory a stored call carried, as the store holds it now: when the fact holds (world time,
 * `MemoryQuery.describeValidity`: null when unbounded), its lifecycle now (`forgotten` when it is no
 * longer stored) and the memory that replaced it, if one did.
 *
 * @since 0.1.0
 * @category models
 */
export interface InspectedMemory {
  readonly id: string
  readonly validity: string | null
  readonly state: MemoryQuery.Lifecycle | "forgotten"
  readonly supersededBy: string | null
}

/**
 * The memories `call` carried (prefix and projection, in the order they appear), each with its
 * world time and lifecycle now (decision 0175): what `engram inspect` prints under the call.
 *
 * @since 0.1.0
 * @category inspecting
 */
export const memoriesOf = (
  call: InspectedCall
): Effect.Effect<ReadonlyArray<InspectedMemory>, MemoryStoreError.MemoryStoreFailure, MemoryStore.MemoryStore> =>
  Effect.gen(function*() {
    const ids = [...new Set(call.request.fragments.flatMap((fragment) => fragment.memoryIds))]
    if (ids.length === 0) return []
    const { records } = yield* (yield* MemoryStore.MemoryStore).get(ids)
    const byId = new Map(records.map((record) => [record.id, record]))
    const now = yield* DateTime.now
    return ids.map((id): InspectedMemory => {
      const record = byId.get(id)
      return record === undefined
        ? { id, validity: null, state: "forgotten", supersededBy: null }
        : {
          id,
          validity: MemoryQuery.describeValidity(record),
          state: MemoryQuery.lifecycleOf(record, now),
          supersededBy: record.supersededBy ?? null
        }
    })
  })
