/**
 * The telemetry store's rows, read the same way by every SQL backend: an injection-log row's
 * columns decoded into an `InjectionLog` row, and the steps of `forgetMemories` that do not touch
 * SQL (which stored trajectory entries change, and a stored snapshot's body after redaction).
 * A backend whose driver returns JSON columns as text parses them before calling these.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import {
  InjectionLog,
  MemoryWrite,
  PromptSnapshot,
  SessionStore,
  TelemetryRedaction,
  TelemetryRetention,
  TelemetryStore,
  Trajectory
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as StoredRows from "./StoredRows.js"

/**
 * The injection-log columns, as the driver returned them (JSON columns already parsed).
 *
 * @since 0.1.0
 * @category models
 */
export interface InjectionColumns {
  readonly session_id: unknown
  readonly turn: unknown
  readonly mode: unknown
  /** Epoch milliseconds: a number, or the text of one (a PostgreSQL BIGINT). */
  readonly at: unknown
  readonly memory_ids: unknown
  readonly section_labels: unknown
}

const MAX_EPOCH_MILLIS = 8_640_000_000_000_000

const epochMillisOf = (at: unknown): number | undefined => {
  const millis = typeof at === "string" && at.trim() !== "" ? Number(at) : at
  return typeof millis === "number" && Number.isSafeInteger(millis) && Math.abs(millis) <= MAX_EPOCH_MILLIS
    ? millis
    : undefined
}

/**
 * A stored injection row as an `InjectionLog` row, or why it cannot be read.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeInjection = (row: InjectionColumns): Either.Either<InjectionLog.InjectionLogRow, string> => {
  const millis = epochMillisOf(row.at)
  if (millis === undefined) return Either.left(`at: ${String(row.at)} is not an epoch-millisecond integer`)
  return Either.mapLeft(
    InjectionLog.decodeStoredInjectionRow({
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

/**
 * A stored trajectory entry with its row key and session.
 *
 * @since 0.1.0
 * @category models
 */
export interface EntryColumns<K> {
  readonly id: K
  readonly session_id: string
  readonly kind: unknown
  readonly seq: unknown
  readonly hash: unknown
  readonly body: unknown
}

/**
 * Whether a stored body can hold any of the forgotten records' text (an id or the content):
 * only those rows are decoded and planned.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const holdsAny = (forgotten: ReadonlyArray<Trajectory.ForgottenText>) => {
  const needles = Trajectory.needlesOf(forgotten)
  return (body: unknown): boolean => typeof body === "string" && needles.some((needle) => body.includes(needle))
}

/**
 * The redaction plan over stored entries (`TelemetryRedaction.planForget`), keyed by row id;
 * entries that do not decode are left as they are.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const planForget = <K>(
  rows: Iterable<EntryColumns<K>>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): TelemetryRedaction.ForgetPlan<K> =>
  TelemetryRedaction.planForget(
    [...rows].flatMap((row) => {
      const entry = Trajectory.fromColumns(row)
      return Either.isRight(entry) ? [{ key: row.id, sessionId: row.session_id, entry: entry.right }] : []
    }),
    forgotten
  )

/**
 * A stored snapshot body (parsed JSON) after redaction under `plan`, as the JSON text to store —
 * or `undefined` when it does not decode or nothing it refers to changed.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const redactedBody = (
  body: unknown,
  plan: TelemetryRedaction.ForgetPlan<unknown>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): string | undefined => {
  const decoded = TelemetryStore.decodeSnapshotRow(body, null)
  if (Either.isLeft(decoded)) return undefined
  const redacted = TelemetryRedaction.redactSnapshot(decoded.right, plan, forgotten)
  if (redacted === undefined) return undefined
  const encoded = PromptSnapshot.encode(redacted)
  return Either.isRight(encoded) ? JSON.stringify(encoded.right) : undefined
}

/**
 * How one SQL backend writes a snapshot's rows, inside the transaction the caller runs
 * {@link appendSnapshot} in: `snapshot` inserts the encoded snapshot (its `at` as epoch
 * milliseconds) and answers `false` when the session already holds one for that turn and call;
 * `entry` inserts one trajectory entry's columns unless the session already holds its address
 * (entries are content-addressed: a blob is stored once).
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotWriter<E> {
  readonly snapshot: (
    encoded: typeof PromptSnapshot.PromptSnapshot.Encoded,
    atMillis: number
  ) => Effect.Effect<boolean, E>
  readonly entry: (sessionId: string, columns: Trajectory.EntryColumns) => Effect.Effect<unknown, E>
}

/**
 * Appends a snapshot and its trajectory entries with `writer`, the one write both SQL telemetry
 * stores run (`TelemetryStore.prepareSnapshot` first, so an invalid snapshot writes nothing):
 * fails with `DuplicateSnapshot` when its turn and call are taken. Run it in one transaction.
 *
 * @since 0.1.0
 * @category writing
 */
