/**
 * The extraction ledger's model: one record per extraction run that called the model, kept by the
 * session store beside the session's messages, and the summary every reader derives from them.
 * Shared by `SessionStore` (which exports it) and the in-memory store.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { describeParseError } from "../MemoryWrite.js"
import { InvalidSessionData } from "./sessionData.js"

/**
 * The tokens of one extraction call: what the provider reported, or an estimate (characters / 4)
 * marked `estimated`.
 *
 * @since 0.1.0
 * @category models
 */
export const ExtractionUsage = Schema.Struct({
  inputTokens: Schema.NonNegativeInt,
  outputTokens: Schema.NonNegativeInt,
  totalTokens: Schema.NonNegativeInt,
  estimated: Schema.Boolean
}).annotations({ identifier: "ExtractionUsage" })
/** @since 0.1.0 @category models */
export type ExtractionUsage = typeof ExtractionUsage.Type

const TurnNumber = Schema.Int.pipe(Schema.positive())

/**
 * One extraction run that called the model: when it ran, the turns it read (`first`–`last`),
 * whether it `extracted` (its candidates were written or matched) or `failed` (the call, the
 * answer or a store; `problem` says which — the turns stay unextracted), its calls and usage, the
 * ids of the memories it wrote and of the live memories its duplicates corroborated.
 *
 * @since 0.1.0
 * @category models
 */
export class ExtractionRun extends Schema.Class<ExtractionRun>("ExtractionRun")({
  at: Schema.DateTimeUtc,
  turns: Schema.Struct({ first: TurnNumber, last: TurnNumber }).pipe(
    Schema.filter((t) => t.first <= t.last || "the first turn read comes after the last")
  ),
  outcome: Schema.Literal("extracted", "failed"),
  calls: Schema.NonNegativeInt,
  usage: Schema.optional(ExtractionUsage),
  written: Schema.Array(Schema.String),
  corroborated: Schema.Array(Schema.String),
  problem: Schema.optional(Schema.String)
}) {}

/**
 * A session's extraction runs in the order they were recorded, with the number of stored records
 * that failed to decode and were skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExtractionRuns {
  readonly runs: ReadonlyArray<ExtractionRun>
  readonly skipped: number
}

/**
 * What a session's runs add up to: the last turn extracted (`through`, 0 before any), the runs,
 * calls and tokens spent, and the failed runs since the last successful one (`failures`: the retry
 * count of the batch that is waiting) with the last one's problem.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExtractionLedger {
  readonly through: number
  readonly runs: number
  readonly calls: number
  readonly tokens: number
  readonly failures: number
  readonly lastProblem: string | undefined
}

/** The summary of a session's runs. */
export const summarizeExtractions = (runs: ReadonlyArray<ExtractionRun>): ExtractionLedger => {
  let through = 0
  let calls = 0
  let tokens = 0
  let failures = 0
  let lastProblem: string | undefined
  for (const run of runs) {
    calls += run.calls
    tokens += run.usage?.totalTokens ?? 0
    if (run.outcome === "extracted") {
      through = Math.max(through, run.turns.last)
      failures = 0
      lastProblem = undefined
    } else {
      failures++
      lastProblem = run.problem
    }
  }
  return { through, runs: runs.length, calls, tokens, failures, lastProblem }
}

const encodeRunEither = Schema.encodeEither(ExtractionRun)
const decodeRunEither = Schema.decodeUnknownEither(ExtractionRun)

/** Encodes a run to its JSON-safe form, or reports why it is invalid. */
export const encodeExtractionRun = (
  run: ExtractionRun
): Either.Either<typeof ExtractionRun.Encoded, ParseResult.ParseError> => encodeRunEither(run)

/** Decodes a stored, encoded run. */
export const decodeStoredExtractionRun = (encoded: unknown): Either.Either<ExtractionRun, ParseResult.ParseError> =>
  decodeRunEither(encoded)

/** Encodes a run for a store, failing with `InvalidSessionData` when it is invalid. */
export const encodeRunForStore = (
  run: ExtractionRun
): Effect.Effect<typeof ExtractionRun.Encoded, InvalidSessionData> =>
  Either.match(encodeRunEither(run), {
    onLeft: (error) => Effect.fail(new InvalidSessionData({ problem: `extraction run: ${describeParseError(error)}` })),
    onRight: Effect.succeed
  })
