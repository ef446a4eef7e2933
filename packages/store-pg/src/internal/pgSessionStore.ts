import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SessionStore } from "@engram/core"
import { SessionRows } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { reasonOf } from "../PgError.js"
import { claimsTable, ensure, extractionsTable, interruptsTable, messagesTable, run, sessions } from "./migrations.js"

const epochMillis = (iso: string): number => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

// An unpaired surrogate cannot be encoded as UTF-8: such a session id would be stored as another.
const unpairedSurrogate = /[\uD800-\uDFFF]/u

const checkSessionId = (sessionId: string): Effect.Effect<void, SessionStore.InvalidSessionData> =>
  unpairedSurrogate.test(sessionId)
    ? Effect.fail(
      new SessionStore.InvalidSessionData({
        problem: "the session id contains an unpaired surrogate, which PostgreSQL cannot store"
      })
    )
    : Effect.void

const makeAfter = <E>(prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* prepare
    const messages = sql(messagesTable)
    const interrupts = sql(interruptsTable)
    const extractions = sql(extractionsTable)
    const claims = sql(claimsTable)

    const failure = (operation: string) => (cause: SqlError) =>
      Effect.fail(new SessionStore.SessionStoreFailure({ operation, cause: reasonOf(cause) }))

    const service: SessionStore.Service = {
      append: (sessionId, batch) =>
        Effect.gen(function*() {
          yield* checkSessionId(sessionId)
          // Encoding first: an invalid message fails the batch before anything is written.
          const encoded = yield* SessionStore.encodeMessages(batch)
          if (encoded.length === 0) return
          yield* sql.withTransaction(Effect.gen(function*() {
            // Appends to one session take turns (a transaction-scoped lock on the session), so
            // each batch gets consecutive numbers and batches never interleave.
            yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"engram:session:"} || ${sessionId}))`
            const [last] = yield* sql<{ last: number | null }>`SELECT max(seq) AS last FROM ${messages}
              WHERE session_id = ${sessionId}`
            const first = (last?.last ?? -1) + 1
            yield* sql`INSERT INTO ${messages} (session_id, seq, tag, at, message)
              SELECT ${sessionId}, ${first} + ordinality - 1, tag, at, message
              FROM unnest(
                ${encoded.map((m) => m._tag)}::text[],
                ${encoded.map((m) => epochMillis(m.at))}::bigint[],
                ${encoded.map((m) => JSON.stringify(m))}::text[]
              ) WITH ORDINALITY AS u(tag, at, message, ordinality)`
          }))
        }).pipe(Effect.catchTag("SqlError", failure("append"))),

      load: (sessionId) =>
        Effect.catchTag(SessionRows.readMessages(sql, messagesTable)(sessionId), "SqlError", failure("load")),

      putInterrupt: (sessionId, interrupt) =>
        Effect.gen(function*() {
          yield* checkSessionId(sessionId)
          const encoded = yield* SessionRows.encodeInterrupt(interrupt)
          yield* sql`INSERT INTO ${interrupts} (session_id, turn, at, interrupt)
            VALUES (${sessionId}, ${encoded.turn}, ${epochMillis(encoded.at)}, ${JSON.stringify(encoded)})
            ON CONFLICT (session_id) DO UPDATE
              SET turn = excluded.turn, at = excluded.at, interrupt = excluded.interrupt`
        }).pipe(Effect.catchTag("SqlError", failure("putInterrupt"))),

      getInterrupt: (sessionId) =>
        Effect.gen(function*() {
          const [row] = yield* sql<{ interrupt: unknown }>`SELECT interrupt FROM ${interrupts}
            WHERE session_id = ${sessionId}`
          return yield* SessionRows.interruptOf(sessionId, row?.interrupt)
        }).pipe(Effect.catchTag("SqlError", failure("getInterrupt"))),

      clearInterrupt: (sessionId) =>
        sql`DELETE FROM ${interrupts} WHERE session_id = ${sessionId}`.pipe(
          Effect.asVoid,
          Effect.catchTag("SqlError", failure("clearInterrupt"))
        ),

      listSessions: () =>
        sql<{ session_id: string }>`SELECT DISTINCT session_id FROM ${messages}
          UNION SELECT session_id FROM ${interrupts}
          UNION SELECT session_id FROM ${extractions}`.pipe(
          // Sorted here: "C" collation orders by UTF-8 bytes, the contract by UTF-16 code units.
          Effect.map((rows) => SessionStore.sortSessionIds(rows.map((row) => row.session_id))),
          Effect.catchTag("SqlError", failure("listSessions"))
        ),

      recordExtraction: (sessionId, run) =>
        Effect.gen(function*() {
          yield* checkSessionId(sessionId)
          const encoded = yield* SessionStore.encodeExtractionRunForStore(run)
          yield* sql.withTransaction(Effect.gen(function*() {
            // Records of one session take turns (a transaction-scoped lock), so each gets the next number.
            yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"engram:extraction:"} || ${sessionId}))`
            yield* sql`INSERT INTO ${extractions} (session_id, seq, outcome, at, run)
              SELECT ${sessionId}, COALESCE(max(seq), -1) + 1, ${encoded.outcome}, ${epochMillis(encoded.at)},
                ${JSON.stringify(encoded)}
              FROM ${extractions} WHERE session_id = ${sessionId}`
          }))
        }).pipe(Effect.catchTag("SqlError", failure("recordExtraction"))),

      loadExtractions: (sessionId) =>
        Effect.catchTag(
          SessionRows.readExtractionRuns(sql, extractionsTable)(sessionId),
          "SqlError",
          failure("loadExtractions")
        ),

      claimExtraction: (sessionId, claim) =>
        Effect.gen(function*() {
          yield* checkSessionId(sessionId)
          const valid = yield* SessionStore.validateClaimForStore(claim)
          const at = DateTime.toEpochMillis(valid.at)
          const until = DateTime.toEpochMillis(valid.until)
          // One upsert that takes the claim only where `SessionStore.claimable` allows (the row is
          // locked while it decides), and the claim in force read back, in one transaction.
          return yield* sql.withTransaction(Effect.gen(function*() {
            yield* sql`INSERT INTO ${claims} (session_id, holder, claimed_at, expires_at)
              VALUES (${sessionId}, ${valid.holder}, ${at}, ${until})
              ON CONFLICT (session_id) DO UPDATE
                SET holder = excluded.holder, claimed_at = excluded.claimed_at, expires_at = excluded.expires_at
                WHERE ${claims}.expires_at <= excluded.claimed_at OR ${claims}.holder = excluded.holder`
            const [row] = yield* sql<{ holder: string; claimed_at: string; expires_at: string }>`SELECT holder,
              claimed_at, expires_at FROM ${claims} WHERE session_id = ${sessionId}`
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
    return service
  })

/** The session store, after bringing its tables up to date. */
export const make = makeAfter(run(sessions))

/** The session store, after checking that its tables are already up to date (no DDL). */
export const makeWithoutMigrations = makeAfter(ensure(sessions))
