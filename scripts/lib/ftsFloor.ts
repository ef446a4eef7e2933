/**
 * The FTS5 floors the benches measure Engram against, on their own read-only connection to a
 * store's file: what SQLite does for a query with no Engram around it.
 *
 * - {@link floorConnection}: the connection (with the store's page cache, decision 0104, so a floor
 *   reads the same pages from memory that the store does), document frequencies looked up once and
 *   cached (outside any timing: the floor gets them free), and the pruning every floor shares.
 * - {@link scopedTopK}: `project()`'s recall shape — the pruned tokens, FTS5's top `limit` by bm25
 *   joined to the records of the request's scopes, and those rows read.
 * - the same with `tiers: true`: also the rows the recall search reads when the pruned tokens
 *   match fewer than `limit` records of the scopes — the planner's tail tier (decision 0035): the
 *   records holding only pruned tokens, newest first, up to the limit. Without it a floor on a
 *   small scope returns a handful of rows where the search returns `limit`.
 */
import { Bm25, SearchPlan, SearchTokenizer } from "@engram/core"
import Database from "better-sqlite3"

/** A read-only floor connection to the store at `filename`. */
export const floorConnection = (filename: string) => {
  const db = new Database(filename, { readonly: true })
  db.pragma("cache_size = -65536")
  db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.floor_vocab USING fts5vocab(main, engram_memories_fts, 'row')")
  const total = (db.prepare("SELECT count(*) AS n FROM engram_memories").get() as { n: number }).n
  const frequency = db.prepare("SELECT doc FROM temp.floor_vocab WHERE term = ?")
  const frequencies = new Map<string, number>()
  const df = (token: string) => {
    let n = frequencies.get(token)
    if (n === undefined) {
      n = (frequency.get(token) as { doc: number } | undefined)?.doc ?? 0
      frequencies.set(token, n)
    }
    return n
  }
  return {
    db,
    /** Looks up every token of `queries` now, so no timed search pays for a frequency. */
    prime: (queries: ReadonlyArray<string>) => {
      for (const q of queries) for (const t of SearchTokenizer.distinctTokens(q)) df(t)
    },
    /** The tokens held by at most `share` of the records; the rarest one if none is. */
    selective: (tokens: ReadonlyArray<string>, share: number) => {
      const kept = tokens.filter((t) => df(t) <= share * total)
      if (kept.length > 0) return kept
      const rarest = [...tokens].sort((a, b) => df(a) - df(b))[0]
      return rarest === undefined ? [] : [rarest]
    },
    close: () => db.close()
  }
}

/** The FTS5 query of a token list: each token quoted, OR-joined, as the store writes it. */
export const orQuery = (tokens: ReadonlyArray<string>): string => tokens.map((t) => `"${t}"`).join(" OR ")

/**
 * The floor of `project()`'s recall: the query's tokens pruned at `share`, FTS5's top `limit` by
 * bm25 joined to the records of `scopes`, those rows read. What it leaves out is what a projection
 * adds: deliverability, the always-on and digest reads, composition, the injection row.
 */
export const scopedTopK = (filename: string, share: number, options: { readonly tiers?: boolean } = {}) => {
  const connection = floorConnection(filename)
  const statements = new Map<string, Database.Statement>()
  const prepared = (key: string, order: string, limit: string, scopes: number) => {
    let statement = statements.get(key)
    if (statement === undefined) {
      statement = connection.db.prepare(
        `SELECT m.* FROM engram_memories_fts f JOIN engram_memories m ON m.seq = f.rowid
         WHERE engram_memories_fts MATCH ? AND m.scope IN (${Array.from({ length: scopes }, () => "?").join(", ")})
         ORDER BY ${order} LIMIT ${limit}`
      )
      statements.set(key, statement)
    }
    return statement
  }
  const top = (limit: number, scopes: number) => prepared(`rank/${limit}/${scopes}`, "f.rank", String(limit), scopes)
  // The tail's limit is what the ranked tier left: a bound value, one statement for every remainder.
  const newest = (scopes: number) => prepared(`rowid/${scopes}`, "f.rowid DESC", "?", scopes)
  return {
    prime: connection.prime,
    search: (query: string, scopes: ReadonlyArray<string>, limit: number): Array<unknown> => {
      const all = SearchTokenizer.distinctTokens(query)
      const tokens = connection.selective(all, share)
      if (tokens.length === 0) return []
      const ranked = top(limit, scopes.length).all(orQuery(tokens), ...scopes)
      const pruned = all.filter((t) => !tokens.includes(t))
      if (options.tiers !== true || ranked.length >= limit || pruned.length === 0) return ranked
      const tail = newest(scopes.length).all(
        `(${orQuery(pruned)}) NOT (${orQuery(tokens)})`,
        ...scopes,
        limit - ranked.length
      )
      return [...ranked, ...tail]
    },
    close: connection.close
  }
}

