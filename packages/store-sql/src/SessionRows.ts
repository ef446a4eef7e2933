/**
 * The session store's rows, read the same way by every SQL backend: a stored message, pending
 * interrupt or extraction run is JSON text of its encoded form, and a session's messages and
 * extraction runs are ledgers read in `seq` order, a row that fails to decode skipped and counted.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryWrite, SessionStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as StoredRows from "./StoredRows.js"

/** A stored column's JSON text decoded with `decode`, or why it cannot be read. */
const fromJson =
  <A>(decode: (json: unknown) => Either.Either<A, ParseResult.ParseError>) =>
  (text: unknown): Either.Either<A, string> => {
    if (typeof text !== "string") return Either.left(`not text: ${String(text)}`)
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return Either.left(`not JSON (${error instanceof Error ? error.message : String(error)})`)
    }
    return Either.mapLeft(decode(json), MemoryWrite.describeParseError)
  }

/**
 * A stored message column as a message, or why it cannot be read.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeMessage: (text: unknown) => Either.Either<SessionStore.SessionMessage, string> = fromJson(
  SessionStore.decodeStoredMessage
)

/**
 * A stored interrupt column as a pending interrupt, or why it cannot be read.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeInterrupt: (text: unknown) => Either.Either<SessionStore.PendingInterrupt, string> = fromJson(
  SessionStore.decodeStoredInterrupt
)

/**
 * A stored extraction run column as a run, or why it cannot be read.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeExtractionRun: (text: unknown) => Either.Either<SessionStore.ExtractionRun, string> = fromJson(
  SessionStore.decodeStoredExtractionRun
)

/** One session's ledger — `column` of `table`'s rows for it, in `seq` order — decoded row by row. */
const readLedger = <A>(
  sql: SqlClient.SqlClient,
  table: string,
  column: string,
  decode: (text: unknown) => Either.Either<A, string>,
  what: string
) =>
(sessionId: string): Effect.Effect<{ readonly values: ReadonlyArray<A>; readonly skipped: number }, SqlError> =>
  Effect.flatMap(
    sql<{ seq: number; value: unknown }>`SELECT seq, ${sql(column)} AS value FROM ${sql(table)}
      WHERE session_id = ${sessionId} ORDER BY seq`,
    (rows) => StoredRows.decodeSessionRows(sessionId, rows, (row) => decode(row.value), what)
  )

/**
 * A session's messages from `table` (column `message`) through `sql`, in `seq` order; a row that
 * fails to decode is logged ("skipped a stored session message…") and counted. Both stores' `load`.
 *
 * @since 0.1.0
 * @category reading
 */
export const readMessages =
  (sql: SqlClient.SqlClient, table: string) =>
  (sessionId: string): Effect.Effect<SessionStore.SessionHistory, SqlError> =>
    Effect.map(
      readLedger(sql, table, "message", decodeMessage, "session message")(sessionId),
      (read) => ({ messages: read.values, skipped: read.skipped })
    )

/**
 * A session's extraction runs from `table` (column `run`) through `sql`, in `seq` order, bad rows
 * logged and counted. Both stores' `loadExtractions`.
 *
 * @since 0.1.0
 * @category reading
 */
export const readExtractionRuns =
  (sql: SqlClient.SqlClient, table: string) =>
  (sessionId: string): Effect.Effect<SessionStore.ExtractionRuns, SqlError> =>
    Effect.map(
      readLedger(sql, table, "run", decodeExtractionRun, "extraction run")(sessionId),
      (read) => ({ runs: read.values, skipped: read.skipped })
    )

/**
 * A pending interrupt encoded for storage, or `InvalidSessionData` naming what is wrong with it.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeInterrupt = (
  interrupt: SessionStore.PendingInterrupt
): Effect.Effect<typeof SessionStore.PendingInterrupt.Encoded, SessionStore.InvalidSessionData> =>
  Either.match(SessionStore.encodeInterrupt(interrupt), {
    onLeft: (error) =>
      Effect.fail(
        new SessionStore.InvalidSessionData({ problem: `interrupt: ${MemoryWrite.describeParseError(error)}` })
      ),
    onRight: Effect.succeed
  })

/**
 * A session's stored interrupt column (`undefined` when it has none) as its pending interrupt: one
 * that fails to decode is logged and read as none, so a damaged row never blocks the session.
 *
 * @since 0.1.0
 * @category decoding
 */
export const interruptOf = (
  sessionId: string,
  stored: unknown
): Effect.Effect<Option.Option<SessionStore.PendingInterrupt>> => {
  if (stored === undefined) return Effect.succeed(Option.none())
  const decoded = decodeInterrupt(stored)
  if (Either.isRight(decoded)) return Effect.succeed(Option.some(decoded.right))
  return Effect.as(
    Effect.logWarning("a stored pending interrupt failed to decode; reading it as none").pipe(
      Effect.annotateLogs({ sessionId, reason: decoded.left })
    ),
    Option.none()
  )
}
