/**
 * The extraction ledger's model: one record per extraction run that called the model, kept by the
 * session store beside the session's messages, and the summary every reader derives from them.
 * Shared by `SessionStore` (which exports it) and the in-memory store.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { describeParseError } from "../MemoryWrite.js"
import { onFirstCall } from "./onFirstCall.js"
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
 * A claim on a session's extraction: `holder` (one extraction service, in whichever process) runs
 * extraction for the session from `at` until the lease ends at `until`, or until it releases the
 * claim. A claim whose `until` has passed has lapsed: anyone may take it (its holder died).
 *
 * @since 0.1.0
 * @category models
 */
export class ExtractionClaim extends Schema.Class<ExtractionClaim>("ExtractionClaim")({
  holder: Schema.NonEmptyTrimmedString,
  at: Schema.DateTimeUtc,
  until: Schema.DateTimeUtc
}) {}

/**
 * What a claim came to: `Claimed` (the caller holds the session's extraction until its `until`),
 * or `Held` with the claim in force, another holder's.
 *
 * @since 0.1.0
 * @category models
 */
export type ClaimOutcome =
  | { readonly _tag: "Claimed" }
  | { readonly _tag: "Held"; readonly claim: ExtractionClaim }

/**
 * Whether `current` (the stored claim, if any) lets `claim` be taken: no claim, a lapsed one, or the
 * same holder's (a renewal).
 */
export const claimable = (
  current: { readonly holder: string; readonly untilMillis: number } | undefined,
  claim: { readonly holder: string; readonly atMillis: number }
): boolean => current === undefined || current.untilMillis <= claim.atMillis || current.holder === claim.holder

/** What a claim came to, from the claim in force after a backend's atomic claim statement. */
export const claimOutcome = (
  claim: ExtractionClaim,
  current: { readonly holder: string; readonly atMillis: number; readonly untilMillis: number } | undefined
): ClaimOutcome =>
  current === undefined || current.holder === claim.holder
    ? { _tag: "Claimed" }
    : {
      _tag: "Held",
      claim: new ExtractionClaim({
        holder: current.holder,
        at: DateTime.unsafeMake(current.atMillis),
        until: DateTime.unsafeMake(current.untilMillis)
      }, { disableValidation: true })
    }

// The fields, not the class: a class's validation accepts any instance, even one built unvalidated.
const decodeClaimEither = Schema.validateEither(Schema.Struct(ExtractionClaim.fields))

/** Validates a claim for a store, failing with `InvalidSessionData` when it is invalid. */
export const validateClaimForStore = (claim: ExtractionClaim): Effect.Effect<ExtractionClaim, InvalidSessionData> =>
  Either.match(decodeClaimEither(claim), {
    onLeft: (error) =>
      Effect.fail(new InvalidSessionData({ problem: `extraction claim: ${describeParseError(error)}` })),
    onRight: (valid) =>
      DateTime.lessThan(valid.at, valid.until)
        ? Effect.succeed(claim)
        : Effect.fail(new InvalidSessionData({ problem: "extraction claim: its lease ends before it starts" }))
  })

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

const encodeRunEither = onFirstCall(() => Schema.encodeEither(ExtractionRun))
const decodeRunEither = onFirstCall(() => Schema.decodeUnknownEither(ExtractionRun))

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
