import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { InjectionLog, SessionStore, TelemetryRetention, TelemetryStore, Trajectory } from "@engram/core"
import { StoredRows, TelemetryRows } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { reasonOf } from "../PgError.js"
import { ensure, injectionsTable, run, snapshotsTable, telemetry, trajectoryTable } from "./migrations.js"

type Row = TelemetryRows.InjectionColumns & { readonly id: string }

/** Rows read per page when forget looks for a forgotten memory's text. */
const FORGET_PAGE = 500

const epochMillis = (iso: string): number => DateTime.toEpochMillis(DateTime.unsafeMake(iso))

// An unpaired surrogate cannot be encoded as UTF-8: such a session id would be stored as another.
const unpairedSurrogate = /[\uD800-\uDFFF]/u

const makeAfter = <E>(prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* prepare
    const table = sql(injectionsTable)
    const snapshots = sql(snapshotsTable)
    const trajectory = sql(trajectoryTable)

    const failure = (operation: string) => (cause: SqlError) =>
      Effect.fail(new TelemetryStore.TelemetryStoreFailure({ operation, cause: reasonOf(cause) }))

    const snapshotWriter: TelemetryRows.SnapshotWriter<SqlError | TelemetryStore.InvalidTelemetryRow> = {
      snapshot: (encoded, at) =>
        unpairedSurrogate.test(encoded.sessionId)
          ? Effect.fail(
            new TelemetryStore.InvalidTelemetryRow({
              problem: "sessionId: contains an unpaired surrogate, which PostgreSQL cannot store"
            })
          )
          : Effect.map(
            sql<{ id: string }>`INSERT INTO ${snapshots} (session_id, turn, call, at, body)
              VALUES (${encoded.sessionId}, ${encoded.turn}, ${encoded.call}, ${at}, ${JSON.stringify(encoded)}::jsonb)
              ON CONFLICT (session_id, turn, call) DO NOTHING RETURNING id`,
            (inserted) => inserted.length > 0
          ),
      entry: (sessionId, c) =>
        sql`INSERT INTO ${trajectory} (session_id, address, kind, seq, hash, body)
          VALUES (${sessionId}, ${c.address}, ${c.kind}, ${c.seq}, ${c.hash}, ${c.body})
          ON CONFLICT (session_id, address) DO NOTHING`
    }

    const service: TelemetryStore.Service = {
      appendInjection: (row) =>
        Effect.gen(function*() {
          // Encoding first: an invalid row (an incognito row naming memories, say) is never written.
          const encoded = yield* InjectionLog.encodeInjectionRow(row)
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
          const { skipped, values } = StoredRows.decodeEach(rows, TelemetryRows.decodeInjection, (row) => row.id)
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
        ),

      appendSnapshot: (snapshot, given) =>
        TelemetryRows.appendSnapshot(snapshotWriter, snapshot, given).pipe(
          sql.withTransaction,
          Effect.catchTag("SqlError", failure("appendSnapshot"))
        ),

      listSnapshots: (sessionId, filter = {}) =>
        Effect.gen(function*() {
          const rows = yield* sql<{ id: string; body: unknown; usage: unknown }>`SELECT id, body, usage
            FROM ${snapshots} WHERE session_id = ${sessionId}
            ${filter.turn !== undefined ? sql`AND turn = ${filter.turn}` : sql``}
            ${filter.call !== undefined ? sql`AND call = ${filter.call}` : sql``}
            ORDER BY turn, call`
          const { skipped, values } = StoredRows.decodeEach(
            rows,
            (row) => TelemetryStore.decodeSnapshotRow(row.body, row.usage),
            (row) => row.id
          )
          yield* StoredRows.reportSkipped(
            skipped,
            "skipped a stored prompt snapshot that does not decode",
            ({ key, reason }) => ({ backend: "postgres", sessionId, rowId: key, problem: reason })
          )
          return { snapshots: values, skipped: skipped.length }
        }).pipe(Effect.catchTag("SqlError", failure("listSnapshots"))),

      readTrajectory: (sessionId) =>
        Effect.gen(function*() {
          const rows = yield* sql<
            { id: string; kind: unknown; seq: unknown; hash: unknown; body: unknown }
          >`SELECT id, kind, seq, hash, body FROM ${trajectory} WHERE session_id = ${sessionId} ORDER BY id`
          const { skipped, values } = StoredRows.decodeEach(rows, Trajectory.fromColumns, (row) => row.id)
          yield* StoredRows.reportSkipped(
            skipped,
            "skipped a stored trajectory entry that does not decode",
            ({ key, reason }) => ({ backend: "postgres", sessionId, rowId: key, problem: reason })
          )
          return Trajectory.collect(values, skipped.length)
        }).pipe(Effect.catchTag("SqlError", failure("readTrajectory"))),

      recordUsage: (key, usage) =>
        Effect.gen(function*() {
          const encoded = yield* TelemetryStore.encodeUsage(usage)
          const found = yield* sql<{ id: string }>`UPDATE ${snapshots} SET usage = ${JSON.stringify(encoded)}::jsonb
            WHERE session_id = ${key.sessionId} AND turn = ${key.turn} AND call = ${key.call} RETURNING id`
          return found.length > 0
        }).pipe(Effect.catchTag("SqlError", failure("recordUsage"))),

      forgetMemories: (forgotten) =>
        Effect.gen(function*() {
          if (forgotten.length === 0) return { entries: 0, snapshots: 0 }
          type EntryRow = TelemetryRows.EntryColumns<string>
          const holds = TelemetryRows.holdsAny(forgotten)
          // One pass over the table, a page at a time (one query per needle would scan it once per
          // forgotten record): only rows whose body holds an id or the content can change.
          const found = new Map<string, EntryRow>()
          let after = "0"
          while (true) {
            const page = yield* sql<EntryRow>`SELECT id, session_id, kind, seq, hash, body FROM ${trajectory}
              WHERE id > ${after}::bigint ORDER BY id LIMIT ${FORGET_PAGE}`
            for (const row of page) if (holds(row.body)) found.set(String(row.id), row)
            if (page.length < FORGET_PAGE) break
            after = String(page[page.length - 1]!.id)
          }
          const plan = TelemetryRows.planForget(found.values(), forgotten)
          for (const change of plan.changed) {
            const c = Trajectory.toColumns(change.after)
            if (change.after._tag === "Message") {
              yield* sql`UPDATE ${trajectory} SET hash = ${c.hash}, body = ${c.body} WHERE id = ${change.key}`
            } else {
              // A blob whose redacted body is already stored collapses into it.
              yield* sql`INSERT INTO ${trajectory} (session_id, address, kind, seq, hash, body)
                VALUES (${change.sessionId}, ${c.address}, ${c.kind}, ${c.seq}, ${c.hash}, ${c.body})
                ON CONFLICT (session_id, address) DO NOTHING`
              yield* sql`DELETE FROM ${trajectory} WHERE id = ${change.key}`
            }
          }
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
          let updated = 0
          for (const [id, row] of rows) {
            const body = TelemetryRows.redactedBody(row.body, plan, forgotten)
            if (body === undefined) continue
            yield* sql`UPDATE ${snapshots} SET body = ${body}::jsonb WHERE id = ${id}`
            updated++
          }
          return { entries: plan.changed.length, snapshots: updated }
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", failure("forgetMemories"))),

      prune: (request) =>
        Effect.gen(function*() {
          const latest = yield* sql<{ session_id: string; at: string | number }>`SELECT session_id, MAX(at) AS at
            FROM ${snapshots} GROUP BY session_id`
          const gone = TelemetryRetention.sessionsToPrune(
            latest.map((row) => ({ sessionId: row.session_id, at: Number(row.at) })),
            request,
            DateTime.toEpochMillis
          )
          let removed = 0
          let entries = 0
          for (const sessionId of gone) {
            const s = yield* sql<{ id: string }>`DELETE FROM ${snapshots} WHERE session_id = ${sessionId} RETURNING id`
            const e = yield* sql<{ id: string }>`DELETE FROM ${trajectory} WHERE session_id = ${sessionId} RETURNING id`
            removed += s.length
            entries += e.length
          }
          return { sessions: gone, snapshots: removed, entries }
        }).pipe(sql.withTransaction, Effect.catchTag("SqlError", failure("prune")))
    }
    return service
  })

/** The telemetry store, after bringing its table up to date. */
export const make = makeAfter(run(telemetry))

/** The telemetry store, after checking that its table is already up to date (no DDL). */
export const makeWithoutMigrations = makeAfter(ensure(telemetry))