/**
 * The like-for-like floor of SQLite's search (decision 0204): what `MemoryStore.search` ranks,
 * computed naively in one statement over the same file — the planner's ranked tokens at the
 * store's own share (`SearchPlan.plan` with its defaults; document frequencies and the size looked
 * up once, outside the timing), each token's weight (`SearchPlan.weightOf`) summed over its FTS5
 * matches, times the row's length normalisation, the same filters, `ORDER BY score DESC,
 * created_at DESC, id LIMIT k`, the rows read in that statement. What it leaves out is what the
 * store adds: the conversation context, decoding, statistics, the tail tier.
 */
export const bm25Floor = (filename: string) => {
  const connection = floorConnection(filename)
  const db = connection.db
  const size = db.prepare("SELECT count(*) AS n, coalesce(avg(search_length), 1) AS length FROM engram_memories")
    .get() as { n: number; length: number }
  const frequency = db.prepare("SELECT doc FROM temp.floor_vocab WHERE term = ?")
  const frequencies = new Map<string, number>()
  const statistics: SearchPlan.TokenStatistics = {
    total: size.n,
    documentFrequency: (token) => {
      let n = frequencies.get(token)
      if (n === undefined) {
        n = (frequency.get(token) as { doc: number } | undefined)?.doc ?? 0
        frequencies.set(token, n)
      }
      return n
    }
  }
  const { b, k1 } = Bm25.defaultParameters
  const norm = `(${k1 + 1} / (1 + ${k1} * (${1 - b} + ${b} * m.search_length / ${size.length})))`
  const statements = new Map<string, Database.Statement>()
  const statement = (tokens: number, scopes: number, limit: number) => {
    const key = `${tokens}/${scopes}/${limit}`
    let prepared = statements.get(key)
    if (prepared === undefined) {
      const matches = Array.from(
        { length: tokens },
        () => "SELECT rowid AS seq, ? AS w FROM engram_memories_fts WHERE engram_memories_fts MATCH ?"
      ).join(" UNION ALL ")
      const filter = scopes === 0 ?
        "m.invalidated_at IS NULL" :
        `m.scope IN (${
          Array.from({ length: scopes }, () => "?").join(", ")
        }) AND m.review_state <> 'rejected' AND m.invalidated_at IS NULL AND (m.expires_at IS NULL OR m.expires_at > ?)
        AND (m.valid_from IS NULL OR m.valid_from <= ?) AND (m.valid_to IS NULL OR m.valid_to > ?)`
      prepared = db.prepare(
        `SELECT m.* FROM (SELECT seq, sum(w) AS w FROM (${matches}) GROUP BY seq) c
         JOIN engram_memories m ON m.seq = c.seq
         WHERE ${filter}
         ORDER BY round(c.w * ${norm}, ${Bm25.SCORE_DIGITS}) DESC, m.created_at DESC, m.id LIMIT ${limit}`
      )
      statements.set(key, prepared)
    }
    return prepared
  }
  return {
    /** Looks up every token of `queries` now, so no timed search pays for a frequency. */
    prime: (queries: ReadonlyArray<string>) => {
      for (const q of queries) for (const t of SearchTokenizer.distinctTokens(q)) statistics.documentFrequency(t)
    },
    /** The top `limit` ids for `query` (`scopes` and deliverable when `scopes` is given). */
    search: (query: string, limit: number, scopes: ReadonlyArray<string> | undefined): Promise<Array<string>> => {
      const tokens = SearchTokenizer.distinctTokens(query)
      if (tokens.length === 0) return Promise.resolve([])
      const plan = SearchPlan.plan(tokens, statistics)
      const now = Date.now()
      const rows = statement(plan.ranked.length, scopes?.length ?? 0, limit).all(
        ...plan.ranked.flatMap((token, t) => [plan.weights[t]!, `"${token}"`]),
        ...(scopes === undefined ? [] : [...scopes, now, now, now])
      ) as Array<{ id: string }>
      return Promise.resolve(rows.map((row) => row.id))
    },
    close: connection.close
  }
}
