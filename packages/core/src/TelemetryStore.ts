/**
 * The `TelemetryStore` service: what Engram records about the prompts it assembled, for
 * after-the-fact inspection.
 *
 * - The **injection log**: one row per recorded projection, naming the memories and sections a
 *   turn delivered.
 * - **Prompt snapshots** (`PromptSnapshot`): one per model call, `(sessionId, turn, call)`,
 *   holding references — section names, sizes, memory ids, content hashes — into the session's
 *   **trajectory** (`Trajectory`): the append-only, content-addressed log where the text of the
 *   session's messages and of each distinct prefix and projection lives once.
 * - **Retention**: {@link TelemetryStoreService.prune} drops whole sessions' snapshots and
 *   trajectories by age and by count ({@link sessionsToPrune} decides which, for every backend).
 *
 * Every row is Schema-encodable to plain JSON ({@link encodeInjectionRow},
 * {@link decodeStoredInjectionRow}, `PromptSnapshot.encode`), so a SQL backend stores encoded rows.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as ParseResult from "effect/ParseResult"
import type * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as ErrorClass from "./ErrorClass.js"
import { MemoryId } from "./MemoryRecord.js"
import { describeParseError } from "./MemoryWrite.js"
import { type ProjectedContext, ProjectionMode, SectionLabel } from "./ProjectedContext.js"
import * as PromptSnapshot from "./PromptSnapshot.js"
import { SessionId, sortSessionIds } from "./SessionStore.js"
import * as Trajectory from "./Trajectory.js"

const memoryFreeModes: ReadonlyArray<ProjectionMode> = ["incognito", "subagent"]

/**
 * One injection-log row: in session `sessionId`, turn `turn` (the runtime's turn number; a
 * resumed turn writes its own row with the same number) delivered memories `memoryIds` through
 * sections `sectionLabels`, composed in `mode`, at `at`.
 *
 * A row of an `incognito` or `subagent` projection names no memory: such a row cannot be
 * constructed or decoded.
 *
 * @since 0.1.0
 * @category models
 */
export class InjectionLogRow extends Schema.Class<InjectionLogRow>("InjectionLogRow")(
  Schema.Struct({
    sessionId: SessionId,
    turn: Schema.NonNegativeInt,
    memoryIds: Schema.Array(MemoryId),
    sectionLabels: Schema.Array(SectionLabel),
    mode: ProjectionMode,
    at: Schema.DateTimeUtc
  }).pipe(
    Schema.filter((row) =>
      memoryFreeModes.includes(row.mode) && row.memoryIds.length > 0
        ? `an injection row of a ${row.mode} projection must not name memories`
        : undefined
    )
  )
) {}

/**
 * The row that records `projection`, delivered in turn `turn` of session `sessionId` at `at`.
 * Not validated here: `appendInjection` rejects an invalid row (say, a negative turn) with a
 * typed error.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromProjection = (
  projection: ProjectedContext,
  options: { readonly sessionId: SessionId; readonly turn: number; readonly at: DateTime.Utc }
): InjectionLogRow =>
  new InjectionLogRow({
    sessionId: options.sessionId,
    turn: options.turn,
    memoryIds: projection.injection.memoryIds,
    sectionLabels: projection.injection.sectionLabels,
    mode: projection.mode,
    at: options.at
  }, { disableValidation: true })

/**
 * A session's injection rows in append order, with the number of stored rows that failed to
 * decode and were skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface InjectionLog {
  readonly rows: ReadonlyArray<InjectionLogRow>
  readonly skipped: number
}

/**
 * A row failed to encode (e.g. an incognito row naming memories). Nothing was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTelemetryRow extends Schema.TaggedError<InvalidTelemetryRow>()("InvalidTelemetryRow", {
  problem: Schema.String
}) {
  override get message() {
    return `telemetry row is invalid and was not stored: ${this.problem}`
  }
  get errorClass(): ErrorClass.ErrorClass {
    return "InvalidInput"
  }
}

/**
 * The backend itself failed (I/O, connection, SQL). The operation left the store as it was.
 *
 * @since 0.1.0
 * @category errors
 */
export class TelemetryStoreFailure extends Schema.TaggedError<TelemetryStoreFailure>()("TelemetryStoreFailure", {
  operation: Schema.String,
  cause: Schema.Defect
}) {
  override get message() {
    const detail = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `telemetry store ${this.operation} failed: ${detail}`
  }
  get errorClass(): ErrorClass.ErrorClass {
    return "Unavailable"
  }
}

