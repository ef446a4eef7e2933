/**
 * The command line, read once. {@link scanArgv} walks the words after the executable a single
 * time, against a {@link Grammar} (which words name commands, which options take a value), and
 * returns an {@link Argv}: the command path, every option with its value, the arguments, and
 * what follows `--`. Everything the runner decides before `@effect/cli` parses — help, version,
 * `--log-level`, `--json` for failures, empty values, unknown options and commands, and moving
 * the root's options in front of the command words — reads that value; no other code walks argv.
 *
 * The rules, in one place:
 *
 * - The first `--` ends the options: every word after it is text, whatever it looks like.
 * - `--name=value` carries its value; `--name value` takes the next word as its value when the
 *   grammar says the option takes one (never a `--`); a flag (`--json`) takes none.
 * - The command path is the leading run of words that name a subcommand of the path so far
 *   (options may stand between them); the first other word is an argument and closes the path.
 * - An option is looked up among the root's options (global: valid anywhere before `--`), the
 *   runner's own options, and the options of the command named so far; anything else starting
 *   with `--` is unknown. A word starting with a single `-` that the grammar does not name is
 *   left to `@effect/cli` as an argument.
 *
 * @since 0.1.0
 */

/**
 * One command of the tree, as the scanner needs it: its name, its own long options (and
 * aliases) with whether each takes a value, and its subcommands.
 *
 * @since 0.1.0
 * @category models
 */
export interface CommandGrammar {
  readonly name: string
  readonly options: ReadonlyMap<string, boolean>
  readonly subcommands: ReadonlyArray<CommandGrammar>
}

/**
 * What the scanner knows of a command line: the root command (its options are global), and the
 * options the runner handles itself (`--help`, `--version`, `--log-level`), with whether each
 * takes a value.
 *
 * @since 0.1.0
 * @category models
 */
export interface Grammar {
  readonly root: CommandGrammar
  readonly builtIns: ReadonlyMap<string, boolean>
}

/**
 * Where an option belongs: the root command (`global`), the runner (`builtIn`), the command
 * named so far (`command`), or nowhere (`unknown`).
 *
 * @since 0.1.0
 * @category models
 */
export type OptionKind = "global" | "builtIn" | "command" | "unknown"

/**
 * An option as written: its name, its value (`undefined` for a flag, or a value option given
 * none), and the words it was written as (`["--db", "x.db"]` or `["--db=x.db"]`).
 *
 * @since 0.1.0
 * @category models
 */
export interface OptionToken {
  readonly _tag: "Option"
  readonly name: string
  readonly value: string | undefined
  readonly kind: OptionKind
  readonly written: ReadonlyArray<string>
}

/**
 * A word that is not an option: a command word (`command: true`) or an argument.
 *
 * @since 0.1.0
 * @category models
 */
export interface WordToken {
  readonly _tag: "Word"
  readonly text: string
  readonly command: boolean
}

/**
 * One token before the `--`.
 *
 * @since 0.1.0
 * @category models
 */
export type Token = OptionToken | WordToken

/**
 * The command line, read.
 *
 * @since 0.1.0
 * @category models
 */
export interface Argv {
  /** The command words below the root, e.g. `["memory", "add"]`. */
  readonly command: ReadonlyArray<string>
  /** Every token before the first `--`, in order. */
  readonly tokens: ReadonlyArray<Token>
  /** The words after the first `--` (text, never options); `undefined` when there is no `--`. */
  readonly afterDashes: ReadonlyArray<string> | undefined
}

const longOption = /^--[^=]+/

/**
 * Reads the command line `args` (the words after the executable and script) once.
 *
 * @since 0.1.0
 * @category constructors
 */
