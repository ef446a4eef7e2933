/**
 * The SQLite read of conversation neighbours (`MemoryStore.neighbours`): core's merged turn
 * ranges as a `VALUES` table joined to the memory table through its `(thread, turn)` index
 * (migration `0005_conversation_index`), the shared filters beside the join, in conversation
 * order, at most the query's limit. The ids the query leaves out are one JSON bind read by
 * `json_each`, however many there are.
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

/**
 * The records in the query's turn ranges, in conversation order: ranges come sorted from
 * `MemoryQuery.turnRanges` and are numbered in that order, so `ORDER BY range, turn, id` is the
 * conversation order on every backend (ids are ASCII: byte order is code-unit order).
 */
export const readNeighbours = (
  sql: SqlClient.SqlClient,
  query: MemoryQuery.NeighbourQuery,
  nowMillis: number
): Effect.Effect<StoredRows.Decoded<MemoryRecord.MemoryRecord, string>, SqlError> =>
  Effect.gen(function*() {
    const ranges = MemoryQuery.turnRanges(query.positions, query.window)
    const limit = query.limit ?? MemoryQuery.MAX_LIMIT
    const columns = sql.literal(selectColumns("m"))
    const exclude = query.exclude ?? []
    const filters = sql.and([
      ...filterClauses(sql, query, nowMillis),
      ...(exclude.length === 0 ? [] : [sql`m.id NOT IN (SELECT value FROM json_each(${JSON.stringify(exclude)}))`])
    ])
    const values: Array<MemoryRecord.MemoryRecord> = []
    const skipped: Array<StoredRows.Skipped<string>> = []
    let read = 0
    let offset = 0
    for (const chunk of chunksOf(ranges, RANGE_CHUNK)) {
      if (read >= limit) break
      const table = sql.join(", ", false)(
        chunk.map((range, i) => sql`(${offset + i}, ${range.scope}, ${range.thread}, ${range.from}, ${range.to})`)
      )
      offset += chunk.length
      const rows = yield* sql`WITH p(range, scope, thread, lo, hi) AS (VALUES ${table})
        SELECT ${columns} FROM p JOIN ${sql(TABLE)} m
          ON m.thread = p.thread AND m.turn BETWEEN p.lo AND p.hi AND m.scope = p.scope
        WHERE ${filters}
        ORDER BY p.range, m.turn, m.id LIMIT ${limit - read}`.values
      read += rows.length
      const decoded = MemoryRow.decodeRows(rows.map((values) => rowOf(values, 0)), (record) => record)
      values.push(...decoded.values)
      skipped.push(...decoded.skipped)
    }
    return { values, skipped }
  })