/**
 * A snapshot for the same `(sessionId, turn, call)` is already stored. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicateSnapshot extends Schema.TaggedError<DuplicateSnapshot>()("DuplicateSnapshot", {
  sessionId: Schema.String,
  turn: Schema.Number,
  call: Schema.Number
}) {
  override get message() {
    return `a prompt snapshot of session ${this.sessionId}, turn ${this.turn}, call ${this.call} is already stored; ` +
      "snapshots are append-only"
  }
  get errorClass(): ErrorClass.ErrorClass {
    return "Conflict"
  }
}

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
 * The redactions of a set of stored entries: each changed entry (before and after), and per
 * session the blobs that got a new hash and the message positions that changed, with the ids
 * whose text each held.
 *
 * @since 0.1.0
 * @category forgetting
 */
export interface ForgetPlan<K> {
  readonly changed: ReadonlyArray<{
    readonly key: K
    readonly sessionId: string
    readonly before: Trajectory.TrajectoryEntry
    readonly after: Trajectory.TrajectoryEntry
  }>
  readonly blobs: ReadonlyMap<
    string,
    ReadonlyMap<string, { readonly hash: string; readonly ids: ReadonlyArray<string> }>
  >
  readonly messages: ReadonlyMap<string, ReadonlyMap<number, ReadonlyArray<string>>>
}

/**
 * Plans the redaction of stored entries (each keyed by the backend's row key). Pure; every
 * backend forgets with it and {@link redactSnapshot}.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const planForget = <K>(
  entries: ReadonlyArray<{ readonly key: K; readonly sessionId: string; readonly entry: Trajectory.TrajectoryEntry }>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): ForgetPlan<K> => {
  const changed: Array<ForgetPlan<K>["changed"][number]> = []
  const blobs = new Map<string, Map<string, { hash: string; ids: ReadonlyArray<string> }>>()
  const messages = new Map<string, Map<number, ReadonlyArray<string>>>()
  for (const { entry, key, sessionId } of entries) {
    const redacted = Trajectory.redactEntry(entry, forgotten)
    if (redacted === undefined) continue
    changed.push({ key, sessionId, before: entry, after: redacted.entry })
    if (entry._tag === "Message") {
      const m = messages.get(sessionId) ?? new Map()
      m.set(entry.seq, redacted.ids)
      messages.set(sessionId, m)
    } else {
      const b = blobs.get(sessionId) ?? new Map()
      b.set(entry.hash, { hash: redacted.entry.hash, ids: redacted.ids })
      blobs.set(sessionId, b)
    }
  }
  return { changed, blobs, messages }
}

/**
 * The snapshot re-pointed at the redacted entries of `plan`, its full text scrubbed, listing the
 * forgotten memories it was affected by in `redacted` — or `undefined` when nothing it refers to
 * changed. Pure.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const redactSnapshot = (
  snapshot: PromptSnapshot.PromptSnapshot,
  plan: ForgetPlan<unknown>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): PromptSnapshot.PromptSnapshot | undefined => {
  const ids = new Set<string>()
  const blobs = plan.blobs.get(snapshot.sessionId)
  const remap = (hash: string | null) => {
    const to = hash === null ? undefined : blobs?.get(hash)
    if (to === undefined) return hash
    for (const id of to.ids) ids.add(id)
    return to.hash
  }
  const prefix = remap(snapshot.prefix.hash)
  const projection = remap(snapshot.projection.hash)
  for (const [seq, held] of plan.messages.get(snapshot.sessionId) ?? []) {
    if (seq < snapshot.messages.count) { for (const id of held) ids.add(id) }
  }
  let fullText = snapshot.fullText
  if (fullText !== null) {
    const scrubbed = Trajectory.scrubText(fullText.text, forgotten)
    if (scrubbed.ids.length > 0) {
      fullText = { ...fullText, text: scrubbed.text }
      for (const id of scrubbed.ids) ids.add(id)
    }
  }
  if (ids.size === 0) return undefined
  return new PromptSnapshot.PromptSnapshot({
    ...snapshot,
    prefix: { ...snapshot.prefix, hash: prefix },
    projection: { ...snapshot.projection, hash: projection },
    fullText,
    redacted: [...new Set([...snapshot.redacted, ...ids])].sort()
  }, { disableValidation: true })
}

/**
 * The sessions a sweep removes, given each session's newest snapshot time (epoch ms). Every
 * backend decides with this function. Ties in time are broken by session id (the larger id is
 * the newer), so the choice is the same everywhere.
 *
 * @since 0.1.0
 * @category retention
 */
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

