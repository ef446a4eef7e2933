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
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import { EngramPg } from "@engram/store-pg"
import { EngramSqlite } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"

/**
 * Where the store lives when `--db` is not given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DATABASE: string = EngramSqlite.DEFAULT_FILENAME

/**
 * `--db <path>`: the SQLite file the memory store lives in.
 *
 * @since 0.1.0
 * @category options
 */
export const db = Options.text("db").pipe(
  Options.withPseudoName("path"),
  Options.withDescription(
    `The SQLite file that holds the memory store (created on first use). Default: $ENGRAM_DB, else ` +
      `$ENGRAM_PG_URL (PostgreSQL), else ${DEFAULT_DATABASE}.`
  ),
  Options.optional
)

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
  EngramPg.isSchemaName(name)
    ? undefined
    : `"${name}" is not allowed: use lowercase letters, digits and "_", starting with a letter or "_", ` +
      `at most 63 characters`

const invalid = (text: string) => ValidationError.invalidValue(HelpDoc.p(text))

/**
 * A PostgreSQL URL option: checked while the command line is parsed, then kept redacted.
 *
 * @since 0.1.0
 * @category options
 */
export const pgUrlOption = (name: string, description: string): Options.Options<Redacted.Redacted<string>> =>
  Options.text(name).pipe(
    Options.withPseudoName("url"),
    Options.withDescription(description),
    Options.mapEffect((value) => {
      const problem = pgUrlProblem(value)
      return problem === undefined
        ? Effect.succeed(Redacted.make(value))
        : Effect.fail(invalid(`--${name}: ${problem}`))
    })
  )

/**
 * `--pg <url>`: use the PostgreSQL database at this URL instead of a SQLite file. The URL is kept
 * redacted; the password is never printed.
 *
 * @since 0.1.0
 * @category options
 */
export const pg = pgUrlOption(
  "pg",
  "Use PostgreSQL instead of a SQLite file: postgres://user:password@host:5432/database. " +
    "Default: $ENGRAM_PG_URL when neither --db nor $ENGRAM_DB is given. Not together with --db."
).pipe(Options.optional)

/**
 * `--pg-schema <name>`: keep Engram's PostgreSQL tables in this schema (created when missing).
 *
 * @since 0.1.0
 * @category options
 */
export const pgSchema = Options.text("pg-schema").pipe(
  Options.withPseudoName("name"),
  Options.withDescription(
    "The PostgreSQL schema Engram's tables live in (created when missing), for --pg and for migrate --to. " +
      "Default: the server's search_path (usually public)."
  ),
  Options.mapEffect((value) => {
    const problem = pgSchemaProblem(value)
    return problem === undefined ? Effect.succeed(value) : Effect.fail(invalid(`--pg-schema: ${problem}`))
  }),
  Options.optional
)

/**
 * `--json`: machine-readable output, one JSON document on stdout.
 *
 * @since 0.1.0
 * @category options
 */
export const json = Options.boolean("json").pipe(
  Options.withDescription("Print one JSON document instead of the human-readable view.")
)

/**
 * The global options that take a value (their value is not a command word).
 *
 * @since 0.1.0
 * @category options
 */
export const valueOptions: ReadonlyArray<string> = ["--db", "--pg", "--pg-schema"]

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
 * The global settings, as a subcommand handler sees them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** Path of the SQLite store ({@link DEFAULT_DATABASE} unless `--db` was given). */
  readonly db: string
  /** Whether `--db` was given on the command line. */
  readonly dbGiven: boolean
  /** The PostgreSQL URL of `--pg`, redacted; absent: the store is the SQLite file. */
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
  (options): Settings => ({
    db: Option.getOrElse(options.db, () => DEFAULT_DATABASE),
    dbGiven: Option.isSome(options.db),
    pg: Option.getOrUndefined(options.pg),
    pgSchema: Option.getOrUndefined(options.pgSchema),
    json: options.json
  })
)
