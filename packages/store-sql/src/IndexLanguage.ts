/**
 * The language a SQL store's search index was built in, kept in the store's key–value meta table
 * beside the tokenizer's fingerprint (keys `language` and `tokenizer`): read when the store opens,
 * checked against the language it is opened in (`SearchTokenizer.chooseLanguage`), and written
 * with the fingerprint whenever the index is (re)built. Both SQL stores open their index through
 * this one module (decision 0196).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"

/**
 * What a store's meta table records about its search index: the fingerprint of the tokenizer that
 * built it and, from this version on, its language (either may be missing: a new store records
 * neither, a store built before 0196 no language).
 *
 * @since 0.1.0
 * @category models
 */
export interface Recorded {
  readonly language?: string | undefined
  readonly tokenizer?: string | undefined
}

/**
 * Reads what `metaTable` records about the index.
 *
 * @since 0.1.0
 * @category reading
 */
export const read = (metaTable: string): Effect.Effect<Recorded, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ key: string; value: string }>`SELECT key, value FROM ${sql(metaTable)}
      WHERE key IN ('language', 'tokenizer')`,
      (rows) => ({
        language: rows.find((row) => row.key === "language")?.value,
        tokenizer: rows.find((row) => row.key === "tokenizer")?.value
      })
    ))

/**
 * The language the store opens in: what `metaTable` records (its `language`, else the one its
 * fingerprint names), checked against `given` by `SearchTokenizer.chooseLanguage`; with what it
 * records, so the caller can tell whether the index must be rebuilt.
 *
 * @since 0.1.0
 * @category opening
 */
export const open = (
  metaTable: string,
  given: SearchTokenizer.Language | undefined
): Effect.Effect<
  { readonly language: SearchTokenizer.Language; readonly recorded: Recorded },
  SqlError | SearchTokenizer.LanguageMismatch,
  SqlClient.SqlClient
> =>
  Effect.flatMap(read(metaTable), (recorded) =>
    Effect.map(
      SearchTokenizer.chooseLanguage(SearchTokenizer.recordedLanguage(recorded), given),
      (language) => ({ language, recorded })
    ))

/**
 * True when the index `recorded` describes is the running tokenizer's in `language`: opening the
 * store then rebuilds nothing.
 *
 * @since 0.1.0
 * @category opening
 */
export const isCurrent = (recorded: Recorded, language: SearchTokenizer.Language): boolean =>
  recorded.tokenizer === SearchTokenizer.fingerprintOf(language)

/**
 * Records that the index now holds the running tokenizer's tokens in `language`: its fingerprint
 * and its language, in the caller's transaction (the one that rebuilt the index).
 *
 * @since 0.1.0
 * @category writing
 */
export const record = (
  metaTable: string,
  language: SearchTokenizer.Language
): Effect.Effect<void, SqlError, SqlClient.SqlClient> =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.asVoid(
      sql`INSERT INTO ${sql(metaTable)} (key, value)
      VALUES ('tokenizer', ${SearchTokenizer.fingerprintOf(language)}), ('language', ${language})
      ON CONFLICT (key) DO UPDATE SET value = excluded.value`
    ))
