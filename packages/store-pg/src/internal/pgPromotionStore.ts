import { PromotionStore } from "@engram/core"
import { StoredRows } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import { promotions, promotionTable } from "./migrations.js"
import * as PgText from "./pgText.js"
import { build } from "./storeBuild.js"

/** A row as `pg` returns it (BIGINT as a string). */
interface Row {
  readonly record_id: string
  readonly spec_key: string
  readonly spec_version: string
  readonly scope: string
  readonly placement: string | null
  readonly placement_key: string | null
  readonly key_source: string | null
  readonly tier: string | null
  readonly promoted_at: string | number
}

const columns = "record_id, spec_key, spec_version, scope, placement, placement_key, key_source, tier, promoted_at"

const skippedRows = PromotionStore.rowsSkipped.pipe(Metric.tagged("backend", "postgres"))

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** A stored row as a promotion row, or why it cannot be read. */
const decodeRow = (row: Row): Either.Either<PromotionStore.PromotionRow, string> => {
  const millis = Number(row.promoted_at)
  if (!Number.isSafeInteger(millis) || Math.abs(millis) > 8.64e15) {
    return Either.left(`promoted_at: ${String(row.promoted_at)} is not an epoch-millisecond integer`)
  }
  const placement = row.placement === null ? null : parseJson(row.placement)
  const candidate = {
    recordId: row.record_id,
    scope: row.scope,
    placement,
    placementKey: row.placement_key,
    keySource: row.key_source,
    specKey: row.spec_key,
    specVersion: row.spec_version,
    promotedAt: DateTime.unsafeMake(millis),
    tier: row.tier
  }
  // rowProblem checks every field against the schema and the address against the placement.
  const problem = PromotionStore.rowProblem(candidate)
  return problem === undefined
    ? Either.right(candidate as PromotionStore.PromotionRow)
    : Either.left(problem)
}

const storableProblem = (row: PromotionStore.PromotionRow): string | undefined => {
  const field = PgText.unstorableField([
    ["specKey", row.specKey],
    ["specVersion", row.specVersion],
    ["scope", row.scope],
    ["placementKey", row.placementKey],
    ["placement", row.placement === null ? null : JSON.stringify(row.placement)]
  ])
  return field === undefined ? undefined : `${field}: ${PgText.UNSTORABLE}`
}

const store = build(promotions, PromotionStore.PromotionStoreFailure, (sql, failure) => {
  const table = sql(promotionTable)
  const selectColumns = sql.literal(columns)

  const read = (operation: string, rows: ReadonlyArray<Row>) => {
    const { skipped, values } = StoredRows.decodeEach(rows, decodeRow, (row) => row.record_id)
    return Effect.as(
      StoredRows.reportSkipped(
        skipped,
        "skipped a stored promotion row that does not decode",
        ({ key, reason }) => ({ backend: "postgres", operation, memoryId: key, problem: reason }),
        skippedRows
      ),
      // The database already orders by (record_id, spec_key) COLLATE "C"; sorting again costs
      // little and keeps the order the core defines even if a collation were changed.
      { rows: values.sort(PromotionStore.compareRows), skipped: skipped.length }
    )
  }

  const specClause = (options: PromotionStore.ReadOptions | undefined) =>
    options?.specKey === undefined ? sql`` : sql`AND spec_key = ${options.specKey}`

  const service: PromotionStore.Service = {
    commit: (rows) =>
      Effect.gen(function*() {
        const valid = yield* PromotionStore.validateBatch(rows)
        for (let index = 0; index < valid.length; index++) {
          const problem = storableProblem(valid[index]!)
          if (problem !== undefined) return yield* new PromotionStore.InvalidPromotionRow({ index, problem })
        }
        if (valid.length === 0) return valid
        // One transaction: a row that conflicts fails the batch, and the rollback takes the
        // rows that did go in back out.
        yield* sql.withTransaction(Effect.gen(function*() {
          const inserted = yield* sql<{ record_id: string; spec_key: string }>`
            INSERT INTO ${table} (${selectColumns})
            SELECT * FROM unnest(
              ${valid.map((r) => r.recordId)}::text[], ${valid.map((r) => r.specKey)}::text[],
              ${valid.map((r) => r.specVersion)}::text[], ${valid.map((r) => r.scope)}::text[],
              ${valid.map((r) => (r.placement === null ? null : JSON.stringify(r.placement)))}::text[],
              ${valid.map((r) => r.placementKey)}::text[], ${valid.map((r) => r.keySource)}::text[],
              ${valid.map((r) => r.tier)}::text[], ${valid.map((r) => DateTime.toEpochMillis(r.promotedAt))}::bigint[]
            )
            ON CONFLICT (record_id, spec_key) DO NOTHING
            RETURNING record_id, spec_key`
          if (inserted.length < valid.length) {
            const stored = new Set(
              inserted.map((r) => PromotionStore.rowIdentity({ recordId: r.record_id, specKey: r.spec_key }))
            )
            const taken = valid.find((r) => !stored.has(PromotionStore.rowIdentity(r)))!
            return yield* new PromotionStore.DuplicatePromotion({ recordId: taken.recordId, specKey: taken.specKey })
          }
        }))
        return valid
      }).pipe(Effect.catchTag("SqlError", failure("commit"))),

    lookup: (scope, placementKey, options) =>
      Effect.flatMap(
        sql<Row>`SELECT ${selectColumns} FROM ${table}
          WHERE scope = ${scope} AND placement_key = ${placementKey} ${specClause(options)}
          ORDER BY record_id, spec_key`,
        (rows) => read("lookup", rows)
      ).pipe(Effect.catchTag("SqlError", failure("lookup"))),

    listByScope: (scope, options) =>
      Effect.flatMap(
        sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE scope = ${scope} ${specClause(options)}
          ORDER BY record_id, spec_key`,
        (rows) => read("listByScope", rows)
      ).pipe(Effect.catchTag("SqlError", failure("listByScope"))),

    getByRecords: (recordIds, options) =>
      recordIds.length === 0 ? Effect.succeed({ rows: [], skipped: 0 }) : Effect.flatMap(
        sql<Row>`SELECT ${selectColumns} FROM ${table}
          WHERE record_id = ANY(${[...new Set(recordIds)]}::text[]) ${specClause(options)}
          ORDER BY record_id, spec_key`,
        (rows) => read("getByRecords", rows)
      ).pipe(Effect.catchTag("SqlError", failure("getByRecords"))),

    forget: (recordIds) =>
      recordIds.length === 0 ? Effect.succeed(0) : Effect.map(
        sql<{ record_id: string }>`DELETE FROM ${table}
          WHERE record_id = ANY(${[...new Set(recordIds)]}::text[]) RETURNING record_id`,
        (gone) => gone.length
      ).pipe(Effect.catchTag("SqlError", failure("forget")))
  }
  return service
})

/** The promotion store, after bringing its table up to date. */
export const make = store.make

/** The promotion store, after checking that its table is already up to date (no DDL). */
export const makeWithoutMigrations = store.makeWithoutMigrations
