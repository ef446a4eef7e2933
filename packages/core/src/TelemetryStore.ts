/**
 * The `TelemetryStore` service: what Engram records about the prompts it assembled, for
 * after-the-fact inspection.
 *
 * - The **injection log** (`InjectionLog`): one row per recorded projection, naming the memories
 *   and sections a turn delivered.
 * - **Prompt snapshots** (`PromptSnapshot`): one per model call, `(sessionId, turn, call)`,
 *   holding references — section names, sizes, memory ids, content hashes — into the session's
 *   **trajectory** (`Trajectory`): the append-only, content-addressed log where the text of the
 *   session's messages and of each distinct prefix and projection lives once.
 * - **Retention** (`TelemetryRetention`): {@link Service.prune} drops whole sessions'
 *   snapshots and trajectories by age and by count.
 * - **Forgetting** (`TelemetryRedaction`): {@link Service.forgetMemories} removes
 *   forgotten memories' text from every stored entry and snapshot.
 *
 * Every row is Schema-encodable to plain JSON (`InjectionLog.encodeInjectionRow`,
 * {@link prepareSnapshot}, `PromptSnapshot.encode`), so a SQL backend stores encoded rows.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type { InjectionLog, InjectionLogRow } from "./InjectionLog.js"
import * as InMemoryTelemetryStore from "./internal/inMemoryTelemetryStore.js"
import type { DuplicateSnapshot, InvalidTelemetryRow, TelemetryStoreFailure } from "./internal/telemetryRows.js"
import * as internal from "./internal/telemetryRows.js"
import type * as PromptSnapshot from "./PromptSnapshot.js"
import type { SessionId } from "./SessionStore.js"
import type * as Trajectory from "./Trajectory.js"

// The store's errors, documented where they are defined.
export { DuplicateSnapshot, InvalidTelemetryRow, TelemetryStoreFailure } from "./internal/telemetryRows.js"

/**
 * A session's snapshots ordered by turn then call, with the number of stored rows that failed to
 * decode and were skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotList {
  readonly snapshots: ReadonlyArray<PromptSnapshot.PromptSnapshot>
  readonly skipped: number
}

/**
 * Narrows a snapshot listing to one turn and/or one call.
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotFilter {
  readonly turn?: number | undefined
  readonly call?: number | undefined
}

/**
 * What a retention sweep removes: sessions whose newest snapshot is older than `before`, and —
 * beyond the `keepSessions` sessions with the newest snapshots — every older session. A session
 * goes whole (its snapshots and its trajectory), so a snapshot that remains can always be rebuilt.
 *
 * @since 0.1.0
 * @category models
 */
export interface PruneRequest {
  readonly before?: DateTime.Utc | undefined
  readonly keepSessions?: number | undefined
}

/**
 * What a sweep removed.
 *
 * @since 0.1.0
 * @category models
 */
export interface PruneResult {
  readonly sessions: ReadonlyArray<SessionId>
  readonly snapshots: number
  readonly entries: number
}

/**
 * What removing forgotten memories' text changed: trajectory entries rewritten, snapshots updated.
 *
 * @since 0.1.0
 * @category models
 */
export interface ForgetTelemetryResult {
  readonly entries: number
  readonly snapshots: number
}

