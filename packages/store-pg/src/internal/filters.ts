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
  if (filters.deliverable === true) {
    clauses.push(
      sql`${a}review_state <> 'rejected' AND ${a}invalidated_at IS NULL AND (${a}expires_at IS NULL OR ${a}expires_at > ${nowMillis})`
    )
  } else if (filters.includeSuperseded !== true) {
    clauses.push(sql`${a}invalidated_at IS NULL`)
  }
  return clauses
}
