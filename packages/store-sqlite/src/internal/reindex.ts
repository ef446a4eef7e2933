/**
 * Keeping the search index in step with the tokenizer and the records: {@link syncSearchIndex}
 * indexes a new store and re-indexes once after a tokenizer change, {@link rebuildSearchIndex} rebuilds a damaged index
 * from the records (`engram doctor --repair`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ReindexProgress, type SearchTokenizer } from "@engram/core"
import { IndexLanguage } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { FTS_DDL, FTS_TABLE, META_TABLE, TABLE } from "./memoryTable.js"
import { ftsInsertSql, rowTokens, searchLength } from "./searchIndex.js"
import * as SearchTotals from "./searchTotals.js"

const REINDEX_BATCH = 500

/**
 * Makes the search index hold what the running tokenizer produces in `language`. Tokens are
 * computed when a row is written; after an upgrade that changed `SearchTokenizer.tokenize` (its
 * fingerprint differs from the one stored), or for a new store, the whole index is rebuilt once,
 * in one transaction, so old rows keep matching exactly like new ones and like every other
 * backend, each row's BM25 length is recomputed with its tokens, and `ReindexProgress` hears how
 * far it has come. A no-op when current. Inside the transaction the recorded language is checked
 * again, so two processes opening a new store in two languages cannot both index it (0196).
 */
export const syncSearchIndex = (language: SearchTokenizer.Language) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.gen(function*() {
        const { recorded } = yield* IndexLanguage.open(META_TABLE, language)
        if (IndexLanguage.isCurrent(recorded, language)) return
        // A contentless FTS5 table cannot delete a row without its old tokens; 'delete-all' can.
        yield* sql.unsafe(`INSERT INTO ${FTS_TABLE} (${FTS_TABLE}) VALUES ('delete-all')`)
        const indexed = yield* indexAllRecords(language)
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
 * tokenizer's fingerprint and the language. Returns how many records it indexed.
 */
const indexAllRecords = (language: SearchTokenizer.Language) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const progress = yield* ReindexProgress.ReindexProgress
    const [count] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(TABLE)}`
    const total = Number(count?.n ?? 0)
    let after = -1
    let indexed = 0
    yield* progress({ done: 0, total })
    for (;;) {
      const rows = yield* sql<{ seq: number; label: string | null; content: string; tags: string }>`
      SELECT seq, label, content, tags FROM ${sql(TABLE)} WHERE seq > ${after} ORDER BY seq LIMIT ${REINDEX_BATCH}`
      if (rows.length === 0) break
      after = rows[rows.length - 1]!.seq
      const values: Array<string | number> = []
      const lengths: Array<number> = []
      for (const row of rows) {
        const tokens = rowTokens(row, language)
        values.push(row.seq, tokens.join(" "))
        lengths.push(row.seq, searchLength(tokens))
      }
      yield* sql.unsafe(ftsInsertSql(rows.length), values)
      yield* sql.unsafe(
        `WITH v(seq, length) AS (VALUES ${rows.map(() => "(?, ?)").join(", ")})
       UPDATE ${TABLE} SET search_length = v.length FROM v WHERE ${TABLE}.seq = v.seq`,
        lengths
      )
      indexed += rows.length
      yield* progress({ done: Math.min(indexed, total), total })
    }
    yield* SearchTotals.recount(sql)
    yield* IndexLanguage.record(META_TABLE, language)
    return indexed
  })

/**
 * Rebuilds the search index from the records, in one transaction: drops the FTS5 table (with
 * whatever damage its shadow tables hold), creates it afresh and indexes every record in the
 * store's own language (the one it records; a store that records none, English). Returns how many
 * records it indexed.
 */
export const rebuildSearchIndex: Effect.Effect<
  number,
  SqlError | SearchTokenizer.LanguageMismatch,
  SqlClient.SqlClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(Effect.gen(function*() {
    const { language } = yield* IndexLanguage.open(META_TABLE, undefined)
    yield* sql.unsafe(`DROP TABLE IF EXISTS ${FTS_TABLE}`)
    yield* sql.unsafe(FTS_DDL)
    return yield* indexAllRecords(language)
  }))
})