/**
 * The telemetry store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Appends one injection-log row. */
  readonly appendInjection: (row: InjectionLogRow) => Effect.Effect<void, InvalidTelemetryRow | TelemetryStoreFailure>

  /**
   * Stores one prompt snapshot together with the trajectory entries it refers to, atomically.
   * Entries already stored are skipped: a blob whose hash the session holds, a message at a
   * position the session holds (the first body written at a position stands). Refused with
   * {@link InvalidTelemetryRow} — nothing stored — when the snapshot does not encode, an entry's
   * hash is not its body's, or the snapshot names a prefix or projection blob that is not among
   * `entries`; with {@link DuplicateSnapshot} when its `(sessionId, turn, call)` is taken.
   */
  readonly appendSnapshot: (
    snapshot: PromptSnapshot.PromptSnapshot,
    entries: ReadonlyArray<Trajectory.TrajectoryEntry>
  ) => Effect.Effect<void, InvalidTelemetryRow | DuplicateSnapshot | TelemetryStoreFailure>

  /** A session's snapshots by turn then call (optionally one turn / one call); empty when unknown. */
  readonly listSnapshots: (
    sessionId: SessionId,
    filter?: SnapshotFilter
  ) => Effect.Effect<SnapshotList, TelemetryStoreFailure>

  /** A session's trajectory: messages by position, blobs in storing order. */
  readonly readTrajectory: (sessionId: SessionId) => Effect.Effect<Trajectory.StoredTrajectory, TelemetryStoreFailure>

  /**
   * Records the token usage the provider reported for a stored snapshot's call. `false` when no
   * such snapshot is stored.
   */
  readonly recordUsage: (
    key: PromptSnapshot.SnapshotKey,
    usage: PromptSnapshot.TokenUsage
  ) => Effect.Effect<boolean, InvalidTelemetryRow | TelemetryStoreFailure>

  /**
   * Removes whole sessions' snapshots and trajectories by age and count (see {@link PruneRequest});
   * every backend picks the sessions with `TelemetryRetention.sessionsToPrune`.
   */
  readonly prune: (request: PruneRequest) => Effect.Effect<PruneResult, TelemetryStoreFailure>

  /**
   * Removes forgotten memories' text from every stored trajectory entry and prompt snapshot (see
   * `TelemetryRedaction.planForget`). Snapshots that referred to a changed entry are re-pointed at
   * it and list the memories in `redacted`. The memory stores call it inside their `forget` transaction (via
   * `MemoryForget.forgetTelemetry`); it is idempotent.
   */
  readonly forgetMemories: (
    forgotten: ReadonlyArray<Trajectory.ForgottenText>
  ) => Effect.Effect<ForgetTelemetryResult, TelemetryStoreFailure>

  /** A session's injection rows, in append order (empty for an unknown session). */
  readonly listInjections: (sessionId: SessionId) => Effect.Effect<InjectionLog, TelemetryStoreFailure>
  /**
   * Every session with at least one stored injection row, each once, sorted as
   * `SessionStore.compareSessionIds` sorts. For tools that walk a whole store (a copy to another
   * backend, an audit).
   */
  readonly listSessions: () => Effect.Effect<ReadonlyArray<SessionId>, TelemetryStoreFailure>
}

/**
 * The telemetry store service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class TelemetryStore extends Context.Tag("@engram/core/TelemetryStore")<TelemetryStore, Service>() {}

/**
 * A snapshot append, checked and encoded: what a backend writes. Fails with
 * {@link InvalidTelemetryRow} naming the problem — a snapshot that does not encode, an entry whose
 * hash is not its body's, or a prefix, projection or overlay the snapshot names but `entries` does
 * not hold. Backends call this before writing anything.
 *
 * @since 0.1.0
 * @category encoding
 */
export const prepareSnapshot: (
  snapshot: PromptSnapshot.PromptSnapshot,
  entries: ReadonlyArray<Trajectory.TrajectoryEntry>
) => Effect.Effect<
  {
    readonly encoded: typeof PromptSnapshot.PromptSnapshot.Encoded
    readonly entries: ReadonlyArray<Trajectory.TrajectoryEntry>
  },
  InvalidTelemetryRow
> = internal.prepareSnapshot

/**
 * Decodes a stored snapshot row: the encoded snapshot `body`, with the usage recorded later (if
 * any) laid over it. For SQL backends, which keep usage in its own column.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeSnapshotRow: (
  body: unknown,
  usage: unknown
) => Either.Either<PromptSnapshot.PromptSnapshot, string> = internal.decodeSnapshotRow

/**
 * Encodes reported token usage, failing with {@link InvalidTelemetryRow} (a negative count, say).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeUsage: (
  usage: PromptSnapshot.TokenUsage
) => Effect.Effect<typeof PromptSnapshot.TokenUsage.Encoded, InvalidTelemetryRow> = internal.encodeUsage

/**
 * The in-memory telemetry store. Rows are kept encoded and decoded on read, as a database
 * backend would.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: () => Service = InMemoryTelemetryStore.make

/**
 * The in-memory telemetry store as a layer. Each layer build starts empty.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TelemetryStore> = Layer.sync(TelemetryStore, makeMemory)
