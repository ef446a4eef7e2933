/**
 * The PostgreSQL floor the benches measure the store against (issue #39): the same BM25 top
 * `limit` computed in one statement over the same tables — the planner's ranked tokens (document
 * frequencies looked up once, outside the timing: the floor gets them free), each token's weight
 * (`SearchPlan.weightOf`) where the row holds it, summed, times the row's length normalisation,
 * the same filters, `ORDER BY score DESC, created_at DESC, id LIMIT k`, the rows read in that
 * statement. What it leaves out is what the store adds: the conversation context, decoding,
 * statistics. With `tiers`, `rows` also reads the planner's tail tier when the ranked one returns
 * fewer than `limit` (the records holding only pruned tokens, newest first): the projection's
 * recall shape.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Bm25, SearchPlan, SearchTokenizer } from "@engram/core"
import { MemoryRow } from "@engram/store-sql"
import * as Effect from "effect/Effect"

type Run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>

const quote = (lexeme: string) => `'${lexeme.replace(/\\/g, "\\\\").replace(/'/g, "''")}'`

const anyOf = (tokens: ReadonlyArray<string>) => tokens.map((t) => quote(t)).join(" | ")

const columns = MemoryRow.COLUMNS.map((c) => (c === "tags" ? "tags::text AS tags" : c)).join(", ")

/** A row the floor reads: every record column (`content` among them). */
export interface FloorRow {
  readonly id: string
  readonly content: string
}

/**
 * The floor over the store behind `run` (its schema), planning with `plan` (the planner's defaults
 * unless given). `prime` reads every figure the queries need.
 */
export const pgFloor = (run: Run, plan: Partial<SearchPlan.PlannerOptions> = {}) => {
  const options: SearchPlan.PlannerOptions = { ...SearchPlan.defaultOptions, ...plan }
  const frequencies = new Map<string, number>()
  let total = 0
  let averageLength = 1
  const statistics: SearchPlan.TokenStatistics = {
    get total() {
      return total
    },
    documentFrequency: (token) => frequencies.get(token) ?? 0
  }
  const filterOf = (scopes: ReadonlyArray<string> | undefined, first: number) =>
    scopes === undefined
      ? ""
      : `AND scope = ANY($${first}::text[]) AND review_state <> 'rejected' AND invalidated_at IS NULL
         AND (expires_at IS NULL OR expires_at > ${Date.now()})`
  const query = <A extends object>(text: string, parameters: ReadonlyArray<unknown>) =>
    run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(text, parameters)))
  /** The ranked tier: the top `limit` over `ranked`, one statement. */
  const ranked = (ranked: SearchPlan.SearchPlan, limit: number, scopes: ReadonlyArray<string> | undefined) => {
    const { b, k1 } = Bm25.defaultParameters
    const terms = ranked.ranked.map((token, t) =>
      `CASE WHEN search_vector @@ ${quote(quote(token))}::tsquery THEN ${ranked.weights[t]!} ELSE 0 END`
    )
    const norm = `(${k1 + 1} / (1 + ${k1} * (${1 - b} + ${b} * search_length / ${averageLength})))`
    const text = `SELECT ${columns} FROM engram_memories
      WHERE search_vector @@ $1::tsquery ${filterOf(scopes, 2)}
      ORDER BY round(((${terms.join(" + ")}) * ${norm})::numeric, ${Bm25.SCORE_DIGITS}) DESC, created_at DESC, id
      LIMIT ${limit}`
    return query<FloorRow>(text, scopes === undefined ? [anyOf(ranked.ranked)] : [anyOf(ranked.ranked), scopes])
  }
  /** The tail tier: records holding a tail token and no ranked one, newest first. */
  const tail = (plan: SearchPlan.SearchPlan, limit: number, scopes: ReadonlyArray<string> | undefined) => {
    const text = `SELECT ${columns} FROM engram_memories
      WHERE search_vector @@ $1::tsquery ${filterOf(scopes, 2)}
      ORDER BY created_at DESC, id LIMIT ${limit}`
    const tier = plan.ranked.length === 0
      ? anyOf(plan.tail)
      : `(${anyOf(plan.tail)}) & !(${anyOf(plan.ranked)})`
    return query<FloorRow>(text, scopes === undefined ? [tier] : [tier, scopes])
  }
  const rows = async (
    text: string,
    limit: number,
    scopes: ReadonlyArray<string> | undefined,
    { tiers = false }: { readonly tiers?: boolean } = {}
  ): Promise<ReadonlyArray<FloorRow>> => {
    const tokens = SearchTokenizer.distinctTokens(text)
    if (tokens.length === 0) return []
    const plan = SearchPlan.plan(tokens, statistics, options)
    const top = plan.ranked.length === 0 ? [] : await ranked(plan, limit, scopes)
    if (!tiers || top.length >= limit || plan.tail.length === 0) return top
    return [...top, ...await tail(plan, limit - top.length, scopes)]
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
    rows,
    /** The top `limit` ids for `query` (`scopes` and deliverable when `scopes` is given). */
    search: (text: string, limit: number, scopes: ReadonlyArray<string> | undefined) =>
      rows(text, limit, scopes).then((found) => found.map((r) => r.id))
  }
}
