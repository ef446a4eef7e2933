/**
 * The SQLite read of conversation neighbours (`MemoryStore.neighbours`): the places of the
 * records the query is around (their positions, or their places in their scope's write order),
 * then core's merged turn ranges as a `VALUES` table joined to the memory table — a written
 * thread's ranges through its `(thread, turn)` index (migration `0005_conversation_index`), the
 * write order's through its `(scope, write_turn)` index (migration `0013_write_order`, decision
 * 0233) — the shared filters beside the join, in conversation order, at most the query's limit.
 * The ids the query leaves out (and the ids it is around) are one JSON bind read by `json_each`,
 * however many there are.
 *
 * @internal
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryQuery, type MemoryRecord } from "@engram/core"
import { MemoryRow, type StoredRows } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { rowOf, selectColumns, TABLE } from "./memoryTable.js"
import { filterClauses } from "./sqlFilters.js"
import { chunksOf } from "./sqlText.js"

/** Ranges per statement: five binds a range stays far below SQLite's 32,766-variable limit. */
const RANGE_CHUNK = 500
/** Where the record's id sits in a row read: after the row's range and place. */
const ID = 2 + MemoryRow.COLUMNS.indexOf("id")

/**
 * The places of the records `ids` names that have one: a written position, else a place in the
 * scope's write order (`MemoryQuery.WRITE_ORDER_THREAD`).
 */
export const placesOf = (
  sql: SqlClient.SqlClient,
  ids: ReadonlyArray<string>
): Effect.Effect<Array<MemoryQuery.Place>, SqlError> =>
  ids.length === 0 ? Effect.succeed([]) : Effect.map(
    sql<{ id: string; scope: string; thread: unknown; turn: unknown; write_turn: unknown }>`
      SELECT m.id, m.scope, m.thread, m.turn, m.write_turn FROM ${sql(TABLE)} m
      WHERE m.id IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`,
    (rows) =>
      MemoryQuery.inAskedOrder(ids, rows).flatMap((row): Array<MemoryQuery.Place> =>
        typeof row.thread === "string" && typeof row.turn === "number"
          ? [{ id: row.id, scope: row.scope, thread: row.thread, turn: row.turn }]
          : typeof row.write_turn === "number"
          ? [{ id: row.id, scope: row.scope, thread: MemoryQuery.WRITE_ORDER_THREAD, turn: row.write_turn }]
          : []
      )
  )

/**
 * The records in the query's turn ranges, in conversation order, with their places (the ranges
 * drive each branch — `CROSS JOIN` keeps SQLite's order — so each range is one index seek): ranges come
 * sorted from `MemoryQuery.turnRanges` and are numbered in that order, so `ORDER BY range, place,
 * id` is the conversation order on every backend (ids are ASCII: byte order is code-unit order).
 * `places` holds the places of the records around first, then those of the records read.
 */
export const readNeighbours = (
  sql: SqlClient.SqlClient,
  query: MemoryQuery.NeighbourQuery,
  nowMillis: number
): Effect.Effect<
  StoredRows.Decoded<MemoryRecord.MemoryRecord, string> & { readonly places: Array<MemoryQuery.Place> },
  SqlError
> =>
  Effect.gen(function*() {
    const around = yield* placesOf(sql, query.around ?? [])
    const ranges = MemoryQuery.turnRanges([...query.positions, ...around], query.window)
    const limit = query.limit ?? MemoryQuery.MAX_LIMIT
    const columns = sql.literal(selectColumns("m"))
    const exclude = query.exclude ?? []
    const filters = sql.and([
      ...filterClauses(sql, query, nowMillis),
      ...(exclude.length === 0 ? [] : [sql`m.id NOT IN (SELECT value FROM json_each(${JSON.stringify(exclude)}))`])
    ])
    const values: Array<MemoryRecord.MemoryRecord> = []
    const places: Array<MemoryQuery.Place> = [...around]
    const skipped: Array<StoredRows.Skipped<string>> = []
    let read = 0
    let offset = 0
    for (const chunk of chunksOf(ranges, RANGE_CHUNK)) {
      if (read >= limit) break
      const table = sql.join(", ", false)(
        chunk.map((range, i) => sql`(${offset + i}, ${range.scope}, ${range.thread}, ${range.from}, ${range.to})`)
      )
      const first = offset
      offset += chunk.length
      const rows = yield* sql`WITH p(range, scope, thread, lo, hi) AS (VALUES ${table})
        SELECT * FROM (
          SELECT p.range AS range, m.turn AS place, ${columns} FROM p CROSS JOIN ${sql(TABLE)} m
            ON m.thread = p.thread AND m.turn BETWEEN p.lo AND p.hi AND m.scope = p.scope
          WHERE p.thread <> '' AND ${filters}
          UNION ALL
          SELECT p.range AS range, m.write_turn AS place, ${columns} FROM p CROSS JOIN ${sql(TABLE)} m
            ON m.scope = p.scope AND m.write_turn BETWEEN p.lo AND p.hi
          WHERE p.thread = '' AND ${filters})
        ORDER BY range, place, id LIMIT ${limit - read}`.values
      read += rows.length
      const decoded = MemoryRow.decodeRows(rows.map((row) => rowOf(row, 2)), (record) => record)
      values.push(...decoded.values)
      skipped.push(...decoded.skipped)
      const rowOfId = new Map(rows.map((row) => [String(row[ID]), row]))
      for (const record of decoded.values) {
        const row = rowOfId.get(record.id)!
        const range = chunk[Number(row[0]) - first]!
        places.push({ id: record.id, scope: range.scope, thread: range.thread, turn: Number(row[1]) })
      }
    }
    return { values, skipped, places }
  })
