/**
 * Every option and argument of the `engram` command, built one way: a {@link Flag} — a name, its
 * help and how its text is decoded (an Engram schema, a list of words, or a function) — turned
 * into an `@effect/cli` option or argument by {@link required}, {@link optional},
 * {@link withDefault}, {@link repeated}, {@link argument} or {@link repeatedArgument}, or a
 * {@link boolean} switch. The value is decoded while the command line is parsed, so a bad value
 * is refused — one line, `--<flag>: <problem>` (or `<argument>: <problem>`), exit 1 — before any
 * store is opened.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as MemoryRecord from "@engram/core/MemoryRecord"
import * as MemoryWrite from "@engram/core/MemoryWrite"
import * as TextSafety from "@engram/core/TextSafety"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

// A refused value as messages show it: quoted, cut at 40 characters, control characters escaped.
const quoted = (value: string): string =>
  TextSafety.escapeForTerminal(JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value))

const problemWith = <A, I>(schema: Schema.Schema<A, I>, value: unknown): Effect.Effect<A, string> =>
  Effect.mapError(Schema.decodeUnknown(schema)(value), MemoryWrite.describeParseError)

/**
 * A flag's name, help and how its text value is decoded. Turn it into an option with
 * {@link required}, {@link optional} or {@link repeated}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Flag<A> {
  readonly name: string
  readonly pseudoName: string
  readonly description: string
  /** Decodes the raw text, or says what is wrong with it. */
  readonly decode: (value: string) => Effect.Effect<A, string>
}

/**
 * A value flag (`--name <value>`) decoded with `schema`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = <A>(
  name: string,
  schema: Schema.Schema<A, string>,
  description: string,
  pseudoName = "text"
): Flag<A> => ({ name, pseudoName, description, decode: (value) => problemWith(schema, value) })

/**
 * A flag that takes one of a fixed set of words (`--kind fact`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const choice = <const A extends string>(
  name: string,
  values: ReadonlyArray<A>,
  description: string,
  pseudoName: string = name
): Flag<A> => ({
  name,
  pseudoName,
  description: `${description} One of: ${values.join(", ")}.`,
  decode: (value) => {
    const found = values.find((v) => v === value)
    return found !== undefined
      ? Effect.succeed(found)
      : Effect.fail(`${quoted(value)} is not one of ${values.join(", ")}`)
  }
})

/**
 * A value flag decoded by a function (for a decode that needs more than a schema: a file that
 * must exist, a URL or a path).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = <A>(
  name: string,
  decode: (value: string) => Effect.Effect<A, string>,
  description: string,
  pseudoName = "text"
): Flag<A> => ({ name, pseudoName, description, decode })

const base = <A>(flag: Flag<A>) =>
  Options.text(flag.name).pipe(Options.withPseudoName(flag.pseudoName), Options.withDescription(flag.description))

const decodeFlag = <A>(flag: Flag<A>, value: string) =>
  Effect.mapError(
    flag.decode(value),
    (problem) => ValidationError.invalidValue(HelpDoc.p(`--${flag.name}: ${problem}`))
  )

/**
 * The flag as a required option.
 *
 * @since 0.1.0
 * @category options
 */
export const required = <A>(flag: Flag<A>): Options.Options<A> =>
  base(flag).pipe(Options.mapEffect((value) => decodeFlag(flag, value)))

/**
 * The flag as an optional option whose absence is `undefined` (drop it with {@link defined}).
 *
 * @since 0.1.0
 * @category options
 */
export const optional = <A>(flag: Flag<A>): Options.Options<A | undefined> =>
  base(flag).pipe(
    Options.optional,
    Options.mapEffect((value) =>
      Option.isSome(value) ? decodeFlag(flag, value.value) : Effect.succeed<A | undefined>(undefined)
    )
  )

/**
 * The flag as an optional option whose absence is `value`.
 *
 * @since 0.1.0
 * @category options
 */
