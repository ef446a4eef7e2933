/**
 * How the `engram` command fails: every failure becomes one line on stderr and an exit code.
 *
 * Exit codes: `0` success, `1` the request was refused (bad input, unknown id, a lifecycle
 * conflict, an unreadable legacy file), `2` the store could not be opened or failed underneath,
 * `3` the storage is full (nothing of the failed write was stored; free space and retry).
 *
 * @since 0.1.0
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as ValidationError from "@effect/cli/ValidationError"
import type * as HttpServerError from "@effect/platform/HttpServerError"
import * as ErrorClass from "@engram/core/ErrorClass"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * The exit codes the command uses.
 *
 * @since 0.1.0
 * @category constants
 */
export const ExitCode = {
  /** The command did what was asked. */
  ok: 0,
  /** The request was refused: bad input, unknown id, a lifecycle conflict. Nothing was written. */
  refused: 1,
  /** The store could not be opened, or failed underneath the request. */
  unavailable: 2,
  /** The storage is full (a full disk, a size cap): the failed write stored nothing. */
  storageFull: 3
} as const

/**
 * A failure ready to show: one line of text and the exit code it ends the process with.
 *
 * @since 0.1.0
 * @category errors
 */
export class CliFailure extends Schema.TaggedError<CliFailure>()("CliFailure", {
  problem: Schema.String,
  exitCode: Schema.Number
}) {
  override get message() {
    return this.problem
  }
}

/**
 * The store named by `--db` could not be opened (missing directory, not a database, locked…).
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreUnavailable extends ErrorClass.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  location: Schema.String,
  detail: Schema.String
}, {
  errorClass: "Unavailable",
  message: (self) => `cannot open the memory store at ${self.location}: ${self.detail}`
}) {}

// ANSI colour and style sequences, which @effect/cli puts into its own messages.
const ansiSequence = /\u001b\[[0-9;]*m/g

/**
 * Collapses any text to one line: ANSI styling removed, runs of whitespace (newlines included)
 * turned into single spaces.
 *
 * @since 0.1.0
 * @category formatting
 */
export const oneLine = (text: string): string => text.replace(ansiSequence, "").replace(/\s+/g, " ").trim()

/**
 * The one-line text of an `@effect/cli` validation error (a missing option, an unknown
 * argument, a value a flag rejected).
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeValidationError = (error: ValidationError.ValidationError): string => {
  if (ValidationError.isUnclusteredFlag(error)) {
    // "-5 degrees" was split into the short flags -5, "- ", -d, …; put it back together.
    const word = `-${error.unclustered.map((flag) => flag.slice(1)).join("")}`
    return `"${word}" is not an option; to pass text that starts with "-", put it last, after "--"`
  }
  const text = "error" in error ? oneLine(HelpDoc.toAnsiText(error.error)) : ""
  // @effect/cli's "Expected to find option: '--kind'", said as what to do.
  const missing = /^Expected to find option: '(--[\w-]+)'$/.exec(text)?.[1]
  if (missing !== undefined) {
    return `${missing} is required: add ${missing} <value> (engram <command> --help lists the options and their values)`
  }
  return text.length > 0 ? text : "invalid command line (see engram --help)"
}

const errorText = (error: unknown): string => {
  if (error instanceof Error) return oneLine(error.message)
  if (Predicate.hasProperty(error, "message") && typeof error.message === "string") return oneLine(error.message)
  return oneLine(String(error))
}

/** The exit code of each class of failure (see `ErrorClass`): 2 when the store failed underneath, 3 when full. */
const exitCodes: { readonly [C in ErrorClass.ErrorClass]: number } = {
  InvalidInput: ExitCode.refused,
  NotFound: ExitCode.refused,
  Conflict: ExitCode.refused,
  Misconfigured: ExitCode.refused,
  Unavailable: ExitCode.unavailable,
  StorageFull: ExitCode.storageFull
}

const describe = (error: unknown): CliFailure => {
  if (error instanceof CliFailure) return error
  if (ValidationError.isValidationError(error)) {
    return new CliFailure({ problem: describeValidationError(error), exitCode: ExitCode.refused })
  }
  const errorClass = ErrorClass.fromUnknown(error)
  return new CliFailure({
    problem: errorText(error),
    exitCode: errorClass === undefined ? ExitCode.refused : exitCodes[errorClass]
  })
}

/**
 * What a command may fail with: its own {@link CliFailure}, a command-line validation error, a
 * typed error that declares its class (`ErrorClass`), or a server's failure to listen.
 *
 * @since 0.1.0
 * @category errors
 */
export type CommandError =
  | CliFailure
  | ValidationError.ValidationError
  | ErrorClass.Classifiable
  // A server that could not start listening (`@effect/platform`): refused, exit 1.
  | HttpServerError.ServeError

/**
 * Turns any failure of a command into a {@link CliFailure}: validation errors of the command
 * line, and typed errors with their own messages and the exit code of their class (2 when the
 * store is unavailable).
 *
 * @since 0.1.0
 * @category errors
 */
export const toCliFailure = (error: CommandError): CliFailure => describe(error)

/**
 * The {@link CliFailure} a failed run ends with: the first typed failure in the cause, or a
 * defect reported as an internal error.
 *
 * @since 0.1.0
 * @category errors
 */
export const fromCause = (cause: Cause.Cause<unknown>): CliFailure =>
  Option.match(Chunk.head(Cause.failures(cause)), {
    onSome: describe,
    onNone: () =>
      new CliFailure({
        problem: `internal error: ${errorText(Cause.squash(cause))}`,
        exitCode: ExitCode.refused
      })
  })
