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
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import type * as ErrorClass from "./ErrorClass.js"
import { describeParseError } from "./MemoryWrite.js"

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

const isSessionId = Schema.is(SessionId)

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
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | ReadonlyArray<JsonValue>
  | { readonly [key: string]: JsonValue }

const isJson = (value: unknown, ancestors: Set<object>): boolean => {
  if (value === null || typeof value === "boolean" || typeof value === "string") return true
  if (typeof value === "number") return Number.isFinite(value)
  if (typeof value !== "object" || ancestors.has(value)) return false
  ancestors.add(value)
  let ok: boolean
  if (Array.isArray(value)) {
    ok = value.every((item) => isJson(item, ancestors))
  } else {
    const prototype: unknown = Object.getPrototypeOf(value)
    ok = (prototype === Object.prototype || prototype === null) &&
      Object.values(value).every((item) => isJson(item, ancestors))
  }
  ancestors.delete(value)
  return ok
}

/**
 * The schema of {@link JsonValue}: null, booleans, strings, finite numbers (JSON has no `NaN` or
 * `Infinity`), arrays and plain objects of those — no `Date`, `Map`, class instance or cycle.
 *
 * @since 0.1.0
 * @category models
 */
export const JsonValue: Schema.Schema<JsonValue> = Schema.declare(
  (value: unknown): value is JsonValue => isJson(value, new Set()),
  {
    identifier: "JsonValue",
    description: "a JSON value: null, a boolean, a string, a finite number, or an array or plain object of JSON values"
  }
)

/**
 * A tool call the assistant made: the provider's call id, the tool name and its parameters.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolCall = Schema.Struct({
  id: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  params: JsonValue
}).annotations({ identifier: "ToolCall" })
/** @since 0.1.0 @category models */
export type ToolCall = typeof ToolCall.Type

/**
 * The result of one tool call. `id` is the call id it answers; `isFailure` marks a tool error
 * reported back to the model.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolResult = Schema.Struct({
  id: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  isFailure: Schema.Boolean,
  result: JsonValue
}).annotations({ identifier: "ToolResult" })
/** @since 0.1.0 @category models */
export type ToolResult = typeof ToolResult.Type

const commonFields = {
  at: Schema.DateTimeUtc,
  /** Set only on messages imported from a design that stored context frames in the session. */
  legacyContextFrame: Schema.optional(Schema.Literal(true))
}

/**
 * What the operator (the person or program driving the agent) said.
 *
 * @since 0.1.0
 * @category models
 */
export class OperatorMessage extends Schema.TaggedClass<OperatorMessage>()("OperatorMessage", {
  text: Schema.String,
  ...commonFields
}) {}

/**
 * What the assistant answered: its text (possibly empty) and the tool calls it made.
 *
 * @since 0.1.0
 * @category models
 */
export class AssistantMessage extends Schema.TaggedClass<AssistantMessage>()("AssistantMessage", {
  text: Schema.String,
  toolCalls: Schema.Array(ToolCall),
  ...commonFields
}) {}

/**
 * The results of the tool calls of the preceding assistant message.
 *
 * @since 0.1.0
 * @category models
 */
export class ToolMessage extends Schema.TaggedClass<ToolMessage>()("ToolMessage", {
  results: Schema.Array(ToolResult),
  ...commonFields
}) {}

/**
 * Any stored session message, discriminated by `_tag`.
 *
 * @since 0.1.0
 * @category models
 */
export const SessionMessage = Schema.Union(OperatorMessage, AssistantMessage, ToolMessage)
/** @since 0.1.0 @category models */
export type SessionMessage = typeof SessionMessage.Type

/**
 * A turn suspended until the operator approves (or denies) some of its tool calls. A session has
 * at most one. `turn` is the runtime's turn number; `toolCalls` are the calls awaiting a decision;
 * `detail` is whatever else the runtime needs to resume.
 *
 * @since 0.1.0
 * @category models
 */
export class PendingInterrupt extends Schema.Class<PendingInterrupt>("PendingInterrupt")({
  turn: Schema.NonNegativeInt,
  toolCalls: Schema.Array(ToolCall),
  reason: Schema.String,
  at: Schema.DateTimeUtc,
  detail: Schema.optional(JsonValue)
}) {}

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
 * Session data failed to encode (an invalid message or interrupt). Nothing in the call was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSessionData extends Schema.TaggedError<InvalidSessionData>()("InvalidSessionData", {
  problem: Schema.String
}) {
  override get message() {
    return `session data is invalid and nothing was stored: ${this.problem}`
  }
  get errorClass(): ErrorClass.ErrorClass {
    return "InvalidInput"
  }
}