export const withDefault = <A>(flag: Flag<A>, value: A): Options.Options<A> =>
  base(flag).pipe(
    Options.optional,
    Options.mapEffect((given) => (Option.isSome(given) ? decodeFlag(flag, given.value) : Effect.succeed(value)))
  )

/**
 * A switch (`--json`): present or not; it takes no value.
 *
 * @since 0.1.0
 * @category options
 */
export const boolean = (name: string, description: string): Options.Options<boolean> =>
  Options.boolean(name).pipe(Options.withDescription(description))

/**
 * The flag as an option that may be given several times; absent means `undefined` ("no
 * filter"), never an empty list (which would match nothing).
 *
 * @since 0.1.0
 * @category options
 */
export const repeated = <A>(flag: Flag<A>): Options.Options<ReadonlyArray<A> | undefined> =>
  base(flag).pipe(
    Options.repeated,
    Options.mapEffect((values) =>
      values.length === 0
        ? Effect.succeed<ReadonlyArray<A> | undefined>(undefined)
        : Effect.forEach(values, (value) => decodeFlag(flag, value))
    )
  )

/**
 * The flag as a positional argument, `<name>` (its pseudo-name is not used).
 *
 * @since 0.1.0
 * @category arguments
 */
export const argument = <A>(flag: Flag<A>): Args.Args<A> =>
  Args.text({ name: flag.name }).pipe(
    Args.withDescription(flag.description),
    Args.mapEffect((value) => Effect.mapError(flag.decode(value), (problem) => HelpDoc.p(`<${flag.name}>: ${problem}`)))
  )

/**
 * The flag as a positional argument that may be given any number of times.
 *
 * @since 0.1.0
 * @category arguments
 */
export const repeatedArgument = <A>(flag: Flag<A>): Args.Args<ReadonlyArray<A>> => Args.repeated(argument(flag))

// ---------------------------------------------------------------------------------------------
// Values several commands take
// ---------------------------------------------------------------------------------------------

/**
 * A whole number written in plain decimal digits (`0x10` and `1e2` are refused).
 *
 * @since 0.1.0
 * @category schemas
 */
export const WholeNumber: Schema.Schema<number, string> = Schema.compose(
  Schema.String.pipe(Schema.pattern(/^\d+$/, { message: () => "must be a whole number, e.g. 3" })),
  Schema.NumberFromString
)

/**
 * A TCP port: a whole number from 0 to 65535 (0: the system picks a free one).
 *
 * @since 0.1.0
 * @category schemas
 */
export const Port: Schema.Schema<number, string> = WholeNumber.pipe(
  Schema.filter((port) => port <= 65_535 || "must be a port number from 0 to 65535")
)

/**
 * A scope (`global`, `project:<id>`, `session:<id>`), as every `--scope` flag takes it: the
 * record's own rule, and the refused value named.
 *
 * @since 0.1.0
 * @category schemas
 */
export const Scope: Schema.Schema<MemoryRecord.Scope, string> = Schema.String.pipe(
  Schema.filter((value) =>
    Schema.is(MemoryRecord.Scope)(value) ||
    "a scope is 'global', 'project:<id>' or 'session:<id>' (the id has no spaces or control characters); " +
      `${quoted(value)} is not a scope`
  )
)

/**
 * A path or other text that must not be empty.
 *
 * @since 0.1.0
 * @category schemas
 */
export const NonEmpty: Schema.Schema<string, string> = Schema.String.pipe(
  Schema.filter((value) => value.length > 0 || "must not be empty")
)

/**
 * Drops the `undefined` fields of an object, so it can be passed where optional properties
 * must be absent rather than `undefined` (`exactOptionalPropertyTypes`).
 *
 * @since 0.1.0
 * @category utils
 */
export const defined = <T extends Record<string, unknown>>(
  fields: T
): { [K in keyof T]?: Exclude<T[K], undefined> } => {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value
  return out as { [K in keyof T]?: Exclude<T[K], undefined> }
}