export const appendSnapshot = <E>(
  writer: SnapshotWriter<E>,
  snapshot: PromptSnapshot.PromptSnapshot,
  given: ReadonlyArray<Trajectory.TrajectoryEntry>
): Effect.Effect<void, E | TelemetryStore.InvalidTelemetryRow | TelemetryStore.DuplicateSnapshot> =>
  Effect.gen(function*() {
    const { encoded, entries } = yield* TelemetryStore.prepareSnapshot(snapshot, given)
    const written = yield* writer.snapshot(encoded, StoredRows.epochMillis(encoded.at))
    if (!written) {
      return yield* new TelemetryStore.DuplicateSnapshot({
        sessionId: encoded.sessionId,
        turn: encoded.turn,
        call: encoded.call
      })
    }
    for (const entry of entries) yield* writer.entry(encoded.sessionId, Trajectory.toColumns(entry))
  })

/**
 * A session's stored rows decoded one by one (keyed by their `id`): each that fails is logged as
 * "skipped a stored <what> that failed to decode" with the session and row, and counted.
 */
const decodeLogged = <R extends { readonly id: unknown }, A>(
  sessionId: string,
  rows: ReadonlyArray<R>,
  decode: (row: R) => Either.Either<A, string>,
  what: string
): Effect.Effect<{ readonly values: ReadonlyArray<A>; readonly skipped: number }> => {
  const { skipped, values } = StoredRows.decodeEach(rows, decode, (row) => String(row.id))
  return Effect.as(
    StoredRows.reportSkipped(
      skipped,
      `skipped a stored ${what} that failed to decode`,
      ({ key, reason }) => ({ sessionId, rowId: key, reason })
    ),
    { values, skipped: skipped.length }
  )
}

/**
 * A session's snapshots from `table`, in turn then call order (only `filter`'s turn or call when
 * given), decoded row by row: `parse` reads a JSON column as the driver returns it (text on SQLite,
 * parsed already on PostgreSQL); a row that fails is logged and counted in `skipped`.
 *
 * @since 0.1.0
 * @category reading
 */
export const listSnapshots = (sql: SqlClient.SqlClient, table: string, parse: (column: unknown) => unknown) =>
(
  sessionId: string,
  filter: { readonly turn?: number | undefined; readonly call?: number | undefined } = {}
): Effect.Effect<TelemetryStore.SnapshotList, SqlError> =>
  Effect.gen(function*() {
    const rows = yield* sql<{ id: unknown; body: unknown; usage: unknown }>`SELECT id, body, usage FROM ${sql(table)}
      WHERE session_id = ${sessionId}
      ${filter.turn !== undefined ? sql`AND turn = ${filter.turn}` : sql``}
      ${filter.call !== undefined ? sql`AND call = ${filter.call}` : sql``}
      ORDER BY turn, call`
    const read = yield* decodeLogged(
      sessionId,
      rows,
      (row) => TelemetryStore.decodeSnapshotRow(parse(row.body), parse(row.usage)),
      "prompt snapshot"
    )
    return { snapshots: read.values, skipped: read.skipped }
  })

/**
 * A session's trajectory from `table`, in the order it was appended; an entry that fails to decode
 * is logged and counted.
 *
 * @since 0.1.0
 * @category reading
 */
export const readTrajectory =
  (sql: SqlClient.SqlClient, table: string) =>
  (sessionId: string): Effect.Effect<Trajectory.StoredTrajectory, SqlError> =>
    Effect.gen(function*() {
      const rows = yield* sql<Omit<EntryColumns<unknown>, "session_id">>`SELECT id, kind, seq, hash, body
      FROM ${sql(table)} WHERE session_id = ${sessionId} ORDER BY id`
      const read = yield* decodeLogged(sessionId, rows, Trajectory.fromColumns, "trajectory entry")
      return Trajectory.collect(read.values, read.skipped)
    })

/**
 * Removes the snapshots and trajectory of the sessions `TelemetryRetention.sessionsToPrune` picks
 * for `request` (by each session's latest snapshot), in the caller's transaction.
 *
 * @since 0.1.0
 * @category retention
 */
