/**
 * Where a SQLite projection's database time goes, statement by statement (`npm run bench --
 * projection --statements`). better-sqlite3 offers no profiling hook, so once installed every
 * statement's `all`, `get`, `run` and `iterate` in the process is wrapped: each execution's time
 * and rows are added to its statement's total for the party running it (`project()`, the naive
 * projector), none while no party is named. Statements are named by what they do (see
 * {@link kindOf}), so the ranked tier's statements for 1, 2, … tokens add up to one row.
 */
import Database from "better-sqlite3"

export interface StatementTime {
  readonly party: string
  readonly statement: string
  /** Mean milliseconds, executions and rows per projection. */
  readonly ms: number
  readonly calls: number
  readonly rows: number
}

/** What a statement does, from its text; for one this list does not know, its first words and its order. */
const kindOf = (source: string): string => {
  const text = source.replace(/\s+/g, " ").trim()
  if (/^WITH c AS/.test(text)) return "ranked tier (Engram's BM25 in SQL)"
  if (/MATCH \? AND m\.scope IN .* ORDER BY f\.rank/.test(text)) return "ranked tier (FTS5 bm25, top 300)"
  const tail = /MATCH .* ORDER BY ("?engram_memories_fts"?|f)\.rowid DESC/.test(text)
  // The prior-session digest searches its summaries (one kind) newest first.
  if (tail && /"m"\."kind" IN/.test(text)) return "tail tier (newest first), one kind"
  if (tail) return "tail tier (newest first)"
  if (/^SELECT .* FROM "engram_memories" m WHERE .* ORDER BY m\.created_at DESC/.test(text)) {
    return "listing (newest first)"
  }
  if (/engram_memories_vocab/.test(text)) return "token frequencies"
  if (/FROM engram_memory_totals/.test(text)) return "table totals"
  if (/INSERT INTO "?engram_injection_log"?/.test(text)) return "injection row"
  const order = /ORDER BY (.{0,40})/.exec(text)?.[1]
  return order === undefined ? text.slice(0, 60) : `${text.slice(0, 40)} … ORDER BY ${order}`
}

const METHODS = ["all", "get", "run", "iterate"] as const

export const make = () => {
  const totals = new Map<string, { ms: number; calls: number; rows: number }>()
  let party: string | undefined
  const statementPrototype = (() => {
    const probe = new Database(":memory:")
    const prototype: Record<string, unknown> = Object.getPrototypeOf(probe.prepare("SELECT 1"))
    probe.close()
    return prototype
  })()
  for (const method of METHODS) {
    const original = statementPrototype[method] as (...args: Array<unknown>) => unknown
    statementPrototype[method] = function(this: { readonly source: string }, ...args: Array<unknown>) {
      if (party === undefined) return original.apply(this, args)
      const start = performance.now()
      const result = original.apply(this, args)
      const key = `${party}\u0000${kindOf(this.source)}`
      const total = totals.get(key) ?? { ms: 0, calls: 0, rows: 0 }
      total.ms += performance.now() - start
      total.calls++
      total.rows += Array.isArray(result) ? result.length : 0
      totals.set(key, total)
      return result
    }
  }
  return {
    /** Names the party whose statements run from now on (`undefined`: none are counted). */
    as: (name: string | undefined) => {
      party = name
    },
    reset: () => totals.clear(),
    /** Each statement's mean per projection, over `projections`, most time first. */
    perProjection: (projections: number): ReadonlyArray<StatementTime> => perProjection(totals, projections)
  }
}

/**
 * Each statement's mean per projection from totals keyed by party and statement (joined by NUL),
 * grouped by party, most time first.
 */
export const perProjection = (
  totals: ReadonlyMap<string, { readonly ms: number; readonly calls: number; readonly rows: number }>,
  projections: number
): ReadonlyArray<StatementTime> =>
  [...totals].map(([key, { calls, ms, rows }]) => {
    const [who, statement] = key.split("\u0000") as [string, string]
    return { party: who, statement, ms: ms / projections, calls: calls / projections, rows: rows / projections }
  }).sort((a, b) => a.party.localeCompare(b.party) || b.ms - a.ms)

export type StatementTimings = ReturnType<typeof make>
