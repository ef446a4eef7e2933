/**
 * The telemetry store's rows, read the same way by every SQL backend: an injection-log row's
 * columns decoded into an `InjectionLog` row, and the steps of `forgetMemories` that do not touch
 * SQL (which stored trajectory entries change, and a stored snapshot's body after redaction).
 * A backend whose driver returns JSON columns as text parses them before calling these.
 *
 * @since 0.1.0
 */
import { InjectionLog, MemoryWrite, PromptSnapshot, TelemetryRedaction, TelemetryStore, Trajectory } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

/**
 * The injection-log columns, as the driver returned them (JSON columns already parsed).
 *
 * @since 0.1.0
 * @category models
 */
export interface InjectionColumns {
  readonly session_id: unknown
  readonly turn: unknown
  readonly mode: unknown
  /** Epoch milliseconds: a number, or the text of one (a PostgreSQL BIGINT). */
  readonly at: unknown
  readonly memory_ids: unknown
  readonly section_labels: unknown
}

const MAX_EPOCH_MILLIS = 8_640_000_000_000_000

const epochMillisOf = (at: unknown): number | undefined => {
  const millis = typeof at === "string" && at.trim() !== "" ? Number(at) : at
  return typeof millis === "number" && Number.isSafeInteger(millis) && Math.abs(millis) <= MAX_EPOCH_MILLIS
    ? millis
    : undefined
}

/**
 * A stored injection row as an `InjectionLog` row, or why it cannot be read.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeInjection = (row: InjectionColumns): Either.Either<InjectionLog.InjectionLogRow, string> => {
  const millis = epochMillisOf(row.at)
  if (millis === undefined) return Either.left(`at: ${String(row.at)} is not an epoch-millisecond integer`)
  return Either.mapLeft(
    InjectionLog.decodeStoredInjectionRow({
      sessionId: row.session_id,
      turn: row.turn,
      memoryIds: row.memory_ids,
      sectionLabels: row.section_labels,
      mode: row.mode,
      at: DateTime.formatIso(DateTime.unsafeMake(millis))
    }),
    MemoryWrite.describeParseError
  )
}

/**
 * A stored trajectory entry with its row key and session.
 *
 * @since 0.1.0
 * @category models
 */
export interface EntryColumns<K> {
  readonly id: K
  readonly session_id: string
  readonly kind: unknown
  readonly seq: unknown
  readonly hash: unknown
  readonly body: unknown
}

/**
 * Whether a stored body can hold any of the forgotten records' text (an id or the content):
 * only those rows are decoded and planned.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const holdsAny = (forgotten: ReadonlyArray<Trajectory.ForgottenText>) => {
  const needles = Trajectory.needlesOf(forgotten)
  return (body: unknown): boolean => typeof body === "string" && needles.some((needle) => body.includes(needle))
}

/**
 * The redaction plan over stored entries (`TelemetryRedaction.planForget`), keyed by row id;
 * entries that do not decode are left as they are.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const planForget = <K>(
  rows: Iterable<EntryColumns<K>>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): TelemetryRedaction.ForgetPlan<K> =>
  TelemetryRedaction.planForget(
    [...rows].flatMap((row) => {
      const entry = Trajectory.fromColumns(row)
      return Either.isRight(entry) ? [{ key: row.id, sessionId: row.session_id, entry: entry.right }] : []
    }),
    forgotten
  )

/**
 * A stored snapshot body (parsed JSON) after redaction under `plan`, as the JSON text to store —
 * or `undefined` when it does not decode or nothing it refers to changed.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const redactedBody = (
  body: unknown,
  plan: TelemetryRedaction.ForgetPlan<unknown>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): string | undefined => {
  const decoded = TelemetryStore.decodeSnapshotRow(body, null)
  if (Either.isLeft(decoded)) return undefined
  const redacted = TelemetryRedaction.redactSnapshot(decoded.right, plan, forgotten)
  if (redacted === undefined) return undefined
  const encoded = PromptSnapshot.encode(redacted)
  return Either.isRight(encoded) ? JSON.stringify(encoded.right) : undefined
}

/**
 * How one SQL backend writes a snapshot's rows, inside the transaction the caller runs
 * {@link appendSnapshot} in: `snapshot` inserts the encoded snapshot (its `at` as epoch
 * milliseconds) and answers `false` when the session already holds one for that turn and call;
 * `entry` inserts one trajectory entry's columns unless the session already holds its address
 * (entries are content-addressed: a blob is stored once).
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotWriter<E> {
  readonly snapshot: (
    encoded: typeof PromptSnapshot.PromptSnapshot.Encoded,
    atMillis: number
  ) => Effect.Effect<boolean, E>
  readonly entry: (sessionId: string, columns: Trajectory.EntryColumns) => Effect.Effect<unknown, E>
}

/**
 * Appends a snapshot and its trajectory entries with `writer`, the one write both SQL telemetry
 * stores run (`TelemetryStore.prepareSnapshot` first, so an invalid snapshot writes nothing):
 * fails with `DuplicateSnapshot` when its turn and call are taken. Run it in one transaction.
 *
 * @since 0.1.0
 * @category writing
 */
export const appendSnapshot = <E>(
  writer: SnapshotWriter<E>,
  snapshot: PromptSnapshot.PromptSnapshot,
  given: ReadonlyArray<Trajectory.TrajectoryEntry>
): Effect.Effect<void, E | TelemetryStore.InvalidTelemetryRow | TelemetryStore.DuplicateSnapshot> =>
  Effect.gen(function*() {
    const { encoded, entries } = yield* TelemetryStore.prepareSnapshot(snapshot, given)
    const written = yield* writer.snapshot(encoded, DateTime.toEpochMillis(DateTime.unsafeMake(encoded.at)))
    if (!written) {
      return yield* new TelemetryStore.DuplicateSnapshot({
        sessionId: encoded.sessionId,
        turn: encoded.turn,
        call: encoded.call
      })
    }
    for (const entry of entries) yield* writer.entry(encoded.sessionId, Trajectory.toColumns(entry))
  })
