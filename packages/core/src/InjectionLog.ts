/**
 * The injection log: one row per recorded projection, naming the memories and the sections a
 * turn delivered, and the mode it was composed in. `ContextProjection` appends a row for every
 * projection it records; `TelemetryStore.appendInjection` stores it and
 * `TelemetryStore.listInjections` reads a session's rows back.
 *
 * Every row is Schema-encodable to plain JSON ({@link encodeInjectionRow},
 * {@link decodeStoredInjectionRow}), so a SQL backend stores encoded rows.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as Rules from "./internal/fieldRules.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import { InvalidTelemetryRow } from "./internal/telemetryRows.js"
import { MemoryId } from "./MemoryRecord.js"
import { describeParseError } from "./MemoryWrite.js"
import { type ProjectedContext, ProjectionMode, SectionLabel } from "./ProjectionLayout.js"
import { SessionId, validateSessionId } from "./SessionStore.js"

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
 * Not validated here: `TelemetryStore.appendInjection` rejects an invalid row (say, a negative
 * turn) with a typed error.
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

const encodeRowEither = onFirstCall(() => Schema.encodeEither(InjectionLogRow))
const decodeRowEither = onFirstCall(() => Schema.decodeUnknownEither(InjectionLogRow))

const modes: ReadonlySet<unknown> = new Set(ProjectionMode.literals)
const sectionLabels: ReadonlySet<unknown> = new Set(SectionLabel.literals)

/**
 * The encoded row, built by hand when every field passes the schema's own rules; `undefined` for
 * anything else, which the schema then encodes (and names the problem of). A projection's row
 * names ~300 memory ids, and the schema's walk over them cost more than the insert that stores
 * them (about 1.3 ms a projection at 100k records, in place); this is one pattern test per id.
 * A property test (`TelemetryStore.test.ts`) holds the two to the same result.
 */
const encodeQuickly = (row: InjectionLogRow): typeof InjectionLogRow.Encoded | undefined => {
  if (!(row instanceof InjectionLogRow)) return undefined
  const { at, memoryIds, mode, sessionId, turn } = row
  if (typeof sessionId !== "string" || Either.isLeft(validateSessionId(sessionId))) return undefined
  if (!Number.isSafeInteger(turn) || turn < 0) return undefined
  if (!modes.has(mode) || !DateTime.isDateTime(at) || !DateTime.isUtc(at)) return undefined
  if (!Array.isArray(memoryIds) || !Array.isArray(row.sectionLabels)) return undefined
  if (memoryIds.length > 0 && memoryFreeModes.includes(mode)) return undefined
  for (const id of memoryIds) if (!Rules.isMemoryId(id)) return undefined
  for (const label of row.sectionLabels) if (!sectionLabels.has(label)) return undefined
  return {
    sessionId,
    turn,
    memoryIds: [...memoryIds],
    sectionLabels: [...row.sectionLabels],
    mode,
    at: DateTime.formatIso(at)
  }
}

/**
 * Encodes a row to its JSON-safe form (ISO timestamp), failing with
 * `TelemetryStore.InvalidTelemetryRow`. Backends call this before writing.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeInjectionRow = (
  row: InjectionLogRow
): Effect.Effect<typeof InjectionLogRow.Encoded, InvalidTelemetryRow> => {
  const quick = encodeQuickly(row)
  if (quick !== undefined) return Effect.succeed(quick)
  return Either.match(encodeRowEither(row), {
    onLeft: (error) => Effect.fail(new InvalidTelemetryRow({ problem: describeParseError(error) })),
    onRight: Effect.succeed
  })
}

/**
 * Decodes a stored, encoded row (as a backend reads it back).
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredInjectionRow = (encoded: unknown): Either.Either<InjectionLogRow, ParseResult.ParseError> =>
  decodeRowEither(encoded)
