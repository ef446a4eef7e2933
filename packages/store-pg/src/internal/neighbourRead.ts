/**
 * The PostgreSQL read of conversation neighbours (`MemoryStore.neighbours`): the places of the
 * records the query is around (their positions, or their places in their scope's write order),
 * then core's merged turn ranges unnested from arrays (four parameters however many ranges) and
 * joined to the memory table — a written thread's ranges through its `(thread, turn)` index
 * (migration `0004_conversation_index`), the write order's through its `(scope, write_turn)` index
 * (migration `0012_write_order`, decision 0233) — the shared filters beside the join, in
 * conversation order, at most the query's limit. The ids the query leaves out are one array
 * parameter.
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
 * The places of the records `ids` names that have one: a written position, else a place in the
 * scope's write order (`MemoryQuery.WRITE_ORDER_THREAD`).
 */
const placesOf = (
  sql: SqlClient.SqlClient,
  ids: ReadonlyArray<string>
): Effect.Effect<Array<MemoryQuery.Place>, SqlError> =>
  ids.length === 0 ? Effect.succeed([]) : Effect.map(
    sql<{ id: string; scope: string; thread: string | null; turn: number | null; write_turn: number | null }>`
      SELECT id, scope, thread, turn, write_turn FROM ${sql(memoryTable)} WHERE id = ANY(${ids}::text[])`,
    (rows) =>
      MemoryQuery.inAskedOrder(ids, rows).flatMap((row): Array<MemoryQuery.Place> =>
        row.thread !== null && row.turn !== null
          ? [{ id: row.id, scope: row.scope, thread: row.thread, turn: Number(row.turn) }]
          : row.write_turn !== null
          ? [{ id: row.id, scope: row.scope, thread: MemoryQuery.WRITE_ORDER_THREAD, turn: Number(row.write_turn) }]
          : []
      )
  )

/**
 * The rows in the query's turn ranges, in conversation order, each with its place, and the places
 * of the records around: ranges come sorted from `MemoryQuery.turnRanges` and are numbered in that
 * order (`WITH ORDINALITY`), so `ORDER BY range, place, id` is the conversation order on every
 * backend (ids sort `COLLATE "C"`).
 */
export const readNeighbours = <Row extends object>(
  sql: SqlClient.SqlClient,
  columns: string,
  query: MemoryQuery.NeighbourQuery,
  nowMillis: number
): Effect.Effect<
  {
    readonly around: ReadonlyArray<MemoryQuery.Place>
    readonly rows: ReadonlyArray<{ readonly row: Row; readonly place: MemoryQuery.Place }>
  },
  SqlError
> =>
  Effect.gen(function*() {
    const around = yield* placesOf(sql, query.around ?? [])
    const ranges = MemoryQuery.turnRanges([...query.positions, ...around], query.window)
    if (ranges.length === 0) return { around, rows: [] }
    const exclude = query.exclude ?? []
    const clauses = sql.and([
      ...qualified(sql, query, nowMillis),
      ...(exclude.length === 0 ? [] : [sql`NOT (m.id = ANY(${exclude}::text[]))`])
    ])
    const p = sql`unnest(${ranges.map((r) => r.scope)}::text[], ${ranges.map((r) => r.thread)}::text[],
        ${ranges.map((r) => r.from)}::int[], ${ranges.map((r) => r.to)}::int[]) WITH ORDINALITY
        AS p(scope, thread, lo, hi, range)`
    const rows = yield* sql<Row & { readonly place_range: unknown; readonly place_turn: unknown }>`
      SELECT * FROM (
        SELECT p.range AS place_range, m.turn AS place_turn, ${sql.literal(columns)} FROM ${p}
        JOIN ${sql(memoryTable)} m ON m.thread = p.thread AND m.turn BETWEEN p.lo AND p.hi AND m.scope = p.scope
        WHERE p.thread <> '' AND ${clauses}
        UNION ALL
        SELECT p.range, m.write_turn, ${sql.literal(columns)} FROM ${p}
        JOIN ${sql(memoryTable)} m ON m.scope = p.scope AND m.write_turn BETWEEN p.lo AND p.hi
        WHERE p.thread = '' AND ${clauses}) AS n
      ORDER BY place_range, place_turn, id LIMIT ${query.limit ?? MemoryQuery.MAX_LIMIT}`
    return {
      around,
      rows: rows.map(({ place_range, place_turn, ...row }) => {
        const range = ranges[Number(place_range) - 1]!
        return {
          row: row as unknown as Row,
          place: {
            id: String((row as { id?: unknown }).id),
            scope: range.scope,
            thread: range.thread,
            turn: Number(place_turn)
          }
        }
      })
    }
  })
