/**
 * The `engram` root command and the global options every subcommand reads (`--db`, `--pg`,
 * `--pg-schema`, `--language`, `--json`).
 *
 * A subcommand reads them with `yield* Root.settings`; the options may be written before or
 * after the subcommand (`engram --json memory list` and `engram memory list --json` agree).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as SearchTokenizer from "@engram/core/SearchTokenizer"
import * as PgSchemaName from "@engram/store-pg/PgSchemaName"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import * as Flags from "./Flags.js"

/**
 * Where the store lives when neither a flag, the command nor the environment names one.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DATABASE: string = SqliteDatabase.DEFAULT_FILENAME

/**
 * `--db <path>`: the SQLite file the memory store lives in.
 *
 * @since 0.1.0
 * @category options
 */
export const db = Flags.optional(Flags.text(
  "db",
  Flags.NonEmpty,
  `The SQLite file that holds the memory store (created on first use). Default: $ENGRAM_DB, else ` +
    `$ENGRAM_PG_URL (PostgreSQL), else ${DEFAULT_DATABASE}.`,
  "path"
))

/**
 * The problem with a PostgreSQL connection URL, or `undefined` when it is one. The text never
 * repeats the URL (it may carry a password).
 *
 * @since 0.1.0
 * @category validation
 */
export const pgUrlProblem = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "not a URL; expected postgres://user:password@host:5432/database"
  }
  if (parsed.protocol !== "postgres:" && parsed.protocol !== "postgresql:") {
    return `expected a postgres:// or postgresql:// URL, not ${parsed.protocol}//…`
  }
  return undefined
}

/**
 * The problem with a PostgreSQL schema name, or `undefined` when Engram accepts it.
 *
 * @since 0.1.0
 * @category validation
 */
export const pgSchemaProblem = (name: string): string | undefined =>
  PgSchemaName.isSchemaName(name)
    ? undefined
    : `"${name}" is not allowed: use lowercase letters, digits and "_", starting with a letter or "_", ` +
      `at most 63 characters`

/**
 * A PostgreSQL URL, kept redacted once decoded; a refusal never repeats it.
 *
 * @since 0.1.0
 * @category schemas
 */
export const PgUrl: Schema.Schema<Redacted.Redacted<string>, string> = Schema.compose(
  Schema.String.pipe(Schema.filter((url) => pgUrlProblem(url) ?? true)),
  Schema.Redacted(Schema.String)
)

/**
 * `--pg <url>`: use the PostgreSQL database at this URL instead of a SQLite file. The URL is kept
 * redacted; the password is never printed.
 *
 * @since 0.1.0
 * @category options
 */
export const pg = Flags.optional(Flags.text(
  "pg",
  PgUrl,
  "Use PostgreSQL instead of a SQLite file: postgres://user:password@host:5432/database. " +
    "Default: $ENGRAM_PG_URL when neither --db nor $ENGRAM_DB is given. Not together with --db.",
  "url"
))

/**
 * `--pg-schema <name>`: keep Engram's PostgreSQL tables in this schema (created when missing).
 *
 * @since 0.1.0
 * @category options
 */
export const pgSchema = Flags.optional(Flags.text(
  "pg-schema",
  Schema.String.pipe(Schema.filter((name) => pgSchemaProblem(name) ?? true)),
  "The PostgreSQL schema Engram's tables live in (created when missing), for --pg and for migrate --to. " +
    "Default: the server's search_path (usually public).",
  "name"
))

/**
 * The ISO 639-1 code of each language a store can stem in (`SearchTokenizer.Language`); `none`
 * (no stemming) has no code and is written `none`.
 *
 * @since 0.1.0
 * @category constants
 */
export const LANGUAGE_CODES: { readonly [L in Exclude<SearchTokenizer.Language, "none">]: string } = {
  english: "en",
  arabic: "ar",
  armenian: "hy",
  basque: "eu",
  catalan: "ca",
  czech: "cs",
  danish: "da",
  dutch: "nl",
  finnish: "fi",
  french: "fr",
  german: "de",
  hungarian: "hu",
  irish: "ga",
  italian: "it",
  norwegian: "no",
  portuguese: "pt",
  romanian: "ro",
  russian: "ru",
  slovene: "sl",
  spanish: "es",
  swedish: "sv",
  tamil: "ta",
  turkish: "tr"
}

/**
 * Every way a language may be written on the command line: `code (name)`, then `none`.
 *
 * @since 0.1.0
 * @category constants
 */
export const languageChoices: string = [
  ...Object.entries(LANGUAGE_CODES).map(([name, code]) => `${code} (${name})`),
  "none"
].join(", ")

/**
 * The store language a command-line word names — an ISO 639-1 code (`de`) or the tokenizer's name
 * (`german`), either case — or the problem with it, listing every language there is.
 *
 * @since 0.1.0
 * @category validation
 */
export const parseLanguage = (text: string): Either.Either<SearchTokenizer.Language, string> => {
  const word = text.trim().toLowerCase()
  const byCode = Object.entries(LANGUAGE_CODES).find(([, code]) => code === word)?.[0]
  const language = byCode ?? word
  return Schema.is(SearchTokenizer.Language)(language)
    ? Either.right(language)
    : Either.left(
      `${JSON.stringify(text.slice(0, 40))} is not a language Engram stems in; use one of ${languageChoices}`
    )
}

/**
 * `--language <code>`: the language a store's search index stems in. A new store is created in it;
 * an existing store in another language is refused (decision 0196). Absent: `$ENGRAM_LANGUAGE`, else
 * the language the store records (a new store: English).
 *
 * @since 0.1.0
 * @category options
 */
export const language = Flags.optional(Flags.make(
  "language",
  (value) => Either.match(parseLanguage(value), { onLeft: Effect.fail, onRight: Effect.succeed }),
  "The language the store's search index stems words in, as an ISO 639-1 code (de) or a name (german); " +
    "none indexes words unstemmed. A new store is created in it; a store built in another language is " +
    "refused. Default: $ENGRAM_LANGUAGE, else the language the store records (English for a new store).",
  "code"
))

/**
 * `--json`: machine-readable output, one JSON document on stdout.
 *
 * @since 0.1.0
 * @category options
 */
export const json = Flags.boolean("json", "Print one JSON document instead of the human-readable view.")

/**
 * The root command. Subcommand groups are attached in `Cli.ts`.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("engram", { db, pg, pgSchema, language, json }).pipe(
  Command.withDescription("Engram: agent memory you can inspect, review and trust.")
)

/**
 * The global options, as a subcommand handler sees them. Which store they name is for
 * `StoreBackend.locationOf` to say.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** The SQLite file `--db` names. */
  readonly db: string | undefined
  /** The PostgreSQL URL of `--pg`, redacted. */
  readonly pg: Redacted.Redacted<string> | undefined
  /** The PostgreSQL schema of `--pg-schema`. */
  readonly pgSchema: string | undefined
  /** The store language of `--language`. */
  readonly language: SearchTokenizer.Language | undefined
  /** Print JSON instead of the human view. */
  readonly json: boolean
}

/**
 * Reads the global settings from inside a subcommand's handler.
 *
 * @since 0.1.0
 * @category accessors
 */
export const settings: Effect.Effect<Settings, never, Command.Command.Context<"engram">> = Effect.map(
  command,
  (options): Settings => options
)
