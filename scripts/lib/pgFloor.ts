/**
 * The PostgreSQL floor the store bench measures `MemoryStore.search` against (issue #39): the
 * same BM25 top `limit` computed in one statement over the same tables — the planner's ranked
 * tokens (document frequencies and IDFs looked up once, outside the timing: the floor gets them
 * free), each token's IDF where the row holds it, summed, times the row's length normalisation,
 * the same filters, `ORDER BY score DESC, created_at DESC, id LIMIT k`, the rows read in that
 * statement. What it leaves out is what the store adds: the conversation context, decoding,
 * statistics, the tail tier.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Bm25, SearchPlan, SearchTokenizer } from "@engram/core"
import { MemoryRow } from "@engram/store-sql"
import * as Effect from "effect/Effect"

type Run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>

const quote = (lexeme: string) => `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`

const columns = MemoryRow.COLUMNS.map((c) => (c === "tags" ? "tags::text AS tags" : c)).join(", ")

/** The floor over the store behind `run` (its schema). `prime` reads every figure the queries need. */
export const pgFloor = (run: Run) => {
  const frequencies = new Map<string, number>()
  let total = 0
  let averageLength = 1
  const statistics: SearchPlan.TokenStatistics = {
    get total() {
      return total
    },
    documentFrequency: (token) => frequencies.get(token) ?? 0
  }
  return {
    prime: async (queries: ReadonlyArray<string>) => {
      const tokens = [...new Set(queries.flatMap((q) => SearchTokenizer.distinctTokens(q)))]
      await run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const [size] = yield* sql<{ n: number; length: number }>`
          SELECT count(*)::float8 AS n, coalesce(avg(search_length), 1)::float8 AS length FROM engram_memories`
        total = Number(size!.n)
        averageLength = Number(size!.length)
        // Exact figures from the store's counter rows (what a count of the matches gives, faster).
        const rows = yield* sql<{ token: string; n: number }>`
          SELECT token, sum(docs)::float8 AS n FROM engram_memory_frequencies WHERE token = ANY(${tokens}::text[])
          GROUP BY token`
        for (const row of rows) frequencies.set(row.token, Number(row.n))
      }))
    },
    /** The top `limit` ids for `query` (`scopes` and deliverable when `filtered`). */
    search: (query: string, limit: number, scopes: ReadonlyArray<string> | undefined) => {
      const tokens = SearchTokenizer.distinctTokens(query)
      if (tokens.length === 0) return Promise.resolve([])
      const ranked = SearchPlan.plan(tokens, statistics).ranked
      const { b, k1 } = Bm25.defaultParameters
      const terms = ranked.map((token) =>
        `CASE WHEN search_vector @@ ${quote(quote(token))}::tsquery THEN ${
          Bm25.idf(total, frequencies.get(token) ?? 0)
        } ELSE 0 END`
      )
      const norm = `(${k1 + 1} / (1 + ${k1} * (${1 - b} + ${b} * search_length / ${averageLength})))`
      const filter = scopes === undefined
        ? ""
        : `AND scope = ANY($2::text[]) AND review_state <> 'rejected' AND invalidated_at IS NULL
           AND (expires_at IS NULL OR expires_at > ${Date.now()})`
      const text = `SELECT ${columns} FROM engram_memories
        WHERE search_vector @@ $1::tsquery ${filter}
        ORDER BY round(((${terms.join(" + ")}) * ${norm})::numeric, ${Bm25.SCORE_DIGITS}) DESC, created_at DESC, id
        LIMIT ${limit}`
      const query1 = ranked.map((t) => quote(t)).join(" | ")
      return run(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) => sql.unsafe<{ id: string }>(text, scopes === undefined ? [query1] : [query1, scopes])
        )
      ).then((rows) => rows.map((r) => r.id))
    }
  }
}
