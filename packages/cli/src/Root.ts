/**
 * The `engram` root command and the global options every subcommand reads (`--db`, `--json`).
 *
 * A subcommand reads them with `yield* Root.settings`; the options may be written before or
 * after the subcommand (`engram --json memory list` and `engram memory list --json` agree).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import { EngramSqlite } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"

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
  Options.withDescription(`The SQLite file that holds the memory store (created on first use).`),
  Options.withDefault(DEFAULT_DATABASE)
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
export const valueOptions: ReadonlyArray<string> = ["--db"]

/**
 * The root command. Subcommand groups are attached in `Cli.ts`.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("engram", { db, json }).pipe(
  Command.withDescription("Engram: agent memory you can inspect, review and trust.")
)

/**
 * The global settings, as a subcommand handler sees them.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  /** Path of the SQLite store. */
  readonly db: string
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
  ({ db, json }): Settings => ({ db, json })
)
