/**
 * The SQL form of the shared search and listing filters over the memory table's own columns, for
 * the store and the vector index.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import type { MemoryQuery } from "@engram/core"

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
    values.length === 1 ? sql`${sql(column)} = ${values[0]}` : sql`${sql(column)} = ANY(${values}::text[])`
  )
}

export const filterClauses = (
  sql: SqlClient.SqlClient,
  filters: MemoryQuery.MemoryFilters,
  nowMillis: number
): Array<Statement.Fragment> => {
  const clauses: Array<Statement.Fragment> = []
  oneOf(sql, "scope", filters.scopes, clauses)
  oneOf(sql, "kind", filters.kinds, clauses)
  oneOf(sql, "delivery_policy", filters.deliveryPolicies, clauses)
  oneOf(sql, "review_state", filters.reviewStates, clauses)
  if (filters.deliverable === true) {
    clauses.push(
      sql`review_state <> 'rejected' AND invalidated_at IS NULL AND (expires_at IS NULL OR expires_at > ${nowMillis})`
    )
  } else if (filters.includeSuperseded !== true) {
    clauses.push(sql`invalidated_at IS NULL`)
  }
  return clauses
}