/**
 * The telemetry store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface TelemetryStoreService {
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

  /** Removes whole sessions' snapshots and trajectories by age and count (see {@link PruneRequest}). */
  readonly prune: (request: PruneRequest) => Effect.Effect<PruneResult, TelemetryStoreFailure>

  /**
   * Removes forgotten memories' text from every stored trajectory entry and prompt snapshot (see
   * {@link planForget}). Snapshots that referred to a changed entry are re-pointed at it and list
   * the memories in `redacted`. The memory stores call it inside their `forget` transaction (via
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
export class TelemetryStore extends Context.Tag("@engram/TelemetryStore")<TelemetryStore, TelemetryStoreService>() {}

const encodeRowEither = Schema.encodeEither(InjectionLogRow)
const decodeRowEither = Schema.decodeUnknownEither(InjectionLogRow)

/**
 * Encodes a row to its JSON-safe form (ISO timestamp), failing with {@link InvalidTelemetryRow}.
 * Backends call this before writing.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeInjectionRow = (
  row: InjectionLogRow
): Effect.Effect<typeof InjectionLogRow.Encoded, InvalidTelemetryRow> =>
  Either.match(encodeRowEither(row), {
    onLeft: (error) => Effect.fail(new InvalidTelemetryRow({ problem: describeParseError(error) })),
    onRight: Effect.succeed
  })

/**
 * Decodes a stored, encoded row (as a backend reads it back).
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredInjectionRow = (encoded: unknown): Either.Either<InjectionLogRow, ParseResult.ParseError> =>
  decodeRowEither(encoded)

/**
 * A snapshot append, checked and encoded: what a backend writes. Fails with
 * {@link InvalidTelemetryRow} naming the problem. Backends call this before writing anything.
 *
 * @since 0.1.0
 * @category encoding
 */
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

const encodeUsageEither = Schema.encodeEither(PromptSnapshot.TokenUsage)

