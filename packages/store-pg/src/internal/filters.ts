/**
 * The SQL form of the shared search and listing filters over the memory table's own columns, for
 * the store and the vector index.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { type MemoryQuery } from "@engram/core"
import { MemoryRow } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import { memoryTable } from "./migrations.js"

// One value compares with "=" so that the (scope, created_at, id) index can deliver rows in
// listing order; PostgreSQL 15 cannot keep index order under "= ANY(array)".
const oneOf = (
  sql: SqlClient.SqlClient,
  column: string,
  values: ReadonlyArray<string> | undefined,
  clauses: Array<Statement.Fragment>
) => {
  if (values === undefined) return
  clauses.push(
    values.length === 1
      ? sql`${sql.literal(column)} = ${values[0]}`
      : sql`${sql.literal(column)} = ANY(${values}::text[])`
  )
}

/** The filters as SQL over the memory table's columns, each prefixed with `alias` (e.g. `"m."`) when given. */
export const filterClauses = (
  sql: SqlClient.SqlClient,
  filters: MemoryQuery.MemoryFilters,
  nowMillis: number,
  alias: "" | "m." = ""
): Array<Statement.Fragment> => {
  const clauses: Array<Statement.Fragment> = []
  oneOf(sql, `${alias}scope`, filters.scopes, clauses)
  oneOf(sql, `${alias}kind`, filters.kinds, clauses)
  oneOf(sql, `${alias}delivery_policy`, filters.deliveryPolicies, clauses)
  oneOf(sql, `${alias}review_state`, filters.reviewStates, clauses)
  const a = sql.literal(alias)
  if (filters.asOf !== undefined) {
    // MemoryQuery.isValidAt: the successor is read by a correlated subquery, so the outer row is
    // named by its table when the caller gave no alias (an unqualified column would be the inner's).
    const outer = sql.literal(alias === "" ? `${memoryTable}.` : alias)
    const t = DateTime.toEpochMillis(filters.asOf)
    clauses.push(
      sql`coalesce(${a}valid_from, CASE WHEN ${a}supersedes IS NOT NULL THEN ${a}created_at ELSE ${-MemoryRow
        .MAX_EPOCH_MILLIS}::bigint END) <= ${t}
      AND ${t} < coalesce(${a}valid_to, CASE WHEN ${a}superseded_by IS NOT NULL AND ${a}invalidated_at IS NOT NULL
        THEN coalesce((SELECT s.valid_from FROM ${
        sql(memoryTable)
      } s WHERE s.id = ${outer}superseded_by), ${a}invalidated_at)
        ELSE ${MemoryRow.MAX_EPOCH_MILLIS}::bigint END)`
    )
    if (filters.deliverable === true) {
      clauses.push(
        sql`${a}review_state <> 'rejected' AND (${a}invalidated_at IS NULL OR ${a}superseded_by IS NOT NULL) AND (${a}expires_at IS NULL OR ${a}expires_at > ${nowMillis})`
      )
    } else if (filters.includeSuperseded !== true) {
      clauses.push(sql`(${a}invalidated_at IS NULL OR ${a}superseded_by IS NOT NULL)`)
    }
  } else if (filters.deliverable === true) {
    clauses.push(
      sql`${a}review_state <> 'rejected' AND ${a}invalidated_at IS NULL AND (${a}expires_at IS NULL OR ${a}expires_at > ${nowMillis})
        AND (${a}valid_from IS NULL OR ${a}valid_from <= ${nowMillis}) AND (${a}valid_to IS NULL OR ${a}valid_to > ${nowMillis})`
    )
  } else if (filters.includeSuperseded !== true) {
    clauses.push(sql`${a}invalidated_at IS NULL`)
  }
  return clauses
}
