/**
 * The PostgreSQL read of conversation neighbours (`MemoryStore.neighbours`): core's merged turn
 * ranges unnested from arrays (four parameters however many ranges) and joined to the memory
 * table through its `(thread, turn)` index (migration `0004_conversation_index`), the shared
 * filters beside the join, in conversation order, at most the query's limit. The ids the query
 * leaves out are one array parameter.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryQuery } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Filters from "./filters.js"
import { memoryTable } from "./migrations.js"

/** Prefixes every column the shared filters name with the memory table's alias. */
const qualified = (sql: SqlClient.SqlClient, query: MemoryQuery.NeighbourQuery, nowMillis: number) =>
  Filters.filterClauses(sql, query, nowMillis, "m.")

/**
 * The rows in the query's turn ranges, in conversation order: ranges come sorted from
 * `MemoryQuery.turnRanges` and are numbered in that order (`WITH ORDINALITY`), so
 * `ORDER BY range, turn, id` is the conversation order on every backend (ids sort `COLLATE "C"`).
 */
export const readNeighbours = <Row extends object>(
  sql: SqlClient.SqlClient,
  columns: string,
  query: MemoryQuery.NeighbourQuery,
  nowMillis: number
): Effect.Effect<ReadonlyArray<Row>, SqlError> =>
  Effect.suspend(() => {
    const ranges = MemoryQuery.turnRanges(query.positions, query.window)
    if (ranges.length === 0) return Effect.succeed([])
    const exclude = query.exclude ?? []
    const clauses = [
      ...qualified(sql, query, nowMillis),
      ...(exclude.length === 0 ? [] : [sql`NOT (m.id = ANY(${exclude}::text[]))`])
    ]
    return sql<Row>`SELECT ${sql.literal(columns)}
      FROM unnest(${ranges.map((r) => r.scope)}::text[], ${ranges.map((r) => r.thread)}::text[],
        ${ranges.map((r) => r.from)}::int[], ${ranges.map((r) => r.to)}::int[]) WITH ORDINALITY
        AS p(scope, thread, lo, hi, range)
      JOIN ${sql(memoryTable)} m ON m.thread = p.thread AND m.turn BETWEEN p.lo AND p.hi AND m.scope = p.scope
      ${clauses.length === 0 ? sql`` : sql`WHERE ${sql.and(clauses)}`}
      ORDER BY p.range, m.turn, m.id LIMIT ${query.limit ?? MemoryQuery.MAX_LIMIT}`
  })
