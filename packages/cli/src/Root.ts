/**
 * The `engram` root command and the global options every subcommand reads (`--db`, `--pg`,
 * `--pg-schema`, `--json`).
 *
 * A subcommand reads them with `yield* Root.settings`; the options may be written before or
 * after the subcommand (`engram --json memory list` and `engram memory list --json` agree).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as PgSchemaName from "@engram/store-pg/PgSchemaName"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import * as Effect from "effect/Effect"
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
export const command = Command.make("engram", { db, pg, pgSchema, json }).pipe(
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