export const scanArgv = (args: ReadonlyArray<string>, grammar: Grammar): Argv => {
  const tokens: Array<Token> = []
  const command: Array<string> = []
  let node = grammar.root
  let pathOpen = true
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === "--") return { command, tokens, afterDashes: args.slice(i + 1) }
    const inline = longOption.test(arg) ? arg.indexOf("=") : -1
    const name = inline > 0 ? arg.slice(0, inline) : arg
    const kind: OptionKind | undefined = grammar.root.options.has(name)
      ? "global"
      : grammar.builtIns.has(name)
      ? "builtIn"
      : node !== grammar.root && node.options.has(name)
      ? "command"
      : arg.startsWith("--")
      ? "unknown"
      : undefined
    if (kind === undefined) {
      const sub = pathOpen ? node.subcommands.find((candidate) => candidate.name === arg) : undefined
      if (sub !== undefined) {
        node = sub
        command.push(arg)
      } else {
        pathOpen = false
      }
      tokens.push({ _tag: "Word", text: arg, command: sub !== undefined })
      continue
    }
    const takesValue = (kind === "global" ? grammar.root.options : kind === "builtIn" ? grammar.builtIns : node.options)
      .get(name) ?? false
    if (inline > 0) {
      tokens.push({ _tag: "Option", name, value: arg.slice(inline + 1), kind, written: [arg] })
    } else if (takesValue && i + 1 < args.length && args[i + 1] !== "--") {
      const value = args[++i]!
      tokens.push({ _tag: "Option", name, value, kind, written: [arg, value] })
    } else {
      tokens.push({ _tag: "Option", name, value: undefined, kind, written: [arg] })
    }
  }
  return { command, tokens, afterDashes: undefined }
}

/**
 * The options of the command line, in order (`name` given: only those).
 *
 * @since 0.1.0
 * @category accessors
 */
export const options = (argv: Argv, name?: string): ReadonlyArray<OptionToken> =>
  argv.tokens.filter((token): token is OptionToken =>
    token._tag === "Option" && (name === undefined || token.name === name)
  )

/**
 * Whether any of `names` was written as an option (before `--`).
 *
 * @since 0.1.0
 * @category accessors
 */
export const has = (argv: Argv, ...names: ReadonlyArray<string>): boolean =>
  argv.tokens.some((token) => token._tag === "Option" && names.includes(token.name))

/**
 * The value of the last `name` option written (`""` for one written without a value), or
 * `undefined` when the option is absent.
 *
 * @since 0.1.0
 * @category accessors
 */
export const lastValue = (argv: Argv, name: string): string | undefined => {
  const found = options(argv, name).at(-1)
  return found === undefined ? undefined : found.value ?? ""
}

/**
 * The arguments: the words that are neither options, option values nor command words (those
 * after `--` included).
 *
 * @since 0.1.0
 * @category accessors
 */
export const argumentsOf = (argv: Argv): ReadonlyArray<string> => [
  ...argv.tokens.flatMap((token) => (token._tag === "Word" && !token.command ? [token.text] : [])),
  ...(argv.afterDashes ?? [])
]

/**
 * The first option given an empty value (`--tag ""`, `--tag=`), which `@effect/cli` would drop
 * as if the option were absent.
 *
 * @since 0.1.0
 * @category accessors
 */
export const emptyValue = (argv: Argv): OptionToken | undefined => options(argv).find((token) => token.value === "")

/**
 * The first option that no command on the path, nor the root or the runner, accepts.
 *
 * @since 0.1.0
 * @category accessors
 */
export const unknownOption = (argv: Argv): OptionToken | undefined =>
  options(argv).find((token) => token.kind === "unknown")

/**
 * The command line for `@effect/cli` to parse: the root's options first (it reads a parent's
 * options only before the subcommand), then everything else as written, without the options the
 * runner handles; `--` and what follows it unchanged.
 *
 * @since 0.1.0
 * @category accessors
 */
export const parserArgs = (argv: Argv): ReadonlyArray<string> => {
  const written = (token: Token) => (token._tag === "Word" ? [token.text] : token.written)
  return [
    ...argv.tokens.filter((token) => token._tag === "Option" && token.kind === "global").flatMap(written),
    ...argv.tokens.filter((token) => token._tag === "Word" || (token.kind !== "global" && token.kind !== "builtIn"))
      .flatMap(written),
    ...(argv.afterDashes === undefined ? [] : ["--", ...argv.afterDashes])
  ]
}
