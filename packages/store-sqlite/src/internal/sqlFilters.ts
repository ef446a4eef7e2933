/**
 * The SQL form of the shared search and listing filters, for the memory table and the vector index.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { type MemoryQuery } from "@engram/core"
import { MemoryRow } from "@engram/store-sql"
import * as DateTime from "effect/DateTime"
import { TABLE } from "./memoryTable.js"

type Sql = SqlClient.SqlClient
type Fragment = Statement.Fragment

/** The SQL form of {@link MemoryQuery.matchesFilters} over the memory table aliased `m`. */
export const filterClauses = (sql: Sql, filters: MemoryQuery.MemoryFilters, nowMillis: number): Array<Fragment> => {
  // Never empty: `sql.and([])` renders as nothing, which would leave a bare WHERE.
  const clauses: Array<Fragment> = [sql.literal("1=1")]
  if (filters.scopes !== undefined) clauses.push(sql.in("m.scope", filters.scopes))
  if (filters.kinds !== undefined) clauses.push(sql.in("m.kind", filters.kinds))
  if (filters.deliveryPolicies !== undefined) clauses.push(sql.in("m.delivery_policy", filters.deliveryPolicies))
  if (filters.reviewStates !== undefined) clauses.push(sql.in("m.review_state", filters.reviewStates))
  if (filters.asOf !== undefined) {
    // MemoryQuery.isValidAt, the successor read by a correlated subquery.
    const t = DateTime.toEpochMillis(filters.asOf)
    clauses.push(sql`coalesce(m.valid_from, CASE WHEN m.supersedes IS NOT NULL THEN m.created_at ELSE ${-MemoryRow
      .MAX_EPOCH_MILLIS} END) <= ${t}
      AND ${t} < coalesce(m.valid_to, CASE WHEN m.superseded_by IS NOT NULL AND m.invalidated_at IS NOT NULL
        THEN coalesce((SELECT s.valid_from FROM ${sql(TABLE)} s WHERE s.id = m.superseded_by), m.invalidated_at)
        ELSE ${MemoryRow.MAX_EPOCH_MILLIS} END)`)
    if (filters.deliverable === true) {
      clauses.push(
        sql`m.review_state <> 'rejected' AND (m.invalidated_at IS NULL OR m.superseded_by IS NOT NULL) AND (m.expires_at IS NULL OR m.expires_at > ${nowMillis})`
      )
    } else if (filters.includeSuperseded !== true) {
      clauses.push(sql.literal("(m.invalidated_at IS NULL OR m.superseded_by IS NOT NULL)"))
    }
  } else if (filters.deliverable === true) {
    clauses.push(
      sql`m.review_state <> 'rejected' AND m.invalidated_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ${nowMillis})
        AND (m.valid_from IS NULL OR m.valid_from <= ${nowMillis}) AND (m.valid_to IS NULL OR m.valid_to > ${nowMillis})`
    )
  } else if (filters.includeSuperseded !== true) {
    clauses.push(sql.literal("m.invalidated_at IS NULL"))
  }
  return clauses
}
