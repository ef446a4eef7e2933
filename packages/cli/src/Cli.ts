/**
 * The `engram` command: the root command with its subcommand groups, and the runner that
 * turns every failure into one line on stderr and an exit code.
 *
 * The runner reads the command line once (`Argv.scanArgv`, against the {@link grammar} read from
 * the command tree) and decides from that one value: empty values, `--log-level`, unknown options,
 * `--help` (printed by `Help`) and `--version`, the command line `@effect/cli` parses, unknown
 * commands and `--json` failures.
 *
 * One module per command group lives under `commands/`; a new group is one more entry in
 * the command tree below.
 *
 * @since 0.1.0
 */
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as CommandDescriptor from "@effect/cli/CommandDescriptor"
import type * as HelpDoc from "@effect/cli/HelpDoc"
import type * as Usage from "@effect/cli/Usage"
import * as ValidationError from "@effect/cli/ValidationError"
import * as Arr from "effect/Array"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Option from "effect/Option"
import * as Argv from "./Argv.js"
import * as CliError from "./CliError.js"
import * as Compose from "./commands/Compose.js"
import * as Demo from "./commands/Demo.js"
import * as Doctor from "./commands/Doctor.js"
import * as Embed from "./commands/Embed.js"
import * as Eval from "./commands/Eval.js"
import * as Explain from "./commands/Explain.js"
import * as Extract from "./commands/Extract.js"
import * as Inspect from "./commands/Inspect.js"
import * as Mcp from "./commands/Mcp.js"
import * as Memory from "./commands/Memory.js"
import * as Migrate from "./commands/Migrate.js"
import * as Serve from "./commands/Serve.js"
import * as Sessions from "./commands/Sessions.js"
import * as Telemetry from "./commands/Telemetry.js"
import * as Token from "./commands/Token.js"
import * as Help from "./Help.js"
import * as Root from "./Root.js"
import * as Version from "./Version.js"

/**
 * The version `engram --version` prints (kept in `Version`, which `bin.ts` reads alone).
 *
 * @since 0.1.0
 * @category constants
 */
export const VERSION: string = Version.VERSION

// The command tree: each group with its subcommands, in the order help lists them. Written once:
// @effect/cli's command, the argv grammar and the help pages are all read from it.
const tree = [
  [Memory.command, Memory.subcommands],
  [Demo.command],
  [Migrate.command],
  [Eval.command],
  [Compose.command],
  [Mcp.command],
  [Serve.command],
  [Token.command, Token.subcommands],
  [Telemetry.command, Telemetry.subcommands],
  [Doctor.command],
  [Embed.command],
  [Extract.command],
  [Sessions.command],
  [Inspect.command],
  [Explain.command]
] as const

// The whole command. Kept module-private: its inferred type spans every command's options and
// errors, and `run` / `main` are the public way in.
const command = Root.command.pipe(Command.withSubcommands(Arr.map(tree, ([group]) => group)))

/**
 * How help and usage are shown: no built-in options listed, no type names in usage lines.
 *
 * @since 0.1.0
 * @category constants
 */
export const config: CliConfig.CliConfig = CliConfig.make({ showBuiltIns: false, showTypes: false })

/** A command of the tree as the runner reads it: its name, usage, help and subcommands. */
interface Node {
  readonly name: string
  readonly usage: Usage.Usage
  readonly help: () => HelpDoc.HelpDoc
  readonly children: ReadonlyArray<Node>
}

const node = (
  self: { readonly descriptor: CommandDescriptor.Command<unknown> },
  children: ReadonlyArray<Node> = []
): Node => ({
  name: Arr.fromIterable(CommandDescriptor.getNames(self.descriptor))[0]!,
  usage: CommandDescriptor.getUsage(self.descriptor),
  help: () => CommandDescriptor.getHelp(self.descriptor, config),
  children
})

const root: Node = node(
  command,
  tree.map(([group, subcommands]) =>
    node(group, subcommands === undefined ? [] : subcommands.map((subcommand) => node(subcommand)))
  )
)