export const prune = (
  sql: SqlClient.SqlClient,
  tables: { readonly snapshots: string; readonly trajectory: string }
) =>
(
  request: TelemetryStore.PruneRequest
): Effect.Effect<TelemetryStore.PruneResult, SqlError> =>
  Effect.gen(function*() {
    const latest = yield* sql<{ session_id: string; at: unknown }>`SELECT session_id, MAX(at) AS at
      FROM ${sql(tables.snapshots)} GROUP BY session_id`
    const gone = TelemetryRetention.sessionsToPrune(
      latest.map((row) => ({ sessionId: row.session_id, at: Number(row.at) })),
      request,
      DateTime.toEpochMillis
    )
    let snapshots = 0
    let entries = 0
    for (const sessionId of gone) {
      const s = yield* sql`DELETE FROM ${sql(tables.snapshots)} WHERE session_id = ${sessionId} RETURNING id`
      const e = yield* sql`DELETE FROM ${sql(tables.trajectory)} WHERE session_id = ${sessionId} RETURNING id`
      snapshots += s.length
      entries += e.length
    }
    return { sessions: gone, snapshots, entries }
  })

/** Rows read per page when forgetting looks for a forgotten memory's text. */
const FORGET_PAGE = 500

/**
 * The trajectory half of `forgetMemories`, in the caller's transaction: reads `table` once, a page
 * at a time (one query per needle would scan it once per forgotten record), plans the redaction of
 * the rows whose body holds a forgotten id or content ({@link planForget}), and applies it — a
 * message rewritten in place, a blob stored under its redacted address (collapsing into one already
 * stored) and its old row removed. Returns the plan, whose changed sessions the snapshot half reads.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const redactTrajectory = (
  sql: SqlClient.SqlClient,
  table: string,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>
): Effect.Effect<TelemetryRedaction.ForgetPlan<unknown>, SqlError> =>
  Effect.gen(function*() {
    const holds = holdsAny(forgotten)
    const found = new Map<string, EntryColumns<unknown>>()
    let after: unknown = 0
    while (true) {
      const page = yield* sql<EntryColumns<unknown>>`SELECT id, session_id, kind, seq, hash, body FROM ${sql(table)}
        WHERE id > ${after} ORDER BY id LIMIT ${FORGET_PAGE}`
      for (const row of page) if (holds(row.body)) found.set(String(row.id), row)
      if (page.length < FORGET_PAGE) break
      after = page[page.length - 1]!.id
    }
    const plan = planForget(found.values(), forgotten)
    for (const change of plan.changed) {
      const c = Trajectory.toColumns(change.after)
      if (change.after._tag === "Message") {
        yield* sql`UPDATE ${sql(table)} SET hash = ${c.hash}, body = ${c.body} WHERE id = ${change.key}`
      } else {
        yield* sql`INSERT INTO ${sql(table)} (session_id, address, kind, seq, hash, body)
          VALUES (${change.sessionId}, ${c.address}, ${c.kind}, ${c.seq}, ${c.hash}, ${c.body})
          ON CONFLICT (session_id, address) DO NOTHING`
        yield* sql`DELETE FROM ${sql(table)} WHERE id = ${change.key}`
      }
    }
    return plan
  })

/**
 * A SQL telemetry store's tables.
 *
 * @since 0.1.0
 * @category models
 */
export interface Tables {
  readonly injections: string
  readonly snapshots: string
  readonly trajectory: string
}

/**
 * The operations of a telemetry store that every SQL backend runs alike, over `sql` and its
 * `tables`: the injection log's read and the sessions it holds, the snapshot write ({@link appendSnapshot};
 * a session id the backend cannot store refused with `InvalidTelemetryRow`),
 * the snapshot and trajectory reads (`parse` reads a JSON column as the driver returns it) and
 * usage, retention — each a transaction where it writes, a `SqlError` turned into the store's failure by
 * `failure`. A backend adds the injection write and `forgetMemories` in its own dialect.
 *
 * @since 0.1.0
 * @category constructors
 */
export const operations = (
  sql: SqlClient.SqlClient,
  tables: Tables,
  options: {
    readonly parse: (column: unknown) => unknown
    /** A JSON text bound as the driver stores a JSON column (PostgreSQL casts it to `jsonb`). */
    readonly json: (text: string) => Statement.Fragment
    /** Why the backend cannot store a session id, when it cannot (PostgreSQL: an unpaired surrogate). */
    readonly sessionIdProblem?: ((sessionId: string) => string | undefined) | undefined
    readonly failure: (
      operation: string
    ) => (error: SqlError) => Effect.Effect<never, TelemetryStore.TelemetryStoreFailure>
  }
): Pick<
  TelemetryStore.Service,
  "listInjections" | "listSessions" | "appendSnapshot" | "listSnapshots" | "readTrajectory" | "recordUsage" | "prune"
