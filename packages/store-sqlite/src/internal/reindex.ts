/**
 * Keeping the search index in step with the tokenizer and the records: {@link syncSearchIndex}
 * re-indexes once after a tokenizer change, {@link rebuildSearchIndex} rebuilds a damaged index
 * from the records (`engram doctor --repair`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"
import { FTS_DDL, FTS_TABLE, META_TABLE, TABLE } from "./memoryTable.js"
import { ftsInsertSql, rowTokens } from "./searchIndex.js"

const REINDEX_BATCH = 500

/**
 * Makes the search index hold what the running tokenizer produces. Tokens are computed when a row
 * is written; after an upgrade that changed `SearchTokenizer.tokenize` (its fingerprint differs
 * from the one stored), the whole index is rebuilt once, in one transaction, so old rows keep
 * matching exactly like new ones and like every other backend. A no-op when current.
 */
export const syncSearchIndex = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const storedFingerprint = sql<{ value: string }>`SELECT value FROM ${sql(META_TABLE)} WHERE key = 'tokenizer'`.pipe(
    Effect.map((rows) => rows[0]?.value)
  )
  if ((yield* storedFingerprint) === SearchTokenizer.fingerprint) return
  yield* sql.withTransaction(
    Effect.gen(function*() {
      if ((yield* storedFingerprint) === SearchTokenizer.fingerprint) return
      // A contentless FTS5 table cannot delete a row without its old tokens; 'delete-all' can.
      yield* sql.unsafe(`INSERT INTO ${FTS_TABLE} (${FTS_TABLE}) VALUES ('delete-all')`)
      const indexed = yield* indexAllRecords
      if (indexed > 0) {
        yield* Effect.logInfo("rebuilt the memory search index for the current tokenizer").pipe(
          Effect.annotateLogs({ backend: "sqlite", indexed })
        )
      }
    })
  )
})

/**
 * Indexes every stored record into the (empty) search index, in batches, and records the
 * tokenizer's fingerprint. Returns how many records it indexed.
 */
const indexAllRecords = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let after = -1
  let indexed = 0
  for (;;) {
    const rows = yield* sql<{ seq: number; label: string | null; content: string; tags: string }>`
      SELECT seq, label, content, tags FROM ${sql(TABLE)} WHERE seq > ${after} ORDER BY seq LIMIT ${REINDEX_BATCH}`
    if (rows.length === 0) break
    after = rows[rows.length - 1]!.seq
    const values: Array<string | number> = []
    for (const row of rows) values.push(row.seq, rowTokens(row))
    yield* sql.unsafe(ftsInsertSql(rows.length), values)
    indexed += rows.length
  }
  yield* sql`INSERT INTO ${sql(META_TABLE)} (key, value) VALUES ('tokenizer', ${SearchTokenizer.fingerprint})
    ON CONFLICT (key) DO UPDATE SET value = excluded.value`
  return indexed
})

/**
 * Rebuilds the search index from the records, in one transaction: drops the FTS5 table (with
 * whatever damage its shadow tables hold), creates it afresh and indexes every record. Returns
 * how many records it indexed.
 */
export const rebuildSearchIndex: Effect.Effect<number, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    yield* sql.unsafe(`DROP TABLE IF EXISTS ${FTS_TABLE}`)
    yield* sql.unsafe(FTS_DDL)
    return yield* indexAllRecords
  }))
})
