/**
 * The store's size as BM25 and the planner read it: how many records it holds and the sum of
 * their search lengths, kept in one row that every write, forget and re-index updates in its own
 * transaction. Reading it is one primary-key look-up; counting the table instead cost a search
 * ~20 ms at 100,000 records once a second, ten times that at 1M (issue #25, decision 0125).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { TABLE, TOTALS_TABLE } from "./memoryTable.js"

/** The totals counted from the records themselves. */
const counted = `SELECT count(*) AS records, coalesce(sum(search_length), 0) AS length FROM ${TABLE}`

/** Adds `records` records of `length` search tokens in all (negative: removes them). */
export const add = (sql: SqlClient.SqlClient, records: number, length: number): Effect.Effect<void, SqlError> =>
  records === 0 && length === 0 ? Effect.void : Effect.asVoid(
    sql.unsafe(
      `UPDATE ${TOTALS_TABLE} SET records = records + ?, search_length = search_length + ? WHERE id = 1`,
      [records, length]
    )
  )

/** Counts the totals again from the records (after a re-index rewrites their lengths). */
export const recount = (sql: SqlClient.SqlClient): Effect.Effect<void, SqlError> =>
  Effect.asVoid(sql.unsafe(`UPDATE ${TOTALS_TABLE} SET (records, search_length) = (${counted}) WHERE id = 1`))

/** The totals as the row holds them. */
export const read = (
  sql: SqlClient.SqlClient
): Effect.Effect<{ readonly total: number; readonly length: number }, SqlError> =>
  Effect.map(
    sql.unsafe<{ records: number; search_length: number }>(
      `SELECT records, search_length FROM ${TOTALS_TABLE} WHERE id = 1`
    ),
    ([row]) => ({ total: Number(row?.records ?? 0), length: Number(row?.search_length ?? 0) })
  )

/**
 * What is wrong with the row, counted against the records: `undefined` when it holds their
 * totals (what `engram doctor` checks; a re-index repairs it).
 */
export const mismatch = (sql: SqlClient.SqlClient): Effect.Effect<string | undefined, SqlError> =>
  Effect.gen(function*() {
    const held = yield* read(sql)
    const [row] = yield* sql.unsafe<{ records: number; length: number }>(counted)
    const records = Number(row?.records ?? 0)
    const length = Number(row?.length ?? 0)
    return held.total === records && held.length === length
      ? undefined
      : `the search totals say ${held.total} records of ${held.length} search tokens, the records ${records} of ${length}`
  })
