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
import { InjectionLog, SessionStore, TelemetryRetention, TelemetryStore, Trajectory } from "@engram/core"
import { StoredRows, TelemetryRows } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { runMigrations } from "./migrations.js"
import { causeOf } from "./sqliteErrors.js"
import { parseJsonOrUndefined } from "./sqlText.js"

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
type EntryRow = TelemetryRows.EntryColumns<number>

/** A stored row as an injection row, or why it cannot be read (its JSON columns are text here). */
export const decodeRow = (row: Row): Either.Either<InjectionLog.InjectionLogRow, string> =>
  TelemetryRows.decodeInjection({
    session_id: row.session_id,
    turn: row.turn,
    mode: row.mode,
    at: row.at,
    memory_ids: parseJsonOrUndefined(row.memory_ids),
    section_labels: parseJsonOrUndefined(row.section_labels)
  })

const toFailure = (operation: string) => (cause: SqlError) =>
  Effect.fail(new TelemetryStore.TelemetryStoreFailure({ operation, cause: causeOf(cause, cause.message) }))

/** Builds the SQLite telemetry store over the ambient SQL client. Migrates first. */
export const make: Effect.Effect<
  TelemetryStore.Service,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* migrate

  const snapshotWriter: TelemetryRows.SnapshotWriter<SqlError> = {
    snapshot: (encoded, at) =>
      Effect.map(
        sql<{ id: number }>`INSERT INTO ${sql(SNAPSHOTS_TABLE)} (session_id, turn, call, at, body)
          VALUES (${encoded.sessionId}, ${encoded.turn}, ${encoded.call}, ${at}, ${JSON.stringify(encoded)})
          ON CONFLICT (session_id, turn, call) DO NOTHING RETURNING id`,
        (inserted) => inserted.length > 0
      ),
    entry: (sessionId, c) =>
      sql`INSERT INTO ${sql(TRAJECTORY_TABLE)} (session_id, address, kind, seq, hash, body)
        VALUES (${sessionId}, ${c.address}, ${c.kind}, ${c.seq}, ${c.hash}, ${c.body})
        ON CONFLICT (session_id, address) DO NOTHING`
  }

  const service: TelemetryStore.Service = {
    appendInjection: (row) =>
      Effect.gen(function*() {
        // Encoding first: an invalid row (an incognito row naming memories, say) is never written.
        const encoded = yield* InjectionLog.encodeInjectionRow(row)
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
      ),

    appendSnapshot: (snapshot, given) =>
      TelemetryRows.appendSnapshot(snapshotWriter, snapshot, given).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", toFailure("appendSnapshot"))
      ),

    listSnapshots: (sessionId, filter = {}) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT id, body, usage FROM ${sql(SNAPSHOTS_TABLE)}
          WHERE session_id = ${sessionId}
          ${filter.turn !== undefined ? sql`AND turn = ${filter.turn}` : sql``}
          ${filter.call !== undefined ? sql`AND call = ${filter.call}` : sql``}
          ORDER BY turn, call`
        const { skipped, values } = StoredRows.decodeEach(
          rows,
          (row) => TelemetryStore.decodeSnapshotRow(parseJsonOrUndefined(row.body), parseJsonOrUndefined(row.usage)),
          (row) => String(row.id)
        )
        yield* StoredRows.reportSkipped(
          skipped,
          "skipped a stored prompt snapshot that failed to decode",
          ({ key, reason }) => ({ sessionId, rowId: key, reason })
        )
        return { snapshots: values, skipped: skipped.length }
      }).pipe(Effect.catchTag("SqlError", toFailure("listSnapshots"))),

    readTrajectory: (sessionId) =>
      Effect.gen(function*() {
        const rows = yield* sql<EntryRow>`SELECT id, kind, seq, hash, body FROM ${sql(TRAJECTORY_TABLE)}
          WHERE session_id = ${sessionId} ORDER BY id`
        const { skipped, values } = StoredRows.decodeEach(rows, Trajectory.fromColumns, (row) => String(row.id))
        yield* StoredRows.reportSkipped(
          skipped,
          "skipped a stored trajectory entry that failed to decode",
          ({ key, reason }) => ({ sessionId, rowId: key, reason })
        )
        return Trajectory.collect(values, skipped.length)
      }).pipe(Effect.catchTag("SqlError", toFailure("readTrajectory"))),

    recordUsage: (key, usage) =>
      Effect.gen(function*() {
        const encoded = yield* TelemetryStore.encodeUsage(usage)
        const found = yield* sql<{ id: number }>`UPDATE ${sql(SNAPSHOTS_TABLE)} SET usage = ${JSON.stringify(encoded)}
          WHERE session_id = ${key.sessionId} AND turn = ${key.turn} AND call = ${key.call} RETURNING id`
        return found.length > 0
      }).pipe(Effect.catchTag("SqlError", toFailure("recordUsage"))),

    forgetMemories: (forgotten) =>
      Effect.gen(function*() {
        if (forgotten.length === 0) return { entries: 0, snapshots: 0 }
        const holds = TelemetryRows.holdsAny(forgotten)
        // One pass over the table, a page at a time: only rows whose body holds an id or the
        // content can change. (One query per needle would scan the table once per forgotten record.)
        const candidates = new Map<number, EntryRow>()
        let after = 0
        while (true) {
          const page = yield* sql<EntryRow>`SELECT id, session_id, kind, seq, hash, body
            FROM ${sql(TRAJECTORY_TABLE)} WHERE id > ${after} ORDER BY id LIMIT ${FORGET_PAGE}`
          for (const row of page) if (holds(row.body)) candidates.set(row.id, row)
          if (page.length < FORGET_PAGE) break
          after = page[page.length - 1]!.id
        }
        const plan = TelemetryRows.planForget(candidates.values(), forgotten)
        for (const change of plan.changed) {
          const c = Trajectory.toColumns(change.after)
          // A blob whose redacted body is already stored collapses into it.
          yield* sql`INSERT OR IGNORE INTO ${sql(TRAJECTORY_TABLE)} (session_id, address, kind, seq, hash, body)
            VALUES (${change.sessionId}, ${c.address}, ${c.kind}, ${c.seq}, ${c.hash}, ${c.body})`
          if (change.after._tag === "Message") {
            yield* sql`UPDATE ${sql(TRAJECTORY_TABLE)} SET hash = ${c.hash}, body = ${c.body} WHERE id = ${change.key}`
          } else {
            yield* sql`DELETE FROM ${sql(TRAJECTORY_TABLE)} WHERE id = ${change.key}`
          }
        }
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
        let snapshots = 0
        for (const [id, row] of rows) {
          const body = TelemetryRows.redactedBody(parseJsonOrUndefined(row.body), plan, forgotten)
          if (body === undefined) continue
          yield* sql`UPDATE ${sql(SNAPSHOTS_TABLE)} SET body = ${body} WHERE id = ${id}`
          snapshots++
        }
        return { entries: plan.changed.length, snapshots }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", toFailure("forgetMemories"))),

    prune: (request) =>
      Effect.gen(function*() {
        const latest = yield* sql<{ session_id: string; at: number }>`SELECT session_id, MAX(at) AS at
          FROM ${sql(SNAPSHOTS_TABLE)} GROUP BY session_id`
        const gone = TelemetryRetention.sessionsToPrune(
          latest.map((row) => ({ sessionId: row.session_id, at: Number(row.at) })),
          request,
          DateTime.toEpochMillis
        )
        let snapshots = 0
        let entries = 0
        for (const sessionId of gone) {
          const s = yield* sql<{ id: number }>`DELETE FROM ${sql(SNAPSHOTS_TABLE)}
            WHERE session_id = ${sessionId} RETURNING id`
          const e = yield* sql<{ id: number }>`DELETE FROM ${sql(TRAJECTORY_TABLE)}
            WHERE session_id = ${sessionId} RETURNING id`
          snapshots += s.length
          entries += e.length
        }
        return { sessions: gone, snapshots, entries }
      }).pipe(sql.withTransaction, Effect.catchTag("SqlError", toFailure("prune")))
  }
  return service
})