> => {
  const writer: SnapshotWriter<SqlError | TelemetryStore.InvalidTelemetryRow> = {
    snapshot: (encoded, at) => {
      const problem = options.sessionIdProblem?.(encoded.sessionId)
      if (problem !== undefined) {
        return Effect.fail(new TelemetryStore.InvalidTelemetryRow({ problem: `sessionId: ${problem}` }))
      }
      return Effect.map(
        sql`INSERT INTO ${sql(tables.snapshots)} (session_id, turn, call, at, body)
          VALUES (${encoded.sessionId}, ${encoded.turn}, ${encoded.call}, ${at}, ${
          options.json(JSON.stringify(encoded))
        })
          ON CONFLICT (session_id, turn, call) DO NOTHING RETURNING id`,
        (inserted) => inserted.length > 0
      )
    },
    entry: (sessionId, c) =>
      sql`INSERT INTO ${sql(tables.trajectory)} (session_id, address, kind, seq, hash, body)
        VALUES (${sessionId}, ${c.address}, ${c.kind}, ${c.seq}, ${c.hash}, ${c.body})
        ON CONFLICT (session_id, address) DO NOTHING`
  }
  return {
    listInjections: (sessionId) =>
      Effect.gen(function*() {
        const rows = yield* sql<InjectionColumns & { readonly id: unknown }>`SELECT id, session_id, turn, mode, at,
        memory_ids, section_labels FROM ${sql(tables.injections)} WHERE session_id = ${sessionId} ORDER BY id`
        const read = yield* decodeLogged(
          sessionId,
          rows,
          (row) =>
            decodeInjection({
              ...row,
              memory_ids: options.parse(row.memory_ids),
              section_labels: options.parse(row.section_labels)
            }),
          "injection row"
        )
        return { rows: read.values, skipped: read.skipped }
      }).pipe(Effect.catchTag("SqlError", options.failure("listInjections"))),
    listSessions: () =>
      sql<{ session_id: string }>`SELECT DISTINCT session_id FROM ${sql(tables.injections)}`.pipe(
        // Sorted here: the database orders by UTF-8 bytes, the contract by UTF-16 code units.
        Effect.map((rows) => SessionStore.sortSessionIds(rows.map((row) => row.session_id))),
        Effect.catchTag("SqlError", options.failure("listSessions"))
      ),
    appendSnapshot: (snapshot, given) =>
      appendSnapshot(writer, snapshot, given).pipe(
        sql.withTransaction,
        Effect.catchTag("SqlError", options.failure("appendSnapshot"))
      ),
    listSnapshots: (sessionId, filter) =>
      listSnapshots(sql, tables.snapshots, options.parse)(sessionId, filter).pipe(
        Effect.catchTag("SqlError", options.failure("listSnapshots"))
      ),
    readTrajectory: (sessionId) =>
      readTrajectory(sql, tables.trajectory)(sessionId).pipe(
        Effect.catchTag("SqlError", options.failure("readTrajectory"))
      ),
    recordUsage: (key, usage) =>
      Effect.gen(function*() {
        const encoded = yield* TelemetryStore.encodeUsage(usage)
        const found = yield* sql`UPDATE ${sql(tables.snapshots)} SET usage = ${options.json(JSON.stringify(encoded))}
        WHERE session_id = ${key.sessionId} AND turn = ${key.turn} AND call = ${key.call} RETURNING id`
        return found.length > 0
      }).pipe(Effect.catchTag("SqlError", options.failure("recordUsage"))),
    prune: (request) =>
      prune(sql, tables)(request).pipe(sql.withTransaction, Effect.catchTag("SqlError", options.failure("prune")))
  }
}

/**
 * The snapshot half of `forgetMemories`' last step: each stored snapshot body (parsed, by row key)
 * redacted under `plan` ({@link redactedBody}) and written back with `update` where it changed.
 * Returns how many were rewritten.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const rewriteSnapshots = <K, E>(
  bodies: Iterable<readonly [K, unknown]>,
  plan: TelemetryRedaction.ForgetPlan<unknown>,
  forgotten: ReadonlyArray<Trajectory.ForgottenText>,
  update: (key: K, body: string) => Effect.Effect<unknown, E>
): Effect.Effect<number, E> =>
  Effect.gen(function*() {
    let rewritten = 0
    for (const [key, body] of bodies) {
      const redacted = redactedBody(body, plan, forgotten)
      if (redacted === undefined) continue
      yield* update(key, redacted)
      rewritten++
    }
    return rewritten
  })
