/**
 * Command-line options and arguments checked against Engram's own schemas while the command
 * line is parsed, so a bad value is refused — with one line naming the flag and the problem —
 * before any store is opened.
 *
 * @since 0.1.0
 */
import * as Args from "@effect/cli/Args"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import { MemoryWrite } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

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
    return found !== undefined ? Effect.succeed(found) : Effect.fail(`"${value}" is not one of ${values.join(", ")}`)
  }
})

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
 * A positional argument decoded with `schema`.
 *
 * @since 0.1.0
 * @category arguments
 */
export const argument = <A>(name: string, schema: Schema.Schema<A, string>, description: string): Args.Args<A> =>
  Args.text({ name }).pipe(
    Args.withDescription(description),
    Args.mapEffect((value) =>
      Effect.mapError(problemWith(schema, value), (problem) => HelpDoc.p(`<${name}>: ${problem}`))
    )
  )

/**
 * A positional argument that takes one of a fixed set of words.
 *
 * @since 0.1.0
 * @category arguments
 */
export const argumentChoice = <const A extends string>(
  name: string,
  values: ReadonlyArray<A>,
  description: string
): Args.Args<A> =>
  Args.text({ name }).pipe(
    Args.withDescription(`${description} One of: ${values.join(", ")}.`),
    Args.mapEffect((value) => {
      const found = values.find((v) => v === value)
      return found !== undefined
        ? Effect.succeed(found)
        : Effect.fail(HelpDoc.p(`<${name}>: "${value}" is not one of ${values.join(", ")}`))
    })
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
