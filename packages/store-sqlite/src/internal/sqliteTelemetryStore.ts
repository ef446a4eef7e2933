/**
 * The injection-log table and the SQLite telemetry store over it.
 *
 * One row per appended injection row, numbered by an autoincrementing id (append order), with
 * the session, turn, mode and time as columns and the delivered memory ids and section labels as
 * JSON arrays — readable with plain SQL. Timestamps are INTEGER epoch milliseconds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { InjectionLog, TelemetryStore } from "@engram/core"
import { StoredRows, TelemetryRows } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { runMigrations } from "./migrations.js"
import { parseJsonOrUndefined } from "./sqlText.js"
import { build } from "./storeBuild.js"

/** @internal */
export const INJECTIONS_TABLE = "engram_injection_log"
/** @internal */
export const MIGRATIONS_TABLE = "engram_telemetry_migrations"
/** @internal */
export const SNAPSHOTS_TABLE = "engram_prompt_snapshots"
/** @internal */
export const TRAJECTORY_TABLE = "engram_trajectory"

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
  }),
  "0002_prompt_snapshots": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // One row per model call; the encoded snapshot as JSON text, the usage (reported after the
    // call) in its own column. The trajectory is append-only and content-addressed: `address` is
    // `message:<seq>` or `<kind>:<hash>`, unique per session, so a blob is stored once.
    yield* sql.unsafe(`CREATE TABLE ${SNAPSHOTS_TABLE} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL COLLATE BINARY,
      turn INTEGER NOT NULL,
      call INTEGER NOT NULL,
      at INTEGER NOT NULL,
      body TEXT NOT NULL,
      usage TEXT,
      UNIQUE (session_id, turn, call)
    )`)
    yield* sql.unsafe(`CREATE TABLE ${TRAJECTORY_TABLE} (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      session_id TEXT NOT NULL COLLATE BINARY,
      address TEXT NOT NULL,
      kind TEXT NOT NULL,
      seq INTEGER,
      hash TEXT NOT NULL,
      body TEXT NOT NULL,
      UNIQUE (session_id, address)
    )`)
  })
}

/** Runs the store's migrations (idempotent), in their own migrations table. */
export const migrate = runMigrations(MIGRATIONS_TABLE, migrations)

type Row = Record<string, unknown>

/** Rows read per page when forget looks for a forgotten memory's text. */
const FORGET_PAGE = 500

/** Builds the SQLite telemetry store over the ambient SQL client. Migrates first. */
export const make = build(migrate, TelemetryStore.TelemetryStoreFailure, (sql, toFailure) => {
  const service: TelemetryStore.Service = {
    ...TelemetryRows.operations(
      sql,
      { injections: INJECTIONS_TABLE, snapshots: SNAPSHOTS_TABLE, trajectory: TRAJECTORY_TABLE },
      { parse: parseJsonOrUndefined, json: (text) => sql`${text}`, failure: toFailure }
    ),
    appendInjection: (row) =>
      Effect.gen(function*() {
        // Encoding first: an invalid row (an incognito row naming memories, say) is never written.
        const encoded = yield* InjectionLog.encodeInjectionRow(row)
        yield* sql`INSERT INTO ${sql(INJECTIONS_TABLE)} (session_id, turn, mode, at, memory_ids, section_labels)
          VALUES (${encoded.sessionId}, ${encoded.turn}, ${encoded.mode},
            ${StoredRows.epochMillis(encoded.at)},
            ${JSON.stringify(encoded.memoryIds)}, ${JSON.stringify(encoded.sectionLabels)})`
          .pipe(Effect.catchTag("SqlError", toFailure("appendInjection")))
      }),

    forgetMemories: (forgotten) =>
      Effect.gen(function*() {
        if (forgotten.length === 0) return { entries: 0, snapshots: 0 }
        const holds = TelemetryRows.holdsAny(forgotten)
        const plan = yield* TelemetryRows.redactTrajectory(sql, TRAJECTORY_TABLE, forgotten)
        // Snapshots of the sessions that changed, and any whose full text holds the content.
        const sessions = [...new Set(plan.changed.map((c) => c.sessionId))]
        const rows = new Map<number, Row>()
        for (const sessionId of sessions) {
          for (
            const row of yield* sql<Row>`SELECT id, body, usage FROM ${
              sql(SNAPSHOTS_TABLE)
            } WHERE session_id = ${sessionId}`
          ) {
            rows.set(Number(row.id), row)
          }
        }
        // Full text is the one place a snapshot body can hold content: only snapshots with it are read.
        let afterSnapshot = 0
        while (true) {
          const page = yield* sql<Row & { id: number }>`SELECT id, body, usage FROM ${sql(SNAPSHOTS_TABLE)}
            WHERE id > ${afterSnapshot} AND json_extract(body, '$.fullText') IS NOT NULL ORDER BY id LIMIT ${FORGET_PAGE}`
          for (const row of page) if (holds(row.body)) rows.set(Number(row.id), row)
          if (page.length < FORGET_PAGE) break
          afterSnapshot = page[page.length - 1]!.id
        }
        const snapshots = yield* TelemetryRows.rewriteSnapshots(
          [...rows].map(([id, row]) => [id, parseJsonOrUndefined(row.body)] as const),
          plan,
          forgotten,
          (id, body) => sql`UPDATE ${sql(SNAPSHOTS_TABLE)} SET body = ${body} WHERE id = ${id}`
        )
        return { entries: plan.changed.length, snapshots }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", toFailure("forgetMemories")))
  }
  return service
})
