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
import * as HelpDoc from "@effect/cli/HelpDoc"
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
import * as Explain from "./commands/Explain.js"
import * as Inspect from "./commands/Inspect.js"
import * as Mcp from "./commands/Mcp.js"
import * as Memory from "./commands/Memory.js"
import * as Migrate from "./commands/Migrate.js"
import * as Serve from "./commands/Serve.js"
import * as Telemetry from "./commands/Telemetry.js"
import * as Token from "./commands/Token.js"
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
    if (Root.valueOptions.includes(arg) || arg === "--log-level") i++
    else if (!arg.startsWith("-")) words.push(arg)
  }
  const [group, sub] = words
  const names = group === undefined ? undefined : groups[group]
  if (group === undefined || names === undefined) {
    const guess = group === undefined ? undefined : closest(group, Object.keys(groups))
    return `unknown command${group === undefined ? "" : ` "${group}"`}` +
      `${guess === undefined ? "" : `; did you mean "${guess}"?`}; commands: ${Object.keys(groups).join(", ")}`
  }
  const guess = sub === undefined ? undefined : closest(sub, names)
  return `unknown command "${group}${sub === undefined ? "" : ` ${sub}`}"` +
    `${guess === undefined ? "" : `; did you mean "${group} ${guess}"?`}; ${group} commands: ${names.join(", ")}`
}

/**
 * The edit distance between two words (insertions, deletions, substitutions, and swaps of two
 * neighbouring letters).
 *
 * @since 0.1.0
 * @category suggestions
 */
export const distance = (a: string, b: string): number => {
  const d: Array<Array<number>> = Array.from(
    { length: a.length + 1 },
    (_, i) => [i, ...Array<number>(b.length).fill(0)]
  )
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1)
      }
    }
  }
  return d[a.length]![b.length]!
}

/**
 * The candidate nearest to `word` when it is near enough to be a typo (at most two edits, and
 * fewer than half the word), or `undefined`.
 *
 * @since 0.1.0
 * @category suggestions
 */
export const closest = (word: string, candidates: ReadonlyArray<string>): string | undefined => {
  let best: string | undefined
  let bestDistance = Infinity
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return bestDistance <= Math.min(2, Math.ceil(word.length / 2) - 1) || (bestDistance <= 2 && word.length > 5)
    ? best
    : undefined
}

// Every long option some command of the tree accepts, read from the tree's own help.
let knownOptionsCache: ReadonlySet<string> | undefined
const knownOptions = (): ReadonlySet<string> => {
  if (knownOptionsCache === undefined) {
    const text = HelpDoc.toAnsiText(Command.getHelp(command, CliConfig.defaultConfig)).replace(/\u001b\[[0-9;]*m/g, "")
    knownOptionsCache = new Set([...(text.match(/--[a-z][a-z0-9-]*/g) ?? []), "--help", "--version", "--log-level"])
  }
  return knownOptionsCache
}

/**
 * The one line for the first long option on the command line that no command accepts, naming
 * the option it most likely meant; `undefined` when every option is known. Arguments after `--`
 * are text.
 *
 * @since 0.1.0
 * @category suggestions
 */
export const describeUnknownOption = (args: ReadonlyArray<string>): string | undefined => {
  const known = knownOptions()
  for (const arg of args) {
    if (arg === "--") return undefined
    if (!arg.startsWith("--")) continue
    const name = arg.split("=", 1)[0]!
    if (known.has(name)) continue
    const guess = closest(name.slice(2), [...known].map((option) => option.slice(2)))
    return `unknown option ${name}${guess === undefined ? "" : `; did you mean --${guess}?`} ` +
      "(engram <command> --help lists a command's options)"
  }
  return undefined
}

/**
 * The log levels `--log-level` accepts.
 *
 * @since 0.1.0
 * @category logging
 */
export const logLevels: ReadonlyArray<string> = LogLevel.allLevels.map((level) => level._tag.toLowerCase())

/**
 * Takes `--log-level <level>` (or `--log-level=<level>`) out of the command line, wherever it was
 * written: the level (`undefined` when absent), the rest of the command line, and the problem
 * when the level is not one of {@link logLevels}.
 *
 * @since 0.1.0
 * @category logging
 */
export const extractLogLevel = (args: ReadonlyArray<string>): {
  readonly level: LogLevel.LogLevel | undefined
  readonly rest: ReadonlyArray<string>
  readonly problem: string | undefined
} => {
  const rest: Array<string> = []
  let value: string | undefined
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") {
      rest.push(...args.slice(i))
      break
    }
    if (arg === "--log-level") value = args[++i] ?? ""
    else if (arg.startsWith("--log-level=")) value = arg.slice("--log-level=".length)
    else rest.push(arg)
  }
  if (value === undefined) return { level: undefined, rest, problem: undefined }
  const level = LogLevel.allLevels.find((candidate) => candidate._tag.toLowerCase() === value.toLowerCase())
  return level !== undefined
    ? { level, rest, problem: undefined }
    : { level: undefined, rest, problem: `--log-level: "${value}" is not a level; use one of ${logLevels.join(", ")}` }
}

