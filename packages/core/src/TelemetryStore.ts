/**
 * The `TelemetryStore` service: what Engram records about the prompts it assembled, for
 * after-the-fact inspection. For now it keeps the injection log — one row per recorded
 * projection, naming the memories and sections a turn delivered.
 *
 * Seam for prompt snapshots: a snapshot of a model-visible request (stable prefix, history and
 * projection, as references into the trajectory) will be a second row type beside
 * {@link InjectionLogRow}, keyed by the same `(sessionId, turn)`, with its own `appendSnapshot` /
 * `listSnapshots` methods on {@link TelemetryStoreService}. Nothing here needs to change for it.
 *
 * Every row is Schema-encodable to plain JSON ({@link encodeInjectionRow},
 * {@link decodeStoredInjectionRow}), so a SQL backend stores one encoded row per append.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { MemoryId } from "./MemoryRecord.js"
import { describeParseError } from "./MemoryWrite.js"
import { type ProjectedContext, ProjectionMode, SectionLabel } from "./ProjectedContext.js"
import { SessionId, sortSessionIds } from "./SessionStore.js"

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
 * The in-memory telemetry store. Rows are kept encoded and decoded on read, as a database
 * backend would.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): TelemetryStoreService => {
  const rows: Array<{ readonly sessionId: string; readonly encoded: unknown }> = []
  return {
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