/**
 * The backend itself failed (I/O, connection, SQL). The operation left the store as it was.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionStoreFailure extends Schema.TaggedError<SessionStoreFailure>()("SessionStoreFailure", {
  operation: Schema.String,
  cause: Schema.Defect
}) {
  override get message() {
    const detail = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `session store ${this.operation} failed: ${detail}`
  }
  get errorClass(): ErrorClass.ErrorClass {
    return "Unavailable"
  }
}

/**
 * The session store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionStoreService {
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
   * Every session the store holds something for — a stored message or a pending interrupt —
   * each once, sorted by {@link compareSessionIds}. For tools that walk a whole store (a copy to
   * another backend, an audit).
   */
  readonly listSessions: () => Effect.Effect<ReadonlyArray<SessionId>, SessionStoreFailure>
}

/**
 * The one order session ids are listed in, on every backend: by UTF-16 code units, as
 * JavaScript compares strings.
 *
 * @since 0.1.0
 * @category models
 */
export const compareSessionIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Distinct session ids, sorted by {@link compareSessionIds} — what a backend returns from
 * `listSessions` after reading the ids in whatever order its database yields them.
 *
 * @since 0.1.0
 * @category models
 */
export const sortSessionIds = (ids: Iterable<string>): ReadonlyArray<SessionId> =>
  Array.from(new Set(ids)).sort(compareSessionIds)

/**
 * The session store service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class SessionStore extends Context.Tag("@engram/SessionStore")<SessionStore, SessionStoreService>() {}

const encodeMessageEither = Schema.encodeEither(SessionMessage)
const decodeMessageEither = Schema.decodeUnknownEither(SessionMessage)
const encodeInterruptEither = Schema.encodeEither(PendingInterrupt)
const decodeInterruptEither = Schema.decodeUnknownEither(PendingInterrupt)

/**
 * Encodes a message to its JSON-safe form (ISO timestamps), or reports why it is invalid.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeMessage = (
  message: SessionMessage
): Either.Either<typeof SessionMessage.Encoded, ParseResult.ParseError> => encodeMessageEither(message)

/**
 * Decodes a stored, encoded message (as a backend reads it back).
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredMessage = (encoded: unknown): Either.Either<SessionMessage, ParseResult.ParseError> =>
  decodeMessageEither(encoded)

/**
 * Encodes a pending interrupt to its JSON-safe form, or reports why it is invalid.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeInterrupt = (
  interrupt: PendingInterrupt
): Either.Either<typeof PendingInterrupt.Encoded, ParseResult.ParseError> => encodeInterruptEither(interrupt)

/**
 * Decodes a stored, encoded pending interrupt.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredInterrupt = (encoded: unknown): Either.Either<PendingInterrupt, ParseResult.ParseError> =>
  decodeInterruptEither(encoded)

/**
 * Encodes a batch for an append, failing with {@link InvalidSessionData} that names the first
 * invalid message's position and field. Backends call this before writing anything.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeMessages = (
  messages: ReadonlyArray<SessionMessage>
): Effect.Effect<ReadonlyArray<typeof SessionMessage.Encoded>, InvalidSessionData> =>
  Effect.forEach(messages, (message, index) =>
    Either.match(encodeMessageEither(message), {
      onLeft: (error) =>
        Effect.fail(new InvalidSessionData({ problem: `message #${index}: ${describeParseError(error)}` })),
      onRight: Effect.succeed
    }))

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
 * a database backend would. Each layer build starts empty.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): SessionStoreService => {
  const sessions = new Map<SessionId, Array<unknown>>()
  const interrupts = new Map<SessionId, unknown>()
  return {
    append: (sessionId, messages) =>
      Effect.map(encodeMessages(messages), (encoded) => {
        const stored = sessions.get(sessionId) ?? []
        sessions.set(sessionId, [...stored, ...encoded])
      }),
    load: (sessionId) =>
      Effect.sync(() => {
        const messages: Array<SessionMessage> = []
        let skipped = 0
        for (const row of sessions.get(sessionId) ?? []) {
          const decoded = decodeMessageEither(row)
          if (Either.isRight(decoded)) messages.push(decoded.right)
          else skipped++
        }
        return { messages, skipped }
      }),
    putInterrupt: (sessionId, interrupt) =>
      Either.match(encodeInterruptEither(interrupt), {
        onLeft: (error) => Effect.fail(new InvalidSessionData({ problem: `interrupt: ${describeParseError(error)}` })),
        onRight: (encoded) => Effect.sync(() => void interrupts.set(sessionId, encoded))
      }),
    getInterrupt: (sessionId) =>
      Effect.sync(() => {
        const stored = interrupts.get(sessionId)
        return stored === undefined ? Option.none() : Either.getRight(decodeInterruptEither(stored))
      }),
    clearInterrupt: (sessionId) => Effect.sync(() => void interrupts.delete(sessionId)),
    listSessions: () =>
      Effect.sync(() =>
        sortSessionIds([
          ...Array.from(sessions.entries()).filter(([, messages]) => messages.length > 0).map(([id]) => id),
          ...interrupts.keys()
        ])
      )
  }
}

/**
 * The in-memory session store as a layer. Each layer build starts empty.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<SessionStore> = Layer.sync(SessionStore, makeMemory)