// The sentences @effect/cli adds under every option whatever it is, which say nothing here.
const boilerplate = new Set([
  "A user-defined piece of text.",
  "This setting is optional.",
  "This option may be repeated zero or more times.",
  "An integer.",
  "A true or false value."
])

const wrap = (line: string, width: number): ReadonlyArray<string> => {
  if (line.length <= width) return [line]
  const indent = /^\s*/.exec(line)![0]
  const lines: Array<string> = []
  let current = ""
  for (const word of line.trim().split(/\s+/)) {
    if (current !== "" && indent.length + current.length + 1 + word.length > width) {
      lines.push(indent + current)
      current = word
    } else {
      current = current === "" ? word : `${current} ${word}`
    }
  }
  if (current !== "") lines.push(indent + current)
  return lines
}

/**
 * @effect/cli's help as the command shows it: without the sentences it repeats under every
 * option, with the usage line naming the whole command (`$ engram memory add …`, not `$ add …`),
 * the command table's padding collapsed and every line wrapped at `width` columns.
 *
 * @since 0.1.0
 * @category formatting
 */
export const tidyHelp = (text: string, commandPath: ReadonlyArray<string>, width = 100): string => {
  const out: Array<string> = []
  const lines = text.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (boilerplate.has(line.trim())) {
      if (lines[i + 1]?.trim() === "" && out.at(-1)?.trim() === "") i++
      continue
    }
    const sub = commandPath.slice(1)
    const named = sub.length > 0 && line.startsWith(`$ ${sub.at(-1)} `)
      ? `$ ${commandPath.join(" ")} ${line.slice(sub.at(-1)!.length + 3)}`
      : line
    out.push(...wrap(named.replace(/(\S) {3,}(\S)/g, "$1   $2"), width))
  }
  return out.join("\n")
}

/**
 * The command words of a command line (`["engram", "memory", "add"]`), options and their values
 * left out.
 *
 * @since 0.1.0
 * @category formatting
 */
export const commandPath = (args: ReadonlyArray<string>): ReadonlyArray<string> => {
  const words = ["engram"]
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") break
    if (Root.valueOptions.includes(arg)) i++
    else if (!arg.startsWith("-") && words.length < 3 && (words.length === 1 ? arg in groups : true)) words.push(arg)
    else if (!arg.startsWith("-")) break
  }
  return words
}

/**
 * Whether output may carry ANSI colour: stdout is a terminal and `NO_COLOR` is not set.
 *
 * @since 0.1.0
 * @category formatting
 */
export const colorAllowed = (): boolean =>
  process.stdout.isTTY === true && (process.env.NO_COLOR === undefined || process.env.NO_COLOR === "")

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
    const notes = Array.from(
      HashMap.entries(annotations),
      ([key, value]) => `${key}=${typeof value === "string" ? value : JSON.stringify(value)}`
    )
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
    const { level, problem, rest } = extractLogLevel(argv.slice(2))
    if (problem !== undefined) {
      return yield* new CliError.CliFailure({ problem, exitCode: CliError.ExitCode.refused })
    }
    const unknownOption = describeUnknownOption(rest)
    if (unknownOption !== undefined) {
      return yield* new CliError.CliFailure({ problem: unknownOption, exitCode: CliError.ExitCode.refused })
    }
    const console = yield* Effect.console
    // @effect/cli's own output (help, version) is styled with ANSI codes: plain text unless the
    // output is a terminal and NO_COLOR is unset.
    const plain = !colorAllowed()
    const strip = (values: ReadonlyArray<unknown>) =>
      values.map((value) => (typeof value === "string" ? value.replace(/\u001b\[[0-9;]*m/g, "") : value))
    const path = commandPath(rest)
    const tidy = (values: ReadonlyArray<unknown>) =>
      values.map((value) => (typeof value === "string" ? tidyHelp(value, path) : value))
    const quiet: Console.Console = {
      ...console,
      error: () => Effect.void,
      log: (...values) => console.log(...tidy(plain ? strip(values) : values))
    }
    const app = Command.run(
      command.pipe(Command.transformHandler((effect) => Console.withConsole(effect, console))),
      { name: "engram", version: VERSION }
    )
    const running = Console.withConsole(app([...argv.slice(0, 2), ...hoistGlobalOptions(rest)]), quiet)
    yield* level === undefined ? running : Effect.provide(running, Logger.minimumLogLevel(level))
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
  run(argv).pipe(
    Effect.tapError((failure) =>
      Effect.zipRight(
        wantsJson(argv.slice(2))
          ? Console.log(JSON.stringify({ error: { problem: failure.problem, exitCode: failure.exitCode } }, null, 2))
          : Effect.void,
        Console.error(`engram: ${failure.problem}`)
      )
    )
  )

/**
 * Whether the command line asks for JSON (`--json` before any `--`): its failures are then also
 * printed as one JSON document on stdout, `{ "error": { "problem", "exitCode" } }`.
 *
 * @since 0.1.0
 * @category running
 */
export const wantsJson = (args: ReadonlyArray<string>): boolean => {
  for (const arg of args) {
    if (arg === "--") return false
    if (arg === "--json") return true
  }
  return false
}
