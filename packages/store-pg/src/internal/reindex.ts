import * as SqlClient from "@effect/sql/SqlClient"
import { SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"
import { lexemesOf } from "./lexemes.js"
import { memoryTable, metaTable } from "./schema.js"

/** Identifies the tokenizer's behaviour, so stored tokens can be checked against the running code. */
export const tokenizerFingerprint: string = SearchTokenizer.fingerprint

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
export const syncSearchTokens = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  if ((yield* storedFingerprint) === tokenizerFingerprint) return
  yield* sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"engram:reindex:"} || coalesce(current_schema(), '')))`
      const previous = yield* storedFingerprint
      if (previous === tokenizerFingerprint) return
      let after = ""
      let changed = 0
      for (;;) {
        const rows = yield* sql<
          { id: string; label: string | null; content: string; tags: unknown; search_tokens: string }
        >`SELECT id, label, content, tags, search_tokens FROM ${sql(memoryTable)}
          WHERE id > ${after} ORDER BY id LIMIT ${BATCH}`
        if (rows.length === 0) break
        after = rows[rows.length - 1]!.id
        const updates = rows.flatMap((row) => {
          // A row whose tags do not decode is left as it is: reads skip it anyway.
          const tags = asTags(row.tags)
          if (tags === undefined) return []
          const tokens = lexemesOf({ label: row.label ?? undefined, content: row.content, tags }).join(" ")
          return tokens === row.search_tokens ? [] : [{ id: row.id, tokens }]
        })
        if (updates.length > 0) {
          yield* sql`UPDATE ${sql(memoryTable)} AS m SET search_tokens = u.tokens
            FROM unnest(${updates.map((u) => u.id)}::text[], ${updates.map((u) => u.tokens)}::text[]) AS u(id, tokens)
            WHERE m.id = u.id`
          changed += updates.length
        }
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
export const checkSearchTokens = Effect.gen(function*() {
  const stored = yield* storedFingerprint
  if (stored !== undefined && stored !== tokenizerFingerprint) {
    yield* Effect.logWarning(
      "stored search tokens come from another version of the tokenizer; start a store with migrations " +
        "(PgMemoryStore.layerPg) on the primary to re-index them"
    ).pipe(Effect.annotateLogs({ backend: "postgres" }))
  }
})
