import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryWrite, SessionStore, StoredRows, TelemetryStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { ensureMigratedTo, latestOf, runMigrations } from "./schema.js"

/** One row per appended injection row. */
export const injectionsTable = "engram_injection_log"

/** The table the telemetry store's migrations are recorded in. */
export const telemetryMigrationsTable = "engram_telemetry_migrations"

const migrations = {
  "0001_injection_log": Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      // Numbered by an identity column (append order); session, turn, mode and time as columns;
      // the delivered memory ids and section labels as JSONB arrays, so a question such as
      // "which turns delivered mem-1?" is one query (memory_ids ? 'mem-1'). No CHECK
      // constraints: rows are validated on append and decoded on every read.
      sql`CREATE TABLE engram_injection_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        session_id TEXT COLLATE "C" NOT NULL,
        turn INTEGER NOT NULL,
        mode TEXT NOT NULL,
        at BIGINT NOT NULL,
        memory_ids JSONB NOT NULL,
        section_labels JSONB NOT NULL
      )`,
      sql`CREATE INDEX engram_injection_log_session_idx ON engram_injection_log (session_id, id)`
    ], { discard: true }))
}

interface Row {
  readonly id: string
  readonly session_id: string
  readonly turn: number
  readonly mode: string
  readonly at: string | number
  readonly memory_ids: unknown
  readonly section_labels: unknown
}

/** A stored row as an injection row, or why it cannot be read. */
const decodeRow = (row: Row): Either.Either<TelemetryStore.InjectionLogRow, string> => {
  const millis = Number(row.at)
  if (!Number.isSafeInteger(millis) || Math.abs(millis) > 8.64e15) {
    return Either.left(`at: ${String(row.at)} is not an epoch-millisecond integer`)
  }
  return Either.mapLeft(
    TelemetryStore.decodeStoredInjectionRow({
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

const epochMillis = (iso: string): number => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

// An unpaired surrogate cannot be encoded as UTF-8: such a session id would be stored as another.
const unpairedSurrogate = /[\uD800-\uDFFF]/u

const makeAfter = <E>(prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* prepare
    const table = sql(injectionsTable)

    const failure = (operation: string) => (cause: SqlError) =>
      Effect.fail(new TelemetryStore.TelemetryStoreFailure({ operation, cause }))

    const service: TelemetryStore.TelemetryStoreService = {
      appendInjection: (row) =>
        Effect.gen(function*() {
          // Encoding first: an invalid row (an incognito row naming memories, say) is never written.
          const encoded = yield* TelemetryStore.encodeInjectionRow(row)
          if (unpairedSurrogate.test(encoded.sessionId)) {
            return yield* new TelemetryStore.InvalidTelemetryRow({
              problem: "sessionId: contains an unpaired surrogate, which PostgreSQL cannot store"
            })
          }
          // JSON text cast to JSONB: a JS array bound directly would be sent as a PostgreSQL array.
          yield* sql`INSERT INTO ${table} (session_id, turn, mode, at, memory_ids, section_labels)
            VALUES (${encoded.sessionId}, ${encoded.turn}, ${encoded.mode}, ${epochMillis(encoded.at)},
              ${JSON.stringify(encoded.memoryIds)}::jsonb, ${JSON.stringify(encoded.sectionLabels)}::jsonb)`
        }).pipe(Effect.catchTag("SqlError", failure("appendInjection"))),

      listInjections: (sessionId) =>
        Effect.gen(function*() {
          const rows = yield* sql<Row>`SELECT id, session_id, turn, mode, at, memory_ids, section_labels
            FROM ${table} WHERE session_id = ${sessionId} ORDER BY id`
          const { skipped, values } = StoredRows.decodeEach(rows, decodeRow, (row) => row.id)
          yield* StoredRows.reportSkipped(
            skipped,
            "skipped a stored injection row that does not decode",
            ({ key, reason }) => ({ backend: "postgres", sessionId, rowId: key, problem: reason })
          )
          return { rows: values, skipped: skipped.length }
        }).pipe(Effect.catchTag("SqlError", failure("listInjections"))),

      listSessions: () =>
        sql<{ session_id: string }>`SELECT DISTINCT session_id FROM ${table}`.pipe(
          // Sorted here: "C" collation orders by UTF-8 bytes, the contract by UTF-16 code units.
          Effect.map((rows) => SessionStore.sortSessionIds(rows.map((row) => row.session_id))),
          Effect.catchTag("SqlError", failure("listSessions"))
        )
    }
    return service
  })

/** The telemetry store, after bringing its table up to date. */
export const make = makeAfter(runMigrations(telemetryMigrationsTable, migrations))

/** The telemetry store, after checking that its table is already up to date (no DDL). */
export const makeWithoutMigrations = makeAfter(ensureMigratedTo(telemetryMigrationsTable, latestOf(migrations)))
