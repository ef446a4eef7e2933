import { SessionStore } from "@engram/core"
import { SessionRows, StoredRows } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { claimsTable, extractionsTable, interruptsTable, messagesTable, sessions } from "./migrations.js"
import * as PgText from "./pgText.js"
import { build } from "./storeBuild.js"

const store = build(sessions, SessionStore.SessionStoreFailure, (sql, failure) => {
  const messages = sql(messagesTable)
  const extractions = sql(extractionsTable)

  const service: SessionStore.Service = {
    ...SessionRows.operations(
      sql,
      { messages: messagesTable, interrupts: interruptsTable, extractions: extractionsTable, claims: claimsTable },
      { sessionIdProblem: PgText.sessionIdProblem, failure }
    ),

    append: (sessionId, batch) =>
      Effect.gen(function*() {
        yield* SessionRows.checkSessionId(PgText.sessionIdProblem, sessionId)
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
              ${encoded.map((m) => StoredRows.epochMillis(m.at))}::bigint[],
              ${encoded.map((m) => JSON.stringify(m))}::text[]
            ) WITH ORDINALITY AS u(tag, at, message, ordinality)`
        }))
      }).pipe(Effect.catchTag("SqlError", failure("append"))),

    recordExtraction: (sessionId, run) =>
      Effect.gen(function*() {
        yield* SessionRows.checkSessionId(PgText.sessionIdProblem, sessionId)
        const encoded = yield* SessionStore.encodeExtractionRunForStore(run)
        yield* sql.withTransaction(Effect.gen(function*() {
          // Records of one session take turns (a transaction-scoped lock), so each gets the next number.
          yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"engram:extraction:"} || ${sessionId}))`
          yield* sql`INSERT INTO ${extractions} (session_id, seq, outcome, at, run)
            SELECT ${sessionId}, COALESCE(max(seq), -1) + 1, ${encoded.outcome}, ${StoredRows.epochMillis(encoded.at)},
              ${JSON.stringify(encoded)}
            FROM ${extractions} WHERE session_id = ${sessionId}`
        }))
      }).pipe(Effect.catchTag("SqlError", failure("recordExtraction")))
  }
  return service
})

/** The session store, after bringing its tables up to date. */
export const make = store.make

/** The session store, after checking that its tables are already up to date (no DDL). */
export const makeWithoutMigrations = store.makeWithoutMigrations
