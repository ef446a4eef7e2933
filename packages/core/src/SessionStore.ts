/**
 * The `SessionStore` service: the checkpointed state of a session — what the operator said, what
 * the assistant answered, which tools it called and what they returned — plus the turn that is
 * waiting for an operator's approval (a pending interrupt).
 *
 * Projected context is never part of a session. No method here takes a `ProjectedContext`; the
 * runtime appends the projection to the model request after the history, for one turn only, and
 * stores only operator, assistant and tool messages. Messages that an older design stored as
 * context frames can still be kept (flagged `legacyContextFrame: true`) for audit, and
 * {@link modelView} strips them from what the model sees.
 *
 * Everything stored is Schema-encodable to plain JSON ({@link encodeMessage},
 * {@link decodeStoredMessage}), so a SQL backend stores one encoded row per message.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import type * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"
import * as runs from "./internal/extractionRuns.js"
import * as InMemorySessionStore from "./internal/inMemorySessionStore.js"
import * as internal from "./internal/sessionData.js"

import type { ClaimOutcome, ExtractionClaim, ExtractionRun, ExtractionRuns } from "./internal/extractionRuns.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import type { InvalidSessionData, PendingInterrupt } from "./internal/sessionData.js"

// The classes of the session model, documented where they are defined.
export {
  AssistantMessage,
  InvalidSessionData,
  OperatorMessage,
  PendingInterrupt,
  ToolMessage
} from "./internal/sessionData.js"
// The extraction ledger's model, documented where it is defined.
export {
  type ClaimOutcome,
  ExtractionClaim,
  ExtractionRun,
  type ExtractionRuns,
  ExtractionUsage
} from "./internal/extractionRuns.js"

const notASessionId = (id: unknown): string =>
  `${JSON.stringify(id) ?? String(id)} is not a session id (1-200 characters, no whitespace or control characters)`

/**
 * A session (thread) id: 1–200 characters, no whitespace or control characters, so that
 * `session:<id>` is always a valid memory scope.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionId = Schema.String.pipe(
  Schema.pattern(/^[^\s\p{Cc}]{1,200}$/u, { message: (issue) => notASessionId(issue.actual) }),
  Schema.annotations({ identifier: "SessionId" })
)
/** @since 0.1.0 @category models */
export type SessionId = typeof SessionId.Type

const isSessionId = onFirstCall(() => Schema.is(SessionId))

/**
 * Checks a session id: the id as a {@link SessionId}, or the one message that says why it is not
 * one (the same message the schema reports).
 *
 * @since 0.1.0
 * @category validation
 */
export const validateSessionId = (id: string): Either.Either<SessionId, string> =>
  isSessionId(id) ? Either.right(id) : Either.left(notASessionId(id))

/**
 * A JSON value: what tool parameters and tool results may hold, so that every backend can store
 * them as JSON without loss.
 *
 * @since 0.1.0
 * @category models
 */
export type JsonValue = internal.JsonValue

/**
 * The schema of {@link JsonValue}: null, booleans, strings, finite numbers (JSON has no `NaN` or
 * `Infinity`), arrays and plain objects of those — no `Date`, `Map`, class instance or cycle.
 *
 * @since 0.1.0
 * @category models
 */
export const JsonValue: Schema.Schema<JsonValue> = internal.JsonValue

/**
 * A tool call the assistant made: the provider's call id, the tool name and its parameters.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolCall = internal.ToolCall
/** @since 0.1.0 @category models */
export type ToolCall = internal.ToolCall

/**
 * The result of one tool call. `id` is the call id it answers; `isFailure` marks a tool error
 * reported back to the model.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolResult = internal.ToolResult
/** @since 0.1.0 @category models */
export type ToolResult = internal.ToolResult

/**
 * Any stored session message, discriminated by `_tag`. A message imported from a design that
 * stored context frames in the session carries `legacyContextFrame: true`.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionMessage = internal.SessionMessage
/** @since 0.1.0 @category models */
export type SessionMessage = internal.SessionMessage

