/**
 * The keyword rankings Engram's is measured beside, each over the same records (`"<speaker>:
 * <text>"`, one per turn) and the same questions, within the question's conversation:
 *
 * - **raw FTS5**: SQLite FTS5's own `unicode61` tokenizer over the stored text, every word of the
 *   question OR-ed, ranked by FTS5's `bm25()` (k1 1.2, b 0.75, term frequencies) — what an
 *   application gets from SQLite with no search layer of its own;
 * - **porter FTS5**: the same with FTS5's `porter` stemmer in front of `unicode61`;
 * - **minisearch** 7: BM25+ with its own tokenizer, terms OR-ed, filtered to the conversation.
 *
 * None of them has a parameter chosen here: they run at their defaults.
 */
import { SearchTokenizer } from "@engram/core"
import Database from "better-sqlite3"
import MiniSearch from "minisearch"
import type { Dataset } from "./datasets/Dataset.js"
import { contentOf } from "./datasets/Dataset.js"

/** Ranks every question of `dataset` with an FTS5 table tokenized by `tokenizer`; the top `limit` ids each. */
const fts5 = (dataset: Dataset, tokenizer: string, limit: number): Array<ReadonlyArray<string>> => {
  const db = new Database(":memory:")
  try {
    db.exec(`CREATE VIRTUAL TABLE turns USING fts5(content, scope UNINDEXED, id UNINDEXED, tokenize = '${tokenizer}')`)
    const insert = db.prepare("INSERT INTO turns (content, scope, id) VALUES (?, ?, ?)")
    db.transaction(() => {
      for (const turn of dataset.turns) insert.run(contentOf(turn), turn.scope, turn.id)
    })()
    const search = db.prepare(
      `SELECT id FROM turns WHERE turns MATCH ? AND scope = ? ORDER BY bm25(turns) LIMIT ${limit}`
    )
    return dataset.questions.map((q) => {
      // Quoted, so a word FTS5 would read as an operator (AND, NOT, NEAR) is a word.
      const words = [...new Set(SearchTokenizer.words(q.text))]
      if (words.length === 0) return []
      return (search.all(words.map((w) => `"${w}"`).join(" OR "), q.scope) as Array<{ id: string }>).map((r) => r.id)
    })
  } finally {
    db.close()
  }
}

/** Raw FTS5: `unicode61`, no stemming. */
export const rawFts5 = (dataset: Dataset, limit: number) => fts5(dataset, "unicode61", limit)

/** FTS5 with its porter stemmer. */
export const porterFts5 = (dataset: Dataset, limit: number) => fts5(dataset, "porter unicode61", limit)

/** minisearch 7 at its defaults (BM25+, OR), filtered to the question's conversation. */
export const minisearch = (dataset: Dataset, limit: number): Array<ReadonlyArray<string>> => {
  const index = new MiniSearch<{ id: string; content: string; scope: string }>({
    fields: ["content"],
    storeFields: ["scope"],
    idField: "id"
  })
  index.addAll(dataset.turns.map((turn) => ({ id: turn.id, content: contentOf(turn), scope: turn.scope })))
  return dataset.questions.map((q) =>
    index.search(q.text, { filter: (r) => r.scope === q.scope }).slice(0, limit).map((r) => String(r.id))
  )
}
