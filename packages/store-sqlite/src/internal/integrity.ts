/**
 * Whether the search index covers the records (and the search totals count them): the full check `engram doctor` runs
 * ({@link checkSearchIndex}) and the quick count a store makes before its first search
 * ({@link coverageGap}).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"
import { FTS_TABLE, TABLE } from "./memoryTable.js"
import * as SearchTotals from "./searchTotals.js"
import { isDamaged } from "./sqliteErrors.js"

/**
 * What is wrong with the search index: FTS5's own integrity check of its structure, and records
 * the index does not cover (or index rows without a record). Empty when it is sound.
 */
export const checkSearchIndex: Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> = Effect.gen(
  function*() {
    const sql = yield* SqlClient.SqlClient
    const problems: Array<string> = []
    const structure = yield* Effect.either(
      sql.unsafe(`INSERT INTO ${FTS_TABLE} (${FTS_TABLE}) VALUES ('integrity-check')`)
    )
    if (structure._tag === "Left") {
      const cause = structure.left.cause
      problems.push(`the search index is damaged (${cause instanceof Error ? cause.message : String(cause)})`)
      return problems
    }
    const [coverage] = yield* sql<{ missing: number; orphans: number }>`SELECT
      (SELECT count(*) FROM ${sql(TABLE)} m WHERE NOT EXISTS
        (SELECT 1 FROM ${sql(`${FTS_TABLE}_docsize`)} d WHERE d.id = m.seq)) AS missing,
      (SELECT count(*) FROM ${sql(`${FTS_TABLE}_docsize`)} d WHERE NOT EXISTS
        (SELECT 1 FROM ${sql(TABLE)} m WHERE m.seq = d.id)) AS orphans`
    if ((coverage?.missing ?? 0) > 0) problems.push(`${coverage!.missing} records are missing from the search index`)
    if ((coverage?.orphans ?? 0) > 0) problems.push(`${coverage!.orphans} search index rows have no record`)
    const totals = yield* SearchTotals.mismatch(sql)
    if (totals !== undefined) problems.push(totals)
    return problems
  }
).pipe(
  Effect.catchIf(isDamaged, (error) =>
    Effect.succeed([
      `the search index cannot be read (${error.cause instanceof Error ? error.cause.message : String(error.cause)})`
    ]))
)

/**
 * Whether the search index holds a row for every record: two counts (milliseconds at 100,000
 * records). `undefined` when it does, else what is missing. An index that lost rows would answer
 * with a silent partial result.
 */
export const coverageGap = (sql: SqlClient.SqlClient): Effect.Effect<string | undefined, SqlError> =>
  Effect.map(
    sql<{ records: number; indexed: number }>`SELECT (SELECT count(*) FROM ${sql(TABLE)}) AS records,
        (SELECT count(*) FROM ${sql(`${FTS_TABLE}_docsize`)}) AS indexed`,
    ([row]) =>
      row === undefined || row.records === row.indexed
        ? undefined
        : `it holds ${row.indexed} rows for ${row.records} records`
  )
