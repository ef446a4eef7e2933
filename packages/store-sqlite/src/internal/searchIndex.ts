/**
 * The memory search index: a contentless FTS5 table (`engram_memories_fts`, its DDL in
 * `memoryTable.ts`) keyed by the memory row's `seq`, holding the shared tokenizer's tokens joined
 * by spaces. Here: the tokens a record or a stored row is indexed by, the FTS5 query of a search
 * and of a planned tier, the statements that add and take out index rows, and the document
 * frequencies the planner reads from FTS5's vocabulary (cached per store).
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { type MemoryRecord, type SearchPlan, SearchTokenizer } from "@engram/core"
import { SearchStatistics } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { FTS_TABLE } from "./memoryTable.js"
import * as SearchTotals from "./searchTotals.js"
import { multiRowInsert } from "./sqlText.js"

type Sql = SqlClient.SqlClient

/** The multi-row INSERT of `n` index rows: `(rowid, tokens)` each. */
export const ftsInsertSql = multiRowInsert(FTS_TABLE, ["rowid", "tokens"])

/** The raw columns of a stored row the index text is computed from. */
export interface IndexedColumns {
  readonly label: string | null
  readonly content: string
  readonly tags: string
}

/**
 * The index text of a stored row, from its raw columns (a row whose tags do not parse is indexed
 * by its text alone) — what the index holds for it, so the row can be re-indexed or taken out.
 */
export const rowTokens = (row: IndexedColumns, language: SearchTokenizer.Language): ReadonlyArray<string> => {
  const tags = Either.getOrElse(Either.try(() => JSON.parse(row.tags) as unknown), () => [])
  const text = SearchTokenizer.searchableText({
    label: row.label ?? undefined,
    content: row.content,
    tags: Array.isArray(tags) ? tags.filter((t): t is string => typeof t === "string") : []
  })
  return SearchTokenizer.tokenize(text, language)
}

/** The tokens the search index holds for a record. */
export const indexedTokens = (
  record: MemoryRecord.MemoryRecord,
  language: SearchTokenizer.Language
): ReadonlyArray<string> => SearchTokenizer.tokenize(SearchTokenizer.searchableText(record), language)

/** BM25's length of a record: its distinct tokens. */
export const searchLength = (tokens: ReadonlyArray<string>): number => new Set(tokens).size

/**
 * Takes a stored row out of the index. A contentless FTS5 table takes a row out only when told
 * the tokens it indexed, so they are computed again from the row's raw columns.
 */
export const removeFromIndex = (
  sql: Sql,
  row: IndexedColumns & { readonly seq: number },
  language: SearchTokenizer.Language
): Effect.Effect<ReadonlyArray<unknown>, SqlError> =>
  sql`INSERT INTO ${sql(FTS_TABLE)} (${sql(FTS_TABLE)}, rowid, tokens)
                VALUES ('delete', ${row.seq}, ${rowTokens(row, language).join(" ")})`

/**
 * The FTS5 query for a search text: each distinct token of the shared tokenizer as a quoted
 * string, OR-joined. Tokens hold only letters and digits, so quoting cannot be escaped.
 */
export const matchExpression = (tokens: ReadonlyArray<string>): string => tokens.map((t) => `"${t}"`).join(" OR ")

/** The FTS5 query of one planned tier: any `include` token, none of the `exclude` tokens. */
export const tierExpression = (tier: SearchPlan.Tier): string =>
  tier.exclude.length === 0
    ? matchExpression(tier.include)
    : `(${matchExpression(tier.include)}) NOT (${matchExpression(tier.exclude)})`

/** The per-connection view of the index's vocabulary: how many rows hold each token. */
const VOCAB_TABLE = "engram_memories_vocab"
// Vocabulary lookups per statement, under SQLite's 500-term limit on a compound SELECT.
const VOCAB_LOOKUPS = 400

/**
 * Document frequencies for the planner, from FTS5's `fts5vocab` view (one index seek and a count
 * of the token's postings), and the store's size, cached by core's `SearchStatistics` policy.
 */
export const makeFrequencies = (sql: Sql) => {
  let vocabulary = false
  return SearchStatistics.cached({
    size: SearchTotals.read(sql),
    // Up to VOCAB_LOOKUPS tokens per statement (SQLite allows at most 500 terms in one compound
    // SELECT; a query of thousands of distinct words has more).
    frequencies: (tokens) =>
      Effect.gen(function*() {
        if (!vocabulary) {
          yield* sql.unsafe(
            `CREATE VIRTUAL TABLE IF NOT EXISTS temp.${VOCAB_TABLE} USING fts5vocab(main, ${FTS_TABLE}, 'row')`
          )
          vocabulary = true
        }
        const found: Array<readonly [string, number]> = []
        for (let start = 0; start < tokens.length; start += VOCAB_LOOKUPS) {
          const chunk = tokens.slice(start, start + VOCAB_LOOKUPS)
          const rows = yield* sql.unsafe<{ term: string; doc: number }>(
            chunk.map(() => `SELECT term, doc FROM temp.${VOCAB_TABLE} WHERE term = ?`).join(" UNION ALL "),
            chunk
          )
          for (const row of rows) found.push([row.term, Number(row.doc)])
        }
        return found
      })
  })
}
