/**
 * @engram/cli — the `engram` command, as a library: the command tree and its runner, so other
 * programs (and tests) can embed or extend it.
 *
 * @since 0.1.0
 */
export * as Argv from "./Argv.js"
export * as Cli from "./Cli.js"
export * as CliError from "./CliError.js"
export * as MemoryCommands from "./commands/Memory.js"
export * as MigrateCommand from "./commands/Migrate.js"
export * as Flags from "./Flags.js"
export * as Help from "./Help.js"
export * as Progress from "./Progress.js"
export * as Render from "./Render.js"
export * as Root from "./Root.js"
export * as StoreBackend from "./StoreBackend.js"
