import * as SqlClient from "@effect/sql/SqlClient"
import { ReindexProgress, SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"
import { lexemesOf, searchLength } from "./lexemes.js"
import { memoryTable, metaTable } from "./migrations.js"

const BATCH = 1_000

const storedFingerprint = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ value: string }>`SELECT value FROM ${sql(metaTable)} WHERE key = 'tokenizer'`,
    (rows) => rows[0]?.value
  ))

const asTags = (tags: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(tags) && tags.every((tag) => typeof tag === "string") ? tags : undefined

/**
 * Makes every row's `search_tokens` what the running tokenizer produces. The stored tokens were
 * computed by whichever version of the tokenizer wrote the row; after an upgrade that changed the
 * tokenizer, this recomputes them (once, under a lock, in one transaction) so that PostgreSQL
 * keeps matching exactly like every other backend. A no-op when the fingerprint is current.
 */
export const syncSearchTokens = (language: SearchTokenizer.Language) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const tokenizerFingerprint = SearchTokenizer.fingerprintOf(language)
    if ((yield* storedFingerprint) === tokenizerFingerprint) return
    yield* sql.withTransaction(
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"engram:reindex:"} || coalesce(current_schema(), '')))`
        const previous = yield* storedFingerprint
        if (previous === tokenizerFingerprint) return
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
        yield* sql`INSERT INTO ${sql(metaTable)} (key, value) VALUES ('tokenizer', ${tokenizerFingerprint})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`
        if (previous !== undefined) {
          yield* Effect.logInfo("re-indexed stored memories for the current search tokenizer").pipe(
            Effect.annotateLogs({ backend: "postgres", changed })
          )
        }
      })
    )
  })

/** For connections that cannot write: warns when the stored tokens came from another tokenizer. */
export const checkSearchTokens = (language: SearchTokenizer.Language) =>
  Effect.gen(function*() {
    const stored = yield* storedFingerprint
    if (stored !== undefined && stored !== SearchTokenizer.fingerprintOf(language)) {
      yield* Effect.logWarning(
        "stored search tokens come from another version of the tokenizer; start a store with migrations " +
          "(PgMemoryStore.layer) on the primary to re-index them"
      ).pipe(Effect.annotateLogs({ backend: "postgres" }))
    }
  })
