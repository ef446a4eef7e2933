/**
 * The `engram` command: the root command with its subcommand groups, and the runner that
 * turns every failure into one line on stderr and an exit code.
 *
 * One module per command group lives under `commands/`; a new group is one more entry in
 * the command tree below.
 *
 * @since 0.1.0
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as CliError from "./CliError.js"
import * as Compose from "./commands/Compose.js"
import * as Demo from "./commands/Demo.js"
import * as Doctor from "./commands/Doctor.js"
import * as Eval from "./commands/Eval.js"
import * as Mcp from "./commands/Mcp.js"
import * as Serve from "./commands/Serve.js"
import * as Token from "./commands/Token.js"
import * as Memory from "./commands/Memory.js"
import * as Explain from "./commands/Explain.js"
import * as Inspect from "./commands/Inspect.js"
import * as Migrate from "./commands/Migrate.js"
import * as Telemetry from "./commands/Telemetry.js"
import * as Root from "./Root.js"

/**
 * The version `engram --version` prints.
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION = "0.1.0"

// The whole command tree. Kept module-private: its inferred type spans every command's options
// and errors, and `run` / `main` are the public way in.
const command = Root.command.pipe(
  Command.withSubcommands([
    Memory.command,
    Demo.command,
    Migrate.command,
    Eval.command,
    Compose.command,
    Mcp.command,
    Serve.command,
    Token.command,
    Telemetry.command,
    Doctor.command,
    Inspect.command,
    Explain.command
  ])
)

// Command groups and their subcommands, to name an unknown command precisely.
const groups: Readonly<Record<string, ReadonlyArray<string>>> = {
  memory: Memory.subcommandNames,
  demo: [],
  migrate: [],
  eval: [],
  compose: [],
  mcp: [],
  serve: [],
  token: ["create", "list", "revoke"],
  telemetry: Telemetry.subcommandNames,
  doctor: [],
  inspect: [],
  explain: []
}

/**
 * The one line for a command line whose command words are not known: which word, and what
 * would have been accepted there.
 *
 * @since 0.1.0
 * @category errors
 */
export const describeUnknownCommand = (args: ReadonlyArray<string>): string => {
  // Command words come first; skip the root's options (and the values of `--db`, `--pg`, …).
  const words: Array<string> = []
  for (let i = 0; i < args.length && words.length < 2; i++) {
    const arg = args[i]!
    if (Root.valueOptions.includes(arg)) i++
    else if (!arg.startsWith("-")) words.push(arg)
  }
  const [group, sub] = words
  const names = group === undefined ? undefined : groups[group]
  if (group === undefined || names === undefined) {
    return `unknown command${group === undefined ? "" : ` "${group}"`}; commands: ${Object.keys(groups).join(", ")}`
  }
  return `unknown command "${group}${sub === undefined ? "" : ` ${sub}`}"; ${group} commands: ${names.join(", ")}`
}

const messageText = (message: unknown): string =>
  (Array.isArray(message) ? message : [message])
    .map((part) => (typeof part === "string" ? part : String(part)))
    .join(" ")

/**
 * Log lines as the command shows them — on stderr, so stdout stays the command's output
 * (`--json` included): `engram: warning: legacy row skipped (rowid=7 reason=…)`.
 *
 * @since 0.1.0
 * @category logging
 */
export const logger = Logger.withConsoleError(
  Logger.make(({ annotations, logLevel, message }) => {
    const notes = Array.from(HashMap.entries(annotations), ([key, value]) =>
      `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`)
    const details = notes.length > 0 ? ` (${notes.join(" ")})` : ""
    return `engram: ${logLevel.label.toLowerCase()}: ${messageText(message)}${details}`
  })
)

// Errors only by default: what the stores log as warnings (a skipped row, say) the command
// already reports in its output. The built-in `--log-level warning` shows the details.
const logging = Layer.merge(Logger.replace(Logger.defaultLogger, logger), Logger.minimumLogLevel(LogLevel.Error))

// The root command's own options, and whether each takes a value.
const globalOptions: ReadonlyMap<string, boolean> = new Map([
  ["--db", true],
  ["--pg", true],
  ["--pg-schema", true],
  ["--json", false]
])

/**
 * Moves the root command's options (`--db`, `--pg`, `--pg-schema`, `--json`) in front of the
 * first command word, wherever the user wrote them: @effect/cli only reads a parent command's
 * options before the subcommand, so `engram memory list --json` would otherwise be refused.
 * Nothing after a `--` is touched; `--opt=value` forms are kept whole.
 *
 * @since 0.1.0
 * @category running
 */
export const hoistGlobalOptions = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const hoisted: Array<string> = []
  const rest: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    const name = arg.split("=", 1)[0]!
    const takesValue = globalOptions.get(name)
    if (takesValue === undefined) {
      rest.push(arg)
    } else if (takesValue && !arg.includes("=") && i + 1 < args.length) {
      hoisted.push(arg, args[++i]!)
    } else {
      hoisted.push(arg)
    }
  }
  return [...hoisted, ...rest]
}

/**
 * Runs the command line `argv` (as `process.argv`: runtime and script first). Help and
 * version print as usual; every failure — a rejected command line, a refused store operation,
 * an unopenable store — fails with a {@link CliError.CliFailure} whose text is one line.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const empty = emptyOptionValue(argv.slice(2))
    if (empty !== undefined) {
      return yield* new CliError.CliFailure({
        problem: `${empty}: the value is empty; give a value or leave the option out`,
        exitCode: CliError.ExitCode.refused
      })
    }
    // @effect/cli prints its own multi-line report of a bad command line to stderr; we report
    // the error ourselves, in one line, so its stderr is silenced while the command line is
    // parsed — and restored for the command's own run.
    const console = yield* Effect.console
    const quiet: Console.Console = { ...console, error: () => Effect.void }
    const app = Command.run(
      command.pipe(Command.transformHandler((effect) => Console.withConsole(effect, console))),
      { name: "engram", version: VERSION }
    )
    yield* Console.withConsole(app([...argv.slice(0, 2), ...hoistGlobalOptions(argv.slice(2))]), quiet)
  }).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
      const failure = CliError.fromCause(cause)
      const mismatch = Cause.failureOption(cause).pipe(
        Option.filter((e) => ValidationError.isValidationError(e) && ValidationError.isCommandMismatch(e))
      )
      return Effect.fail(
        Option.isSome(mismatch)
          ? new CliError.CliFailure({ problem: describeUnknownCommand(argv.slice(2)), exitCode: failure.exitCode })
          : failure
      )
    }),
    Effect.provide(Layer.mergeAll(CliConfig.layer({ showBuiltIns: false, showTypes: false }), logging))
  )

/**
 * The first option given an empty value (`--tag ""`, `--tag=`), which @effect/cli would drop as
 * if the option were absent. Arguments after `--` are text, not options.
 *
 * @since 0.1.0
 * @category parsing
 */
export const emptyOptionValue = (args: ReadonlyArray<string>): string | undefined => {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return undefined
    if (!arg.startsWith("--")) continue
    if (arg.endsWith("=")) return arg.slice(0, -1)
    if (!arg.includes("=") && args[i + 1] === "") return arg
  }
  return undefined
}

/**
 * {@link run}, printing a failure as `engram: <problem>` on stderr.
 *
 * @since 0.1.0
 * @category running
 */
export const main = (argv: ReadonlyArray<string>) =>
  run(argv).pipe(Effect.tapError((failure) => Console.error(`engram: ${failure.problem}`)))