// The long options (and aliases) a usage names, and whether each takes a value.
const optionsOf = (usage: Usage.Usage): ReadonlyArray<readonly [string, boolean]> => {
  switch (usage._tag) {
    case "Empty":
    case "Mixed":
      return []
    case "Named":
      return usage.names.filter((name) => name.startsWith("-")).map((name) =>
        [name, Option.isSome(usage.acceptedValues)] as const
      )
    case "Optional":
    case "Repeated":
      return optionsOf(usage.usage)
    case "Alternation":
    case "Concat":
      return [...optionsOf(usage.left), ...optionsOf(usage.right)]
  }
}

const grammarOf = (self: Node): Argv.CommandGrammar => ({
  name: self.name,
  options: new Map(optionsOf(self.usage)),
  subcommands: self.children.map(grammarOf)
})

/**
 * The command line's grammar, read from the command tree: the root's options (global), the
 * runner's own (`--help`/`-h`, `--version`, `--log-level`), and each command's options. Read a
 * command line with `Argv.scanArgv(args, Cli.grammar)`.
 *
 * @since 0.1.0
 * @category parsing
 */
export const grammar: Argv.Grammar = {
  root: grammarOf(root),
  builtIns: new Map([["--help", false], ["-h", false], ["--version", false], ["--log-level", true]])
}

const nodeAt = (path: ReadonlyArray<string>): Node =>
  path.reduce((at, name) => at.children.find((child) => child.name === name) ?? at, root)

/**
 * The one line for a command line whose command words are not known: which word, and what
 * would have been accepted there.
 *
 * @since 0.1.0
 * @category errors
 */