/**
 * A session's messages in append order, with the number of stored rows that failed to decode and
 * were skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionHistory {
  readonly messages: ReadonlyArray<SessionMessage>
  readonly skipped: number
}

/**
 * The backend itself failed (I/O, connection, SQL). The operation left the store as it was.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionStoreFailure
  extends ErrorClass.Failure<SessionStoreFailure>()("SessionStoreFailure", "session store")
{}

/**
 * The session store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Appends messages to a session, atomically and in order: if one message is invalid, none is
   * stored. Appending to an unknown session starts it.
   */
  readonly append: (
    sessionId: SessionId,
    messages: ReadonlyArray<SessionMessage>
  ) => Effect.Effect<void, InvalidSessionData | SessionStoreFailure>

  /** A session's messages in append order (empty for an unknown session). */
  readonly load: (sessionId: SessionId) => Effect.Effect<SessionHistory, SessionStoreFailure>

  /** Records the session's pending interrupt, replacing any earlier one. */
  readonly putInterrupt: (
    sessionId: SessionId,
    interrupt: PendingInterrupt
  ) => Effect.Effect<void, InvalidSessionData | SessionStoreFailure>

  /** The session's pending interrupt, if any. A stored interrupt that fails to decode reads as none. */
  readonly getInterrupt: (sessionId: SessionId) => Effect.Effect<Option.Option<PendingInterrupt>, SessionStoreFailure>

  /** Removes the session's pending interrupt. Clearing when there is none succeeds. */
  readonly clearInterrupt: (sessionId: SessionId) => Effect.Effect<void, SessionStoreFailure>

  /**
   * Every session the store holds something for — a stored message, a pending interrupt or an
   * extraction run (an ACP session's ledger has no messages beside it) — each once, sorted by
   * {@link compareSessionIds}. For tools that walk a whole store (a copy to another backend, an
   * audit).
   */
  readonly listSessions: () => Effect.Effect<ReadonlyArray<SessionId>, SessionStoreFailure>

  /**
   * Appends one record to the session's extraction ledger (a run of `Extraction` that called the
   * model), after the ones already recorded. Recording for a session with no messages is allowed
   * (an ACP session's turns live elsewhere). Fails with `InvalidSessionData`, storing nothing, when
   * the run does not encode.
   */
  readonly recordExtraction: (
    sessionId: SessionId,
    run: ExtractionRun
  ) => Effect.Effect<void, InvalidSessionData | SessionStoreFailure>

  /**
   * The session's extraction runs in the order they were recorded (none for an unknown session). A
   * stored run that fails to decode is skipped and counted; the others are read.
   */
  readonly loadExtractions: (sessionId: SessionId) => Effect.Effect<ExtractionRuns, SessionStoreFailure>

  /**
   * Claims the session's extraction for `claim.holder` until `claim.until`, atomically for every
   * process over the same store (one statement in a transaction on a database): `Claimed` when no
   * claim is stored, the stored one has lapsed (its `until` is not after `claim.at`) or is the same
   * holder's (renewed); otherwise `Held`, with the claim in force, and nothing changes. Claims are
   * no part of the session: `listSessions` does not name a session for one. Fails with
   * `InvalidSessionData` when the claim is invalid (an empty holder, a lease ending before it
   * starts).
   */
  readonly claimExtraction: (
    sessionId: SessionId,
    claim: ExtractionClaim
  ) => Effect.Effect<ClaimOutcome, InvalidSessionData | SessionStoreFailure>

  /** Ends `holder`'s claim on the session's extraction; a claim of another holder, or none, is left alone. */
  readonly releaseExtraction: (sessionId: SessionId, holder: string) => Effect.Effect<void, SessionStoreFailure>
}

/**
 * What a session's extraction runs add up to.
 *
 * @since 0.1.0
 * @category models
 */
export type ExtractionLedger = runs.ExtractionLedger

/**
 * The summary of a session's extraction runs: the last turn extracted (the highest last turn of a
 * run that `extracted`; 0 before any), the runs, calls and tokens spent (failed runs included),
 * and the failed runs since the last successful one with the last problem. Derived on every read,
 * never stored.
 *
 * @since 0.1.0
 * @category extraction ledger
 */
export const summarizeExtractions: (runs: ReadonlyArray<ExtractionRun>) => ExtractionLedger = runs.summarizeExtractions

/**
 * Encodes an extraction run to its JSON-safe form (ISO timestamp), or reports why it is invalid.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeExtractionRun: (
  run: ExtractionRun
) => Either.Either<typeof runs.ExtractionRun.Encoded, ParseResult.ParseError> = runs.encodeExtractionRun

/**
 * Decodes a stored, encoded extraction run.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredExtractionRun: (encoded: unknown) => Either.Either<ExtractionRun, ParseResult.ParseError> =
  runs.decodeStoredExtractionRun

/**
 * Whether a stored claim (its holder and lease end, in epoch milliseconds) lets `claim` be taken:
 * none, a lapsed one, or the same holder's. The rule every backend's `claimExtraction` applies.
 *
 * @since 0.1.0
 * @category extraction ledger
 */
