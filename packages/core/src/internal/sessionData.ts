/**
 * The session model — messages, tool calls and results, pending interrupts — with its encodings,
 * its error and its order, shared by `SessionStore` (which exports them) and the in-memory store,
 * so that the in-memory store imports no values from its public module. The classes are documented
 * here and re-exported by name, so that a type inferred from one (in another package's
 * declarations) is named through `SessionStore`.
 *
 * @internal
 */
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as ErrorClass from "../ErrorClass.js"
import { describeParseError } from "../MemoryWrite.js"
import type { SessionId } from "../SessionStore.js"
import { onFirstCall } from "./onFirstCall.js"

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

export const JsonValue: Schema.Schema<JsonValue> = Schema.declare(
  (value: unknown): value is JsonValue => isJson(value, new Set()),
  {
    identifier: "JsonValue",
    description: "a JSON value: null, a boolean, a string, a finite number, or an array or plain object of JSON values"
  }
)

export const ToolCall = Schema.Struct({
  id: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  params: JsonValue
}).annotations({ identifier: "ToolCall" })
export type ToolCall = typeof ToolCall.Type

export const ToolResult = Schema.Struct({
  id: Schema.NonEmptyString,
  name: Schema.NonEmptyString,
  isFailure: Schema.Boolean,
  result: JsonValue
}).annotations({ identifier: "ToolResult" })
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

export const SessionMessage = Schema.Union(OperatorMessage, AssistantMessage, ToolMessage)
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
 * Session data failed to encode (an invalid message or interrupt). Nothing in the call was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidSessionData extends ErrorClass.TaggedError<InvalidSessionData>()("InvalidSessionData", {
  problem: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `session data is invalid and nothing was stored: ${self.problem}`
}) {}

export const compareSessionIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export const sortSessionIds = (ids: Iterable<string>): ReadonlyArray<SessionId> =>
  Array.from(new Set(ids)).sort(compareSessionIds)

const encodeMessageEither = onFirstCall(() => Schema.encodeEither(SessionMessage))
const decodeMessageEither = onFirstCall(() => Schema.decodeUnknownEither(SessionMessage))
const encodeInterruptEither = onFirstCall(() => Schema.encodeEither(PendingInterrupt))
const decodeInterruptEither = onFirstCall(() => Schema.decodeUnknownEither(PendingInterrupt))

export const encodeMessage = (
  message: SessionMessage
): Either.Either<typeof SessionMessage.Encoded, ParseResult.ParseError> => encodeMessageEither(message)

export const decodeStoredMessage = (encoded: unknown): Either.Either<SessionMessage, ParseResult.ParseError> =>
  decodeMessageEither(encoded)

export const encodeInterrupt = (
  interrupt: PendingInterrupt
): Either.Either<typeof PendingInterrupt.Encoded, ParseResult.ParseError> => encodeInterruptEither(interrupt)

export const decodeStoredInterrupt = (encoded: unknown): Either.Either<PendingInterrupt, ParseResult.ParseError> =>
  decodeInterruptEither(encoded)

export const encodeMessages = (
  messages: ReadonlyArray<SessionMessage>
): Effect.Effect<ReadonlyArray<typeof SessionMessage.Encoded>, InvalidSessionData> =>
  Effect.forEach(messages, (message, index) =>
    Either.match(encodeMessageEither(message), {
      onLeft: (error) =>
        Effect.fail(new InvalidSessionData({ problem: `message #${index}: ${describeParseError(error)}` })),
      onRight: Effect.succeed
    }))
