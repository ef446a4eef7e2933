import { InjectionLog, TelemetryStore } from "@engram/core"
import { SqlTransaction, StoredRows, TelemetryRows } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { identity } from "effect/Function"
import { injectionsTable, snapshotsTable, telemetry, trajectoryTable } from "./migrations.js"
import * as PgText from "./pgText.js"
import { build } from "./storeBuild.js"

/** Rows read per page when forget looks for a forgotten memory's text. */
const FORGET_PAGE = 500

const store = build(telemetry, TelemetryStore.TelemetryStoreFailure, (sql, failure) => {
  const table = sql(injectionsTable)
  const snapshots = sql(snapshotsTable)

  const service: TelemetryStore.Service = {
    ...TelemetryRows.operations(
      sql,
      { injections: injectionsTable, snapshots: snapshotsTable, trajectory: trajectoryTable },
      {
        parse: identity,
        json: (text) => sql`${text}::jsonb`,
        sessionIdProblem: PgText.sessionIdProblem,
        failure
      }
    ),
    appendInjection: (row) =>
      Effect.gen(function*() {
        // Encoding first: an invalid row (an incognito row naming memories, say) is never written.
        const encoded = yield* InjectionLog.encodeInjectionRow(row)
        const problem = PgText.sessionIdProblem(encoded.sessionId)
        if (problem !== undefined) {
          return yield* new TelemetryStore.InvalidTelemetryRow({ problem: `sessionId: ${problem}` })
        }
        // JSON text cast to JSONB: a JS array bound directly would be sent as a PostgreSQL array.
        const values = sql`${encoded.sessionId}, ${encoded.turn}, ${encoded.mode}, ${
          StoredRows.epochMillis(encoded.at)
        }, ${JSON.stringify(encoded.memoryIds)}::jsonb, ${JSON.stringify(encoded.sectionLabels)}::jsonb`
        // On its own, the row commits without waiting for its WAL to reach the disk (decision
        // 0227): `synchronous_commit` off for this statement's own transaction alone, set in the
        // statement. Inside a caller's transaction it is a plain insert, so the caller's other
        // writes keep their durability.
        const inTransaction = yield* SqlTransaction.isOpen
        yield* inTransaction
          ? sql`INSERT INTO ${table} (session_id, turn, mode, at, memory_ids, section_labels) VALUES (${values})`
          : sql`INSERT INTO ${table} (session_id, turn, mode, at, memory_ids, section_labels)
          SELECT ${values} FROM set_config('synchronous_commit', 'off', true)`
      }).pipe(Effect.catchTag("SqlError", failure("appendInjection"))),

    forgetMemories: (forgotten) =>
      Effect.gen(function*() {
        if (forgotten.length === 0) return { entries: 0, snapshots: 0 }
        const holds = TelemetryRows.holdsAny(forgotten)
        const plan = yield* TelemetryRows.redactTrajectory(sql, trajectoryTable, forgotten)
        // Snapshots of the sessions that changed, and any whose full text holds the content.
        const sessions = [...new Set(plan.changed.map((c) => c.sessionId))]
        const rows = new Map<string, { id: string; body: unknown }>()
        if (sessions.length > 0) {
          for (
            const row of yield* sql<{ id: string; body: unknown }>`SELECT id, body FROM ${snapshots}
              WHERE session_id = ANY(${sessions}::text[])`
          ) rows.set(row.id, row)
        }
        // Full text is the one place a snapshot body can hold content: only snapshots with it are read.
        let afterSnapshot = "0"
        while (true) {
          const page = yield* sql<{ id: string; body: unknown; text: string }>`SELECT id, body, body::text AS text
            FROM ${snapshots} WHERE id > ${afterSnapshot}::bigint AND jsonb_typeof(body -> 'fullText') = 'object'
            ORDER BY id LIMIT ${FORGET_PAGE}`
          for (const row of page) if (holds(row.text)) rows.set(String(row.id), row)
          if (page.length < FORGET_PAGE) break
          afterSnapshot = String(page[page.length - 1]!.id)
        }
        const updated = yield* TelemetryRows.rewriteSnapshots(
          [...rows].map(([id, row]) => [id, row.body] as const),
          plan,
          forgotten,
          (id, body) => sql`UPDATE ${snapshots} SET body = ${body}::jsonb WHERE id = ${id}`
        )
        return { entries: plan.changed.length, snapshots: updated }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", failure("forgetMemories")))
  }
  return service
})

/** The telemetry store, after bringing its table up to date. */
export const make = store.make

/** The telemetry store, after checking that its table is already up to date (no DDL). */
export const makeWithoutMigrations = store.makeWithoutMigrations
