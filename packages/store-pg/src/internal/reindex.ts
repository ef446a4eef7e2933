import * as SqlClient from "@effect/sql/SqlClient"
import { ReindexProgress, type SearchTokenizer } from "@engram/core"
import { IndexLanguage } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { lexemesOf, searchLength } from "./lexemes.js"
import { memoryTable, metaTable } from "./migrations.js"

const BATCH = 1_000

const asTags = (tags: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(tags) && tags.every((tag) => typeof tag === "string") ? tags : undefined

/**
 * Makes every row's `search_tokens` what the running tokenizer produces in `language`. The stored
 * tokens were computed by whichever version of the tokenizer wrote the row; after an upgrade that
 * changed the tokenizer, or for a new store, this recomputes them (once, under a lock, in one
 * transaction) so that PostgreSQL keeps matching exactly like every other backend, and records
 * the fingerprint and the language. Under the lock the recorded language is checked again, so two
 * processes opening a new store in two languages cannot both index it (decision 0196).
 */
export const syncSearchTokens = (language: SearchTokenizer.Language) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"engram:reindex:"} || coalesce(current_schema(), '')))`
        const { recorded } = yield* IndexLanguage.open(metaTable, language)
        if (IndexLanguage.isCurrent(recorded, language)) return
        const progress = yield* ReindexProgress.ReindexProgress
        const [count] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(memoryTable)}`
        const total = Number(count?.n ?? 0)
        let after = ""
        let changed = 0
        let done = 0
        yield* progress({ done: 0, total })
        for (;;) {
          const rows = yield* sql<
            {
              id: string
              label: string | null
              content: string
              tags: unknown
              search_tokens: string
              search_length: number
            }
          >`SELECT id, label, content, tags, search_tokens, search_length FROM ${sql(memoryTable)}
          WHERE id > ${after} ORDER BY id LIMIT ${BATCH}`
          if (rows.length === 0) break
          after = rows[rows.length - 1]!.id
          const updates = rows.flatMap((row) => {
            // A row whose tags do not decode is left as it is: reads skip it anyway.
            const tags = asTags(row.tags)
            if (tags === undefined) return []
            const lexemes = lexemesOf({ label: row.label ?? undefined, content: row.content, tags }, language)
            const tokens = lexemes.join(" ")
            const length = searchLength(lexemes)
            return tokens === row.search_tokens && length === row.search_length ? [] : [{ id: row.id, tokens, length }]
          })
          if (updates.length > 0) {
            yield* sql`UPDATE ${sql(memoryTable)} AS m SET search_tokens = u.tokens, search_length = u.length
            FROM unnest(${updates.map((u) => u.id)}::text[], ${updates.map((u) => u.tokens)}::text[],
              ${updates.map((u) => u.length)}::int[]) AS u(id, tokens, length)
            WHERE m.id = u.id`
            changed += updates.length
          }
          done += rows.length
          yield* progress({ done: Math.min(done, total), total })
        }
        yield* IndexLanguage.record(metaTable, language)
        if (recorded.tokenizer !== undefined) {
          yield* Effect.logInfo("re-indexed stored memories for the current search tokenizer").pipe(
            Effect.annotateLogs({ backend: "postgres", changed })
          )
        }
      })
    )
  })

/**
 * For connections that cannot write: warns that the stored tokens came from another tokenizer
 * (the caller calls it only then).
 */
export const checkSearchTokens: Effect.Effect<void> = Effect.logWarning(
  "stored search tokens come from another version of the tokenizer; start a store with migrations " +
    "(PgMemoryStore.layer()) on the primary to re-index them"
).pipe(Effect.annotateLogs({ backend: "postgres" }))
