/**
 * The session store's rows, read the same way by every SQL backend: a stored message, pending
 * interrupt or extraction run is JSON text of its encoded form, and a session's messages and
 * extraction runs are ledgers read in `seq` order, a row that fails to decode skipped and counted.
 * {@link operations} are the store's methods every SQL backend runs alike.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryWrite, SessionStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
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

/**
 * A SQL session store's tables.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tables {
  readonly messages: string
  readonly interrupts: string
  readonly extractions: string
  readonly claims: string
}

/**
 * Fails with `InvalidSessionData` when `sessionIdProblem` names why the backend cannot store
 * `sessionId` (PostgreSQL: an unpaired surrogate); succeeds when it names nothing or is not given.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkSessionId = (
  sessionIdProblem: ((sessionId: string) => string | undefined) | undefined,
  sessionId: string
): Effect.Effect<void, SessionStore.InvalidSessionData> => {
  const problem = sessionIdProblem?.(sessionId)
  return problem === undefined
    ? Effect.void
    : Effect.fail(new SessionStore.InvalidSessionData({ problem: `the session id ${problem}` }))
}

/**
 * The operations of a session store that every SQL backend runs alike, over `sql` and its
 * `tables`: the message and extraction ledgers' reads ({@link readMessages},
 * {@link readExtractionRuns}), the pending interrupt (an upsert, one row per session), the sessions
 * any table names, and the extraction claim (one upsert that takes it only where
 * `SessionStore.claimable` allows, and the claim in force read back, in one transaction). A session
 * id the backend cannot store (`sessionIdProblem`) is refused with `InvalidSessionData` before a
 * write; a `SqlError` becomes the store's failure through `failure`. A backend adds `append` and
 * `recordExtraction`, which number a ledger's rows in its own dialect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const operations = (
  sql: SqlClient.SqlClient,
  tables: Tables,
  options: {
    /** Why the backend cannot store a session id, when it cannot (PostgreSQL: an unpaired surrogate). */
    readonly sessionIdProblem?: ((sessionId: string) => string | undefined) | undefined
    readonly failure: (
      operation: string
    ) => (error: SqlError) => Effect.Effect<never, SessionStore.SessionStoreFailure>
  }
): Omit<SessionStore.Service, "append" | "recordExtraction"> => {
  const { failure } = options
  const messages = sql(tables.messages)
  const interrupts = sql(tables.interrupts)
  const claims = sql(tables.claims)
  return {
    load: (sessionId) => Effect.catchTag(readMessages(sql, tables.messages)(sessionId), "SqlError", failure("load")),

    putInterrupt: (sessionId, interrupt) =>
      Effect.gen(function*() {
        yield* checkSessionId(options.sessionIdProblem, sessionId)
        const encoded = yield* encodeInterrupt(interrupt)
        yield* sql`INSERT INTO ${interrupts} (session_id, turn, at, interrupt)
          VALUES (${sessionId}, ${encoded.turn}, ${StoredRows.epochMillis(encoded.at)},
            ${JSON.stringify(encoded)})
          ON CONFLICT (session_id) DO UPDATE
            SET turn = excluded.turn, at = excluded.at, interrupt = excluded.interrupt`
      }).pipe(Effect.catchTag("SqlError", failure("putInterrupt"))),

    getInterrupt: (sessionId) =>
      Effect.gen(function*() {
        const [row] = yield* sql<{ interrupt: unknown }>`SELECT interrupt FROM ${interrupts}
          WHERE session_id = ${sessionId}`
        return yield* interruptOf(sessionId, row?.interrupt)
      }).pipe(Effect.catchTag("SqlError", failure("getInterrupt"))),

    clearInterrupt: (sessionId) =>
      sql`DELETE FROM ${interrupts} WHERE session_id = ${sessionId}`.pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", failure("clearInterrupt"))
      ),

    listSessions: () =>
      sql<{ session_id: string }>`SELECT DISTINCT session_id FROM ${messages}
        UNION SELECT session_id FROM ${interrupts}
        UNION SELECT session_id FROM ${sql(tables.extractions)}`.pipe(
        // Sorted here: the database orders by UTF-8 bytes, the contract by UTF-16 code units.
        Effect.map((rows) => SessionStore.sortSessionIds(rows.map((row) => row.session_id))),
        Effect.catchTag("SqlError", failure("listSessions"))
      ),

    loadExtractions: (sessionId) =>
      Effect.catchTag(readExtractionRuns(sql, tables.extractions)(sessionId), "SqlError", failure("loadExtractions")),

    claimExtraction: (sessionId, claim) =>
      Effect.gen(function*() {
        yield* checkSessionId(options.sessionIdProblem, sessionId)
        const valid = yield* SessionStore.validateClaimForStore(claim)
        const at = DateTime.toEpochMillis(valid.at)
        const until = DateTime.toEpochMillis(valid.until)
        // The row is locked while the upsert decides (PostgreSQL), or the transaction is immediate
        // (SQLite): no other process can come between the claim and its read.
        return yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO ${claims} (session_id, holder, claimed_at, expires_at)
            VALUES (${sessionId}, ${valid.holder}, ${at}, ${until})
            ON CONFLICT (session_id) DO UPDATE
              SET holder = excluded.holder, claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
              WHERE ${claims}.expires_at <= excluded.claimed_at OR ${claims}.holder = excluded.holder`
          // PostgreSQL returns a BIGINT as a string, SQLite an INTEGER as a number.
          const [row] = yield* sql<{ holder: string; claimed_at: number | string; expires_at: number | string }>`
            SELECT holder, claimed_at, expires_at FROM ${claims} WHERE session_id = ${sessionId}`
          return SessionStore.claimOutcome(
            valid,
            row === undefined ? undefined : {
              holder: row.holder,
              atMillis: Number(row.claimed_at),
              untilMillis: Number(row.expires_at)
            }
          )
        }))
      }).pipe(Effect.catchTag("SqlError", failure("claimExtraction"))),

    releaseExtraction: (sessionId, holder) =>
      sql`DELETE FROM ${claims} WHERE session_id = ${sessionId} AND holder = ${holder}`.pipe(
        Effect.asVoid,
        Effect.catchTag("SqlError", failure("releaseExtraction"))
      )
  }
}
