/**
 * The promotion table and the SQLite promotion store over it.
 *
 * One row per `(record_id, spec_key)` — the primary key, so "committed once" is the database's
 * own rule. The placement is stored as JSON (its arms differ in shape), its address in
 * `placement_key`, and `(scope, placement_key)` is indexed for the save gate's exact lookup.
 * Timestamps are INTEGER epoch milliseconds.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryRecord, PromotionStore, Routing } from "@engram/core"
import { StoredRows } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import { runMigrations } from "./migrations.js"
import { chunksOf, isEpochMillis, multiRowInsert, parseJsonOrUndefined } from "./sqlText.js"
import { build } from "./storeBuild.js"

/** @internal */
export const TABLE = "engram_promotions"
/** @internal */
export const MIGRATIONS_TABLE = "engram_promotion_migrations"

const COLUMNS = [
  "record_id",
  "spec_key",
  "spec_version",
  "scope",
  "placement",
  "placement_key",
  "key_source",
  "tier",
  "promoted_at"
] as const

/** Rows per multi-row INSERT: 9 binds a row stays far below SQLite's variable limit. */
const INSERT_CHUNK = 500
/** Ids per `IN (…)` lookup. */
const LOOKUP_CHUNK = 500

/** Migrations of the promotion store, in their own migrations table. */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_promotions": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // No CHECK constraints: rows are validated by the core rules on commit and decoded on every
    // read, where a bad row is skipped rather than failing the query.
    yield* sql.unsafe(`CREATE TABLE ${TABLE} (
      record_id TEXT NOT NULL COLLATE BINARY,
      spec_key TEXT NOT NULL COLLATE BINARY,
      spec_version TEXT NOT NULL,
      scope TEXT NOT NULL,
      placement TEXT,
      placement_key TEXT,
      key_source TEXT,
      tier TEXT,
      promoted_at INTEGER NOT NULL,
      PRIMARY KEY (record_id, spec_key)
    ) WITHOUT ROWID`)
    // The save gate's exact lookup, and listing a scope (its leading column).
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_address ON ${TABLE} (scope, placement_key)`)
  })
}

/** Runs the store's migrations (idempotent), in their own migrations table. */
export const migrate = runMigrations(MIGRATIONS_TABLE, migrations)

type Row = Record<string, unknown>

const keySources: ReadonlyArray<unknown> = Routing.KeySource.literals
const tiers: ReadonlyArray<unknown> = ["locked", "guarded", "earned", "auto"]
const isMemoryId = Schema.is(MemoryRecord.MemoryId)
const isScope = Schema.is(MemoryRecord.Scope)
const isPlacement = Schema.is(Routing.Placement)

/** A stored row as a promotion row, or why it cannot be read. */
export const decodeRow = (row: Row): Either.Either<PromotionStore.PromotionRow, string> => {
  const { promoted_at } = row
  if (!isEpochMillis(promoted_at)) {
    return Either.left(`promoted_at: ${String(promoted_at)} is not an epoch-millisecond integer`)
  }
  if (!isMemoryId(row.record_id)) return Either.left(`record_id: ${JSON.stringify(row.record_id)} is not a memory id`)
  if (!isScope(row.scope)) return Either.left(`scope: ${JSON.stringify(row.scope)} is not a scope`)
  if (typeof row.spec_key !== "string" || typeof row.spec_version !== "string") {
    return Either.left("spec_key and spec_version must be text")
  }
  let placement: Routing.Placement | null = null
  if (row.placement !== null) {
    const parsed = parseJsonOrUndefined(row.placement)
    if (!isPlacement(parsed)) return Either.left(`placement: ${String(row.placement)} is not a placement`)
    placement = parsed
  }
  if (row.placement_key !== null && typeof row.placement_key !== "string") {
    return Either.left("placement_key must be text")
  }
  if (row.key_source !== null && !keySources.includes(row.key_source)) {
    return Either.left(`key_source: ${JSON.stringify(row.key_source)} is not label or content`)
  }
  if (row.tier !== null && !tiers.includes(row.tier)) {
    return Either.left(`tier: ${JSON.stringify(row.tier)} is not a tier`)
  }
  const decoded: PromotionStore.PromotionRow = {
    recordId: row.record_id,
    scope: row.scope,
    placement,
    placementKey: row.placement_key as string | null,
    keySource: row.key_source as Routing.KeySource | null,
    specKey: row.spec_key,
    specVersion: row.spec_version,
    promotedAt: DateTime.unsafeMake(promoted_at),
    tier: row.tier as PromotionStore.PromotionRow["tier"]
  }
  const problem = PromotionStore.rowProblem(decoded)
  return problem === undefined ? Either.right(decoded) : Either.left(problem)
}

const rowValues = (row: PromotionStore.PromotionRow): Array<string | number | null> => [
  row.recordId,
  row.specKey,
  row.specVersion,
  row.scope,
  row.placement === null ? null : JSON.stringify(row.placement),
  row.placementKey,
  row.keySource,
  row.tier,
  DateTime.toEpochMillis(row.promotedAt)
]

const insertSql = multiRowInsert(TABLE, COLUMNS)

const isKeyViolation = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null || !("cause" in error)) return false
  const cause = error.cause
  if (typeof cause !== "object" || cause === null || !("code" in cause)) return false
  return cause.code === "SQLITE_CONSTRAINT_PRIMARYKEY" || cause.code === "SQLITE_CONSTRAINT_UNIQUE"
}

const skippedRows = Metric.tagged(PromotionStore.rowsSkipped, "backend", "sqlite")

/** Builds the SQLite promotion store over the ambient SQL client. Migrates first. */
export const make = build(migrate, PromotionStore.PromotionStoreFailure, (sql, toFailure) => {
  const columns = sql.literal(COLUMNS.join(", "))

  const read = (operation: string, rows: ReadonlyArray<Row>): Effect.Effect<PromotionStore.PromotionRead> => {
    const { skipped, values } = StoredRows.decodeEach(rows, decodeRow, (row) => String(row.record_id))
    return Effect.as(
      StoredRows.reportSkipped(
        skipped,
        "skipped a stored promotion row that failed to decode",
        ({ key, reason }) => ({ operation, memoryId: key, reason }),
        skippedRows
      ),
      { rows: values.sort(PromotionStore.compareRows), skipped: skipped.length }
    )
  }

  const specClause = (options: PromotionStore.ReadOptions | undefined) =>
    options?.specKey === undefined ? sql.literal("1=1") : sql`spec_key = ${options.specKey}`

  const findStored = (rows: ReadonlyArray<PromotionStore.PromotionRow>, error: SqlError) =>
    Effect.gen(function*() {
      const stored = new Set<string>()
      for (const chunk of chunksOf([...new Set(rows.map((row) => row.recordId))], LOOKUP_CHUNK)) {
        const found = yield* sql<{ record_id: string; spec_key: string }>`SELECT record_id, spec_key FROM ${sql(TABLE)}
          WHERE ${sql.in("record_id", chunk)}`
        for (const row of found) {
          stored.add(PromotionStore.rowIdentity({ recordId: row.record_id, specKey: row.spec_key }))
        }
      }
      const taken = rows.find((row) => stored.has(PromotionStore.rowIdentity(row)))
      return yield* taken === undefined
        ? Effect.fail(error)
        : Effect.fail(new PromotionStore.DuplicatePromotion({ recordId: taken.recordId, specKey: taken.specKey }))
    })

  const service: PromotionStore.Service = {
    commit: (rows) =>
      Effect.gen(function*() {
        const valid = yield* Either.match(PromotionStore.validateBatch(rows), {
          onLeft: (error) => Effect.fail(error),
          onRight: (checked) => Effect.succeed(checked)
        })
        if (valid.length === 0) return valid
        const chunks = chunksOf(valid, INSERT_CHUNK)
        const insert = (chunk: ReadonlyArray<PromotionStore.PromotionRow>) =>
          sql.unsafe(insertSql(chunk.length), chunk.flatMap(rowValues))
        // One statement is atomic by itself; several need a transaction (a savepoint in the caller's).
        yield* (chunks.length === 1
          ? insert(chunks[0]!)
          : sql.withTransaction(Effect.forEach(chunks, insert, { discard: true }))).pipe(
            Effect.catchIf(isKeyViolation, (error) => findStored(valid, error))
          )
        return valid
      }).pipe(Effect.catchTag("SqlError", toFailure("commit"))),

    lookup: (scope, placementKey, options) =>
      Effect.flatMap(
        sql<Row>`SELECT ${columns} FROM ${sql(TABLE)}
          WHERE scope = ${scope} AND placement_key = ${placementKey} AND ${specClause(options)}`,
        (rows) => read("lookup", rows)
      ).pipe(Effect.catchTag("SqlError", toFailure("lookup"))),

    listByScope: (scope, options) =>
      Effect.flatMap(
        sql<Row>`SELECT ${columns} FROM ${sql(TABLE)} WHERE scope = ${scope} AND ${specClause(options)}`,
        (rows) => read("listByScope", rows)
      ).pipe(Effect.catchTag("SqlError", toFailure("listByScope"))),

    getByRecords: (recordIds, options) =>
      Effect.gen(function*() {
        const rows: Array<Row> = []
        for (const chunk of chunksOf([...new Set(recordIds)], LOOKUP_CHUNK)) {
          rows.push(
            ...(yield* sql<Row>`SELECT ${columns} FROM ${sql(TABLE)}
              WHERE ${sql.in("record_id", chunk)} AND ${specClause(options)}`)
          )
        }
        return yield* read("getByRecords", rows)
      }).pipe(Effect.catchTag("SqlError", toFailure("getByRecords"))),

    forget: (recordIds) =>
      sql.withTransaction(Effect.gen(function*() {
        let removed = 0
        for (const chunk of chunksOf([...new Set(recordIds)], LOOKUP_CHUNK)) {
          const gone = yield* sql<{ record_id: string }>`DELETE FROM ${sql(TABLE)} WHERE ${sql.in("record_id", chunk)}
            RETURNING record_id`
          removed += gone.length
        }
        return removed
      })).pipe(Effect.catchTag("SqlError", toFailure("forget")))
  }
  return service
})