export const claimable: (
  current: { readonly holder: string; readonly untilMillis: number } | undefined,
  claim: { readonly holder: string; readonly atMillis: number }
) => boolean = runs.claimable

/**
 * What a claim came to, from the claim in force (holder and times in epoch milliseconds) that a
 * backend reads back after its atomic claim statement: `Claimed` when it is the caller's.
 *
 * @since 0.1.0
 * @category extraction ledger
 */
export const claimOutcome: (
  claim: ExtractionClaim,
  current: { readonly holder: string; readonly atMillis: number; readonly untilMillis: number } | undefined
) => ClaimOutcome = runs.claimOutcome

/**
 * Validates a claim for a backend's write, failing with `InvalidSessionData` when it is invalid (an
 * empty holder, a lease that ends before it starts). Backends call this before writing anything.
 *
 * @since 0.1.0
 * @category encoding
 */
export const validateClaimForStore: (claim: ExtractionClaim) => Effect.Effect<ExtractionClaim, InvalidSessionData> =
  runs.validateClaimForStore

/**
 * Encodes an extraction run for a backend's write, failing with `InvalidSessionData` when it is
 * invalid. Backends call this before writing anything.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeExtractionRunForStore: (
  run: ExtractionRun
) => Effect.Effect<typeof runs.ExtractionRun.Encoded, InvalidSessionData> = runs.encodeRunForStore

/**
 * The one order session ids are listed in, on every backend: by UTF-16 code units, as
 * JavaScript compares strings.
 *
 * @since 0.1.0
 * @category models
 */
export const compareSessionIds: (a: string, b: string) => number = internal.compareSessionIds

/**
 * Distinct session ids, sorted by {@link compareSessionIds} — what a backend returns from
 * `listSessions` after reading the ids in whatever order its database yields them.
 *
 * @since 0.1.0
 * @category models
 */
export const sortSessionIds: (ids: Iterable<string>) => ReadonlyArray<SessionId> = internal.sortSessionIds

/**
 * The session store service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionStore extends Context.Tag("@engram/core/SessionStore")<SessionStore, Service>() {}

/**
 * Encodes a message to its JSON-safe form (ISO timestamps), or reports why it is invalid.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeMessage: (
  message: SessionMessage
) => Either.Either<typeof SessionMessage.Encoded, ParseResult.ParseError> = internal.encodeMessage

/**
 * Decodes a stored, encoded message (as a backend reads it back).
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredMessage: (encoded: unknown) => Either.Either<SessionMessage, ParseResult.ParseError> =
  internal.decodeStoredMessage

/**
 * Encodes a pending interrupt to its JSON-safe form, or reports why it is invalid.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeInterrupt: (
  interrupt: PendingInterrupt
) => Either.Either<typeof PendingInterrupt.Encoded, ParseResult.ParseError> = internal.encodeInterrupt

/**
 * Decodes a stored, encoded pending interrupt.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredInterrupt: (encoded: unknown) => Either.Either<PendingInterrupt, ParseResult.ParseError> =
  internal.decodeStoredInterrupt

/**
 * Encodes a batch for an append, failing with {@link InvalidSessionData} that names the first
 * invalid message's position and field. Backends call this before writing anything.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeMessages: (
  messages: ReadonlyArray<SessionMessage>
) => Effect.Effect<ReadonlyArray<typeof SessionMessage.Encoded>, InvalidSessionData> = internal.encodeMessages

/**
 * True for a message flagged as a stored context frame of an older design.
 *
 * @since 0.1.0
 * @category model view
 */
export const isLegacyContextFrame = (message: SessionMessage): boolean => message.legacyContextFrame === true

/**
 * What the model may see of a history: every message except legacy context frames, in order,
 * and how many frames were stripped (for prompt observability).
 *
 * @since 0.1.0
 * @category model view
 */
export const modelView = (
  messages: ReadonlyArray<SessionMessage>
): { readonly messages: ReadonlyArray<SessionMessage>; readonly stripped: number } => {
  const visible = messages.filter((message) => !isLegacyContextFrame(message))
  return { messages: visible, stripped: messages.length - visible.length }
}

/**
 * The in-memory session store. Messages are kept in encoded form and decoded on load, exactly as
 * a database backend would. Each call starts empty.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory: () => Service = InMemorySessionStore.make

/**
 * The in-memory session store as a layer. Each layer build starts empty.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionStore> = Layer.sync(SessionStore, makeMemory)
