/**
 * The session tables and the SQLite session store over them.
 *
 * Messages: one row per message, keyed by `(session_id, seq)` where `seq` counts from 0 in append
 * order; the message is stored in its encoded JSON form (`SessionStore.encodeMessage`) beside its
 * tag and time, so an operator can query the table directly. Interrupts: at most one row per
 * session. Timestamps are INTEGER epoch milliseconds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SessionStore } from "@engram/core"
import { SessionRows, StoredRows } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { runMigrations } from "./migrations.js"
import { chunksOf, multiRowInsert } from "./sqlText.js"
import { build } from "./storeBuild.js"

/** @internal */
export const MESSAGES_TABLE = "engram_session_messages"
/** @internal */
export const INTERRUPTS_TABLE = "engram_session_interrupts"
/** @internal */
export const EXTRACTIONS_TABLE = "engram_session_extractions"
/** @internal */
export const CLAIMS_TABLE = "engram_session_extraction_claims"
/** @internal */
export const MIGRATIONS_TABLE = "engram_session_migrations"

/** Rows per multi-row INSERT: 5 binds a row stays far below SQLite's variable limit. */
const INSERT_CHUNK = 500

/** Migrations of the session store, in their own migrations table. */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_sessions": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // No CHECK constraints: messages are validated by the core schema on append and decoded on
    // every read, where a bad row is skipped rather than failing the load.
    yield* sql.unsafe(`CREATE TABLE ${MESSAGES_TABLE} (
      session_id TEXT NOT NULL COLLATE BINARY,
      seq INTEGER NOT NULL,
      tag TEXT NOT NULL,
      at INTEGER NOT NULL,
      message TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID`)
    yield* sql.unsafe(`CREATE TABLE ${INTERRUPTS_TABLE} (
      session_id TEXT NOT NULL COLLATE BINARY PRIMARY KEY,
      turn INTEGER NOT NULL,
      at INTEGER NOT NULL,
      interrupt TEXT NOT NULL
    ) WITHOUT ROWID`)
  }),
  // The extraction ledger: one row per extraction run that called the model, numbered from 0 per
  // session in record order, the run kept in its encoded JSON form beside its outcome and time.
  "0002_extraction_runs": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${EXTRACTIONS_TABLE} (
      session_id TEXT NOT NULL COLLATE BINARY,
      seq INTEGER NOT NULL,
      outcome TEXT NOT NULL,
      at INTEGER NOT NULL,
      run TEXT NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID`)
  }),
  // Extraction claims: at most one per session, the holder and its lease (epoch milliseconds), so
  // two processes over one file never run extraction for the same session at once.
  "0003_extraction_claims": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${CLAIMS_TABLE} (
      session_id TEXT NOT NULL COLLATE BINARY PRIMARY KEY,
      holder TEXT NOT NULL,
      claimed_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    ) WITHOUT ROWID`)
  })
}

/** Runs the store's migrations (idempotent), in their own migrations table. */
export const migrate = runMigrations(MIGRATIONS_TABLE, migrations)

const insertSql = multiRowInsert(MESSAGES_TABLE, ["session_id", "seq", "tag", "at", "message"])

/** Builds the SQLite session store over the ambient SQL client. Migrates first. */
export const make = build(migrate, SessionStore.SessionStoreFailure, (sql, toFailure) => {
  const service: SessionStore.Service = {
    ...SessionRows.operations(
      sql,
      { messages: MESSAGES_TABLE, interrupts: INTERRUPTS_TABLE, extractions: EXTRACTIONS_TABLE, claims: CLAIMS_TABLE },
      { failure: toFailure }
    ),

    append: (sessionId, messages) =>
      Effect.gen(function*() {
        // Encoding first: an invalid message fails the batch before anything is written.
        const encoded = yield* SessionStore.encodeMessages(messages)
        if (encoded.length === 0) return
        yield* sql.withTransaction(Effect.gen(function*() {
          const [last] = yield* sql<{ last: number | null }>`SELECT MAX(seq) AS last FROM ${sql(MESSAGES_TABLE)}
            WHERE session_id = ${sessionId}`
          const first = (last?.last ?? -1) + 1
          const rows = encoded.map((message, i) => [
            sessionId,
            first + i,
            message._tag,
            StoredRows.epochMillis(message.at),
            JSON.stringify(message)
          ])
          yield* Effect.forEach(
            chunksOf(rows, INSERT_CHUNK),
            (chunk) => sql.unsafe(insertSql(chunk.length), chunk.flat()),
            { discard: true }
          )
        })).pipe(Effect.catchTag("SqlError", toFailure("append")))
      }),

    recordExtraction: (sessionId, run) =>
      Effect.gen(function*() {
        const encoded = yield* SessionStore.encodeExtractionRunForStore(run)
        // One statement: the next number is read and used atomically.
        yield* sql`INSERT INTO ${sql(EXTRACTIONS_TABLE)} (session_id, seq, outcome, at, run)
          SELECT ${sessionId}, COALESCE(MAX(seq), -1) + 1, ${encoded.outcome}, ${StoredRows.epochMillis(encoded.at)},
            ${JSON.stringify(encoded)}
          FROM ${sql(EXTRACTIONS_TABLE)} WHERE session_id = ${sessionId}`
          .pipe(Effect.catchTag("SqlError", toFailure("recordExtraction")))
      })
  }
  return service
})
