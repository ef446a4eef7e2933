/**
 * The naive projector the projection bench measures `project()` against (issue #39): the same job
 * done the plain way, with none of Engram's layout. Per request:
 *
 * 1. the recall search's shape in one statement — the query's tokens pruned at the recall share,
 *    the top {@link NAIVE_LIMIT} by the backend's own rank joined to the request's scopes
 *    (SQLite: FTS5's bm25; PostgreSQL: the single-statement BM25 floor of `pgFloor.ts`), and,
 *    when those are fewer, the tail tier (the scopes' records holding only pruned tokens, newest
 *    first, up to {@link NAIVE_LIMIT} rows in all);
 * 2. each row rendered as a line (`- [id] content`), counted with o200k_base (`gpt-tokenizer`'s
 *    `countTokens`, the library's own cache and all), kept while the running count stays within
 *    the budget;
 * 3. one provenance row (the injection log's: session, turn, mode, time, the ids delivered, the
 *    section) inserted.
 *
 * What it leaves out is what `project()` adds on top of that job: the always-on and digest reads,
 * the conversation neighbours, deliverability by policy, the poisoning screen, the sections and
 * their tags, shedding by rank.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { scopedTopK } from "./ftsFloor.js"
import { pgFloor } from "./pgFloor.js"

/** The recall cap: the most rows a projection's recall reads. */
export const NAIVE_LIMIT = 300

/** What one naive projection delivered. */
export interface NaiveProjection {
  readonly rows: number
  readonly lines: number
  readonly tokens: number
  readonly text: string
}

interface Row {
  readonly id: string
  readonly content: string
}

const SESSION = "bench-naive"
const SECTIONS = JSON.stringify(["recalled_memory"])

/** Steps 2 of the naive projector: the rows as lines, counted, cut at `budgetTokens`. */
export const renderAndCut = (rows: ReadonlyArray<Row>, budgetTokens: number) => {
  const lines: Array<string> = []
  const ids: Array<string> = []
  let tokens = 0
  for (const row of rows) {
    const line = `- [${row.id}] ${row.content}`
    const count = countTokens(line, { disallowedSpecial: new Set() }) + (lines.length > 0 ? 1 : 0)
    if (tokens + count > budgetTokens) break
    tokens += count
    lines.push(line)
    ids.push(row.id)
  }
  return { ids, tokens, text: lines.join("\n") }
}

/** The naive projector over the SQLite store at `filename` (its own connections: a read-only one and a writer). */
export const sqliteNaiveProjector = (filename: string, share: number, budgetTokens: number) => {
  const floor = scopedTopK(filename, share, { tiers: true })
  const writer = new Database(filename)
  writer.pragma("busy_timeout = 5000")
  const insert = writer.prepare(
    `INSERT INTO engram_injection_log (session_id, turn, mode, at, memory_ids, section_labels)
     VALUES (?, ?, 'native', ?, ?, ?)`
  )
  return {
    prime: floor.prime,
    project: (query: string, scopes: ReadonlyArray<string>, turn: number): NaiveProjection => {
      const rows = floor.search(query, scopes, NAIVE_LIMIT) as ReadonlyArray<Row>
      const cut = renderAndCut(rows, budgetTokens)
      insert.run(SESSION, turn, Date.now(), JSON.stringify(cut.ids), SECTIONS)
      return { rows: rows.length, lines: cut.ids.length, tokens: cut.tokens, text: cut.text }
    },
    close: () => {
      floor.close()
      writer.close()
    }
  }
}

type Run = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) => Promise<A>

/** The naive projector over the PostgreSQL store behind `run` (its schema), the same steps in PostgreSQL SQL. */
export const pgNaiveProjector = (run: Run, share: number, budgetTokens: number) => {
  const floor = pgFloor(run, { maxDocumentShare: share })
  return {
    prime: floor.prime,
    project: async (query: string, scopes: ReadonlyArray<string>, turn: number): Promise<NaiveProjection> => {
      const rows = await floor.rows(query, NAIVE_LIMIT, scopes, { tiers: true })
      const cut = renderAndCut(rows, budgetTokens)
      await run(
        Effect.flatMap(
          SqlClient.SqlClient,
          (sql) =>
            sql`INSERT INTO engram_injection_log (session_id, turn, mode, at, memory_ids, section_labels)
          VALUES (${SESSION}, ${turn}, 'native', ${Date.now()}, ${JSON.stringify(cut.ids)}::jsonb, ${SECTIONS}::jsonb)`
        )
      )
      return { rows: rows.length, lines: cut.ids.length, tokens: cut.tokens, text: cut.text }
    }
  }
}
