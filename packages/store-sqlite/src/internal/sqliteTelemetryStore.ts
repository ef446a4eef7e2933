/**
 * The injection-log table and the SQLite telemetry store over it.
 *
 * One row per appended injection row, numbered by an autoincrementing id (append order), with
 * the session, turn, mode and time as columns and the delivered memory ids and section labels as
 * JSON arrays — readable with plain SQL. Timestamps are INTEGER epoch milliseconds.
 */
import type * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryWrite, SessionStore, StoredRows, TelemetryStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { runMigrations } from "./migrations.js"
import { isEpochMillis, parseJsonOrUndefined } from "./sqlText.js"

/** @internal */
export const INJECTIONS_TABLE = "engram_injection_log"
/** @internal */
export const MIGRATIONS_TABLE = "engram_telemetry_migrations"

/** Migrations of the telemetry store, in their own migrations table. */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_injection_log": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // No CHECK constraints: rows are validated by the core schema on append and decoded on every
    // read, where a bad row is skipped rather than failing the listing.
    yield* sql.unsafe(`CREATE TABLE ${INJECTIONS_TABLE} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL COLLATE BINARY,
      turn INTEGER NOT NULL,
      mode TEXT NOT NULL,
      at INTEGER NOT NULL,
      memory_ids TEXT NOT NULL,
      section_labels TEXT NOT NULL
    )`)
    yield* sql.unsafe(`CREATE INDEX ${INJECTIONS_TABLE}_session ON ${INJECTIONS_TABLE} (session_id, id)`)
  })
}

/** Runs the store's migrations (idempotent), in their own migrations table. */
export const migrate = runMigrations(MIGRATIONS_TABLE, migrations)

type Row = Record<string, unknown>



/** A stored row as an injection row, or why it cannot be read. */
export const decodeRow = (row: Row): Either.Either<TelemetryStore.InjectionLogRow, string> => {
  const { at } = row
  if (!isEpochMillis(at)) {
    return Either.left(`at: ${String(at)} is not an epoch-millisecond integer`)
  }
  return Either.mapLeft(
    TelemetryStore.decodeStoredInjectionRow({
      sessionId: row.session_id,
      turn: row.turn,
      memoryIds: parseJsonOrUndefined(row.memory_ids),
      sectionLabels: parseJsonOrUndefined(row.section_labels),
      mode: row.mode,
      at: DateTime.formatIso(DateTime.unsafeMake(at))
    }),
    MemoryWrite.describeParseError
  )
}

const toFailure = (operation: string) => (cause: SqlError) =>
  Effect.fail(new TelemetryStore.TelemetryStoreFailure({ operation, cause }))

/** Builds the SQLite telemetry store over the ambient SQL client. Migrates first. */
export const make: Effect.Effect<
  TelemetryStore.TelemetryStoreService,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* migrate

  const service: TelemetryStore.TelemetryStoreService = {
    appendInjection: (row) =>
      Effect.gen(function*() {
        // Encoding first: an invalid row (an incognito row naming memories, say) is never written.
        const encoded = yield* TelemetryStore.encodeInjectionRow(row)
        yield* sql`INSERT INTO ${sql(INJECTIONS_TABLE)} (session_id, turn, mode, at, memory_ids, section_labels)
          VALUES (${encoded.sessionId}, ${encoded.turn}, ${encoded.mode},
            ${DateTime.toEpochMillis(DateTime.unsafeMake(encoded.at))},
            ${JSON.stringify(encoded.memoryIds)}, ${JSON.stringify(encoded.sectionLabels)})`
          .pipe(Effect.catchTag("SqlError", toFailure("appendInjection")))
      }),

    listInjections: (sessionId) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT id, session_id, turn, mode, at, memory_ids, section_labels
          FROM ${sql(INJECTIONS_TABLE)} WHERE session_id = ${sessionId} ORDER BY id`
        const { skipped, values } = StoredRows.decodeEach(rows, decodeRow, (row) => String(row.id))
        yield* StoredRows.reportSkipped(
          skipped,
          "skipped a stored injection row that failed to decode",
          ({ key, reason }) => ({ sessionId, rowId: key, reason })
        )
        return { rows: values, skipped: skipped.length }
      }).pipe(Effect.catchTag("SqlError", toFailure("listInjections"))),

    listSessions: () =>
      sql<{ session_id: string }>`SELECT DISTINCT session_id FROM ${sql(INJECTIONS_TABLE)}`.pipe(
        // Sorted here: SQLite orders by UTF-8 bytes, the contract by UTF-16 code units.
        Effect.map((rows) => SessionStore.sortSessionIds(rows.map((row) => row.session_id))),
        Effect.catchTag("SqlError", toFailure("listSessions"))
      )
  }
  return service
})