/**
 * Decodes a stored snapshot row: the encoded snapshot `body`, with the usage recorded later (if
 * any) laid over it. For SQL backends, which keep usage in its own column.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeSnapshotRow = (
  body: unknown,
  usage: unknown
): Either.Either<PromptSnapshot.PromptSnapshot, string> =>
  typeof body !== "object" || body === null || Array.isArray(body)
    ? Either.left("the stored snapshot is not a JSON object")
    : PromptSnapshot.decodeStored(usage === null || usage === undefined ? body : { ...body, usage })

/**
 * Encodes reported token usage, failing with {@link InvalidTelemetryRow} (a negative count, say).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeUsage = (
  usage: PromptSnapshot.TokenUsage
): Effect.Effect<typeof PromptSnapshot.TokenUsage.Encoded, InvalidTelemetryRow> =>
  Either.match(encodeUsageEither(usage), {
    onLeft: (error) => Effect.fail(new InvalidTelemetryRow({ problem: `usage: ${describeParseError(error)}` })),
    onRight: Effect.succeed
  })

/**
 * The in-memory telemetry store. Rows are kept encoded and decoded on read, as a database
 * backend would.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): TelemetryStoreService => {
  const rows: Array<{ readonly sessionId: string; readonly encoded: unknown }> = []
  let snapshots: Array<{ readonly sessionId: string; readonly key: string; encoded: Record<string, unknown> }> = []
  let entries: Array<{ readonly sessionId: string; readonly key: string; readonly encoded: unknown }> = []
  const snapshotKey = (key: PromptSnapshot.SnapshotKey) => `${key.turn}/${key.call}`
  const entryKey = (entry: Trajectory.TrajectoryEntry) =>
    entry._tag === "Message" ? `m/${entry.seq}` : `b/${entry.kind}/${entry.hash}`
  const decodeSnapshots = (sessionId: string, filter: SnapshotFilter) => {
    const out: Array<PromptSnapshot.PromptSnapshot> = []
    let skipped = 0
    for (const row of snapshots) {
      if (row.sessionId !== sessionId) continue
      const decoded = PromptSnapshot.decodeStored(row.encoded)
      if (Either.isLeft(decoded)) {
        skipped++
        continue
      }
      const s = decoded.right
      if (
        (filter.turn === undefined || s.turn === filter.turn) && (filter.call === undefined || s.call === filter.call)
      ) {
        out.push(s)
      }
    }
    out.sort((a, b) => a.turn - b.turn || a.call - b.call)
    return { snapshots: out, skipped }
  }
  return {
    appendSnapshot: (snapshot, given) =>
      Effect.flatMap(prepareSnapshot(snapshot, given), ({ encoded, entries: checked }) => {
        const key = snapshotKey(snapshot)
        if (snapshots.some((row) => row.sessionId === snapshot.sessionId && row.key === key)) {
          return Effect.fail(
            new DuplicateSnapshot({ sessionId: snapshot.sessionId, turn: snapshot.turn, call: snapshot.call })
          )
        }
        return Effect.sync(() => {
          for (const entry of checked) {
            const k = entryKey(entry)
            if (!entries.some((row) => row.sessionId === snapshot.sessionId && row.key === k)) {
              entries.push({ sessionId: snapshot.sessionId, key: k, encoded: entry })
            }
          }
          snapshots.push({ sessionId: snapshot.sessionId, key, encoded })
        })
      }),
    listSnapshots: (sessionId, filter = {}) => Effect.sync(() => decodeSnapshots(sessionId, filter)),
    readTrajectory: (sessionId) =>
      Effect.sync(() => {
        const decoded: Array<Trajectory.TrajectoryEntry> = []
        let skipped = 0
        for (const row of entries) {
          if (row.sessionId !== sessionId) continue
          const entry = Trajectory.decodeStoredEntry(row.encoded)
          if (Either.isLeft(entry)) skipped++
          else decoded.push(entry.right)
        }
        return Trajectory.collect(decoded, skipped)
      }),
    recordUsage: (key, usage) =>
      Effect.map(encodeUsage(usage), (encoded) => {
        const k = snapshotKey(key)
        const row = snapshots.find((r) => r.sessionId === key.sessionId && r.key === k)
        if (row === undefined) return false
        row.encoded = { ...row.encoded, usage: encoded }
        return true
      }),
    prune: (request) =>
      Effect.sync(() => {
        const latest = new Map<string, number>()
        for (const row of snapshots) {
          const at = Date.parse(String(row.encoded.at))
          latest.set(row.sessionId, Math.max(latest.get(row.sessionId) ?? -Infinity, at))
        }
        const gone = new Set(
          sessionsToPrune([...latest].map(([sessionId, at]) => ({ sessionId, at })), request, DateTime.toEpochMillis)
        )
        const before = { snapshots: snapshots.length, entries: entries.length }
        snapshots = snapshots.filter((row) => !gone.has(row.sessionId))
        entries = entries.filter((row) => !gone.has(row.sessionId))
        return {
          sessions: sortSessionIds(gone),
          snapshots: before.snapshots - snapshots.length,
          entries: before.entries - entries.length
        }
      }),
    forgetMemories: (forgotten) =>
      Effect.sync(() => {
        if (forgotten.length === 0) return { entries: 0, snapshots: 0 }
        const decoded = entries.flatMap((row, key) => {
          const entry = Trajectory.decodeStoredEntry(row.encoded)
          return Either.isRight(entry) ? [{ key, sessionId: row.sessionId, entry: entry.right }] : []
        })
        const plan = planForget(decoded, forgotten)
        const next = [...entries]
        for (const change of plan.changed) {
          const k = entryKey(change.after)
          const taken = next.some((row, i) => i !== change.key && row.sessionId === change.sessionId && row.key === k)
          next[change.key] = taken
            ? { sessionId: "", key: "", encoded: null } // the redacted body is already stored: drop this copy
            : { sessionId: change.sessionId, key: k, encoded: change.after }
        }
        entries = next.filter((row) => row.sessionId !== "")
        let updated = 0
        for (const row of snapshots) {
          const decodedSnapshot = PromptSnapshot.decodeStored(row.encoded)
          if (Either.isLeft(decodedSnapshot)) continue
          const redacted = redactSnapshot(decodedSnapshot.right, plan, forgotten)
          if (redacted === undefined) continue
          const encoded = PromptSnapshot.encode(redacted)
          if (Either.isRight(encoded)) {
            row.encoded = encoded.right as unknown as Record<string, unknown>
            updated++
          }
        }
        return { entries: plan.changed.length, snapshots: updated }
      }),
    appendInjection: (row) =>
      Effect.map(encodeInjectionRow(row), (encoded) => void rows.push({ sessionId: row.sessionId, encoded })),
    listInjections: (sessionId) =>
      Effect.sync(() => {
        const out: Array<InjectionLogRow> = []
        let skipped = 0
        for (const row of rows) {
          if (row.sessionId !== sessionId) continue
          const decoded = decodeRowEither(row.encoded)
          if (Either.isRight(decoded)) out.push(decoded.right)
          else skipped++
        }
        return { rows: out, skipped }
      }),
    listSessions: () => Effect.sync(() => sortSessionIds(rows.map((row) => row.sessionId)))
  }
}

/**
 * The in-memory telemetry store as a layer. Each layer build starts empty.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<TelemetryStore> = Layer.sync(TelemetryStore, makeMemory)

// ---------------------------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------------------------

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
 * One retention sweep now: {@link TelemetryStoreService.prune} with the cut-off `Clock` time
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
export const layerRetention = <Out>(
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