export const describeUnknownCommand = (argv: Argv.Argv): string => {
  const words = Argv.argumentsOf(argv)
  const [group, sub] = argv.command.length > 0 ? [argv.command[0]!, argv.command[1] ?? words[0]] : [words[0], words[1]]
  const groups = root.children.map((child) => child.name)
  const names = group === undefined ? undefined : root.children.find((child) => child.name === group)?.children.map(
    (child) => child.name
  )
  if (group === undefined || names === undefined) {
    const guess = group === undefined ? undefined : closest(group, groups)
    return `unknown command${group === undefined ? "" : ` "${group}"`}` +
      `${guess === undefined ? "" : `; did you mean "${guess}"?`}; commands: ${groups.join(", ")}`
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

/**
 * The one line for the first option on the command line that the command does not accept,
 * naming the option it most likely meant; `undefined` when every option is known.
 *
 * @since 0.1.0
 * @category suggestions
 */
export const describeUnknownOption = (argv: Argv.Argv): string | undefined => {
  const unknown = Argv.unknownOption(argv)
  if (unknown === undefined) return undefined
  const known = [
    ...grammar.root.options.keys(),
    ...grammar.builtIns.keys(),
    ...optionsOf(nodeAt(argv.command).usage)
      .map(([name]) => name)
  ].filter((name) => name.startsWith("--"))
  const guess = closest(unknown.name.slice(2), known.map((option) => option.slice(2)))
  return `unknown option ${unknown.name}${guess === undefined ? "" : `; did you mean --${guess}?`} ` +
    "(engram <command> --help lists a command's options)"
}

/**
 * The log levels `--log-level` accepts.
 *
 * @since 0.1.0
 * @category logging
 */
export const logLevels: ReadonlyArray<string> = LogLevel.allLevels.map((level) => level._tag.toLowerCase())

/**
 * The level `--log-level <level>` (or `--log-level=<level>`) asks for, wherever it was written
 * (`undefined` when absent), or the problem when it is not one of {@link logLevels}.
 *
 * @since 0.1.0
 * @category logging
 */
export const logLevelOf = (argv: Argv.Argv): {
  readonly level: LogLevel.LogLevel | undefined
  readonly problem: string | undefined
} => {
  const value = Argv.lastValue(argv, "--log-level")
  if (value === undefined) return { level: undefined, problem: undefined }
  const level = LogLevel.allLevels.find((candidate) => candidate._tag.toLowerCase() === value.toLowerCase())
  return level !== undefined
    ? { level, problem: undefined }
    : { level: undefined, problem: `--log-level: "${value}" is not a level; use one of ${logLevels.join(", ")}` }
}

/**
 * The help page of the command the command line names (the root's when it names none).
 *
 * @since 0.1.0
 * @category formatting
 */
export const helpPage = (argv: Argv.Argv): HelpDoc.HelpDoc => {
  const at = nodeAt(argv.command)
  return Help.page({
    path: ["engram", ...argv.command],
    version: VERSION,
    usage: at.usage,
    help: at.help(),
    config,
    group: at.children.length > 0
  })
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

/**
 * Runs the command line `argv` (as `process.argv`: runtime and script first). Help and
 * version print as usual; every failure — a rejected command line, a refused store operation,
 * an unopenable store — fails with a {@link CliError.CliFailure} whose text is one line.
 *
 * @since 0.1.0
 * @category running
 */
export const run = (argv: ReadonlyArray<string>) => runScanned(argv, Argv.scanArgv(argv.slice(2), grammar))

const refuse = (problem: string) => new CliError.CliFailure({ problem, exitCode: CliError.ExitCode.refused })

const runScanned = (argv: ReadonlyArray<string>, scanned: Argv.Argv) =>
  Effect.gen(function*() {
    const empty = Argv.emptyValue(scanned)
    if (empty !== undefined) {
      return yield* refuse(`${empty.name}: the value is empty; give a value or leave the option out`)
    }
    const { level, problem } = logLevelOf(scanned)
    if (problem !== undefined) return yield* refuse(problem)
    const unknownOption = describeUnknownOption(scanned)
    if (unknownOption !== undefined) return yield* refuse(unknownOption)
    if (Argv.has(scanned, "--help", "-h")) {
      return yield* Console.log(Help.render(helpPage(scanned), { width: Help.WIDTH, color: colorAllowed() }))
    }
    if (Argv.has(scanned, "--version")) return yield* Console.log(VERSION)
    // @effect/cli prints its own multi-line report of a bad command line to stderr; we report
    // the error ourselves, in one line, so its stderr is silenced while the command line is
    // parsed — and restored for the command's own run.
    const console = yield* Effect.console
    const quiet: Console.Console = { ...console, error: () => Effect.void }
    const app = Command.run(
      command.pipe(Command.transformHandler((effect) => Console.withConsole(effect, console))),
      { name: "engram", version: VERSION }
    )
    const running = Console.withConsole(app([...argv.slice(0, 2), ...Argv.parserArgs(scanned)]), quiet)
    yield* level === undefined ? running : Effect.provide(running, Logger.minimumLogLevel(level))
  }).pipe(
    Effect.catchAllCause((cause) => {
      if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
      const described = CliError.fromCause(cause)
      // A refusal that points at "engram <command> --help" names the command it was given.
      const failure = described.problem.includes("engram <command> --help") && scanned.command.length > 0
        ? new CliError.CliFailure({
          problem: described.problem.replace("engram <command> --help", `engram ${scanned.command.join(" ")} --help`),
          exitCode: described.exitCode
        })
        : described
      const mismatch = Cause.failureOption(cause).pipe(
        Option.filter((e) => ValidationError.isValidationError(e) && ValidationError.isCommandMismatch(e))
      )
      return Effect.fail(
        Option.isSome(mismatch)
          ? new CliError.CliFailure({ problem: describeUnknownCommand(scanned), exitCode: failure.exitCode })
          : failure
      )
    }),
    Effect.provide(Layer.mergeAll(Layer.succeed(CliConfig.CliConfig, config), logging))
  )

/**
 * {@link run}, printing a failure as `engram: <problem>` on stderr — and, when the command line
 * asks for JSON (`--json` before any `--`), also as one JSON document on stdout:
 * `{ "error": { "problem", "exitCode" } }`.
 *
 * @since 0.1.0
 * @category running
 */
export const main = (argv: ReadonlyArray<string>) => {
  const scanned = Argv.scanArgv(argv.slice(2), grammar)
  return runScanned(argv, scanned).pipe(
    Effect.tapError((failure) =>
      Effect.zipRight(
        Argv.has(scanned, "--json")
          ? Console.log(JSON.stringify({ error: { problem: failure.problem, exitCode: failure.exitCode } }, null, 2))
          : Effect.void,
        Console.error(`engram: ${failure.problem}`)
      )
    )
  )
}
