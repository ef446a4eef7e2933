/**
 * A prompt snapshot: what one model call was sent, as references into the session's
 * `Trajectory` — never a copy of the text (unless full-text capture is switched on).
 *
 * One snapshot per `(sessionId, turn, call)`. It names:
 *
 * - the **prefix**: its blob, and per section the name, who configured it, its size, its content
 *   hash and its fragments' sources and memory ids;
 * - the **messages**: the session's message stream up to `messages.count`, with the turn's
 *   operator input at `messages.input` (history before it, the turn's rounds after it);
 * - the **projection**: its blob, and per section the status (included, truncated, dropped),
 *   size, items, shed lines and memory ids; what was shed, withheld or suppressed;
 * - the **legacy frames** stripped from the view — which ones (their stream positions and
 *   hashes), not only how many;
 * - the **scopes** the projection read and the **overlay report** the prefix was built with (an
 *   `overlay` blob: which promoted memories composed and why the others were declined);
 * - the model, the tools offered, the token usage when the provider reports it, and the hash
 *   and size of the composed request, so a rebuild can be checked byte for byte.
 *
 * It never holds memory content, only ids, sizes and hashes — except `fullText`, which is empty
 * unless the operator asked for bounded, redacted full-text capture.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { onFirstCall } from "./internal/onFirstCall.js"
import { MemoryId, Scope } from "./MemoryRecord.js"
import { ProjectionMode, SectionLabel, SectionReport, ShedItem, WithheldItem } from "./ProjectionLayout.js"
import { SectionSource } from "./PromptFragment.js"
import { SessionId } from "./SessionStore.js"
import { ContentHash } from "./Trajectory.js"

/**
 * A fragment of a prefix section: authored or from memory, its size, and its memory ids.
 *
 * @since 0.1.0
 * @category models
 */
export const PrefixFragmentRef = Schema.Struct({
  source: Schema.Literal("authored", "memory"),
  chars: Schema.NonNegativeInt,
  memoryIds: Schema.Array(MemoryId)
}).annotations({ identifier: "PrefixFragmentRef" })
/** @since 0.1.0 @category models */
export type PrefixFragmentRef = typeof PrefixFragmentRef.Type

/**
 * A section of the stable prefix: name, who configured it, size, content hash of its text, and
 * its fragments.
 *
 * @since 0.1.0
 * @category models
 */
export const PrefixSectionRef = Schema.Struct({
  name: Schema.String,
  source: SectionSource,
  chars: Schema.NonNegativeInt,
  hash: ContentHash,
  fragments: Schema.Array(PrefixFragmentRef)
}).annotations({ identifier: "PrefixSectionRef" })
/** @since 0.1.0 @category models */
export type PrefixSectionRef = typeof PrefixSectionRef.Type

/**
 * A stored legacy context frame stripped from what the model saw: its stream position and hash.
 *
 * @since 0.1.0
 * @category models
 */
export const StrippedFrame = Schema.Struct({
  seq: Schema.NonNegativeInt,
  hash: ContentHash
}).annotations({ identifier: "StrippedFrame" })
/** @since 0.1.0 @category models */
export type StrippedFrame = typeof StrippedFrame.Type

/**
 * Token usage as the provider reported it (a field it did not report is `null`).
 *
 * @since 0.1.0
 * @category models
 */
export const TokenUsage = Schema.Struct({
  inputTokens: Schema.NullOr(Schema.NonNegativeInt),
  outputTokens: Schema.NullOr(Schema.NonNegativeInt),
  totalTokens: Schema.NullOr(Schema.NonNegativeInt),
  cachedInputTokens: Schema.NullOr(Schema.NonNegativeInt)
}).annotations({ identifier: "TokenUsage" })
/** @since 0.1.0 @category models */
export type TokenUsage = typeof TokenUsage.Type

/**
 * Full-text capture of the request as sent (after redaction), cut at the byte bound when
 * `truncated`. `bytes` is the UTF-8 size of the redacted text before the cut.
 *
 * @since 0.1.0
 * @category models
 */
export const FullText = Schema.Struct({
  text: Schema.String,
  bytes: Schema.NonNegativeInt,
  truncated: Schema.Boolean
}).annotations({ identifier: "FullText" })
/** @since 0.1.0 @category models */
export type FullText = typeof FullText.Type

/**
 * One model call's snapshot. See the module documentation.
 *
 * @since 0.1.0
 * @category models
 */
export class PromptSnapshot extends Schema.Class<PromptSnapshot>("PromptSnapshot")(
  Schema.Struct({
    sessionId: SessionId,
    turn: Schema.NonNegativeInt,
    call: Schema.NonNegativeInt,
    mode: ProjectionMode,
    at: Schema.DateTimeUtc,
    model: Schema.NullOr(Schema.String),
    tools: Schema.Array(Schema.String),
    /** The memory scopes the call's projection read; `null` when the producer did not say. */
    scopes: Schema.optionalWith(Schema.NullOr(Schema.Array(Scope)), { default: () => null }),
    /** The overlay report the prefix was built with (an `overlay` blob); `null` when none was given. */
    overlay: Schema.optionalWith(Schema.NullOr(ContentHash), { default: () => null }),
    prefix: Schema.Struct({
      hash: Schema.NullOr(ContentHash),
      chars: Schema.NonNegativeInt,
      sections: Schema.Array(PrefixSectionRef)
    }),
    messages: Schema.Struct({
      input: Schema.NullOr(Schema.NonNegativeInt),
      count: Schema.NonNegativeInt
    }),
    projection: Schema.Struct({
      hash: Schema.NullOr(ContentHash),
      chars: Schema.NonNegativeInt,
      /** The budget in tokens; `null` for a char or unbounded budget (and in snapshots older than token budgets). */
      budgetTokens: Schema.optionalWith(Schema.NullOr(Schema.NonNegativeInt), { default: () => null }),
      /** The budget in chars; `null` for a token or unbounded budget. */
      budgetChars: Schema.NullOr(Schema.NonNegativeInt),
      sections: Schema.Array(SectionReport),
      shed: Schema.Array(ShedItem),
      withheld: Schema.Array(WithheldItem),
      suppressed: Schema.Array(SectionLabel)
    }),
    strippedFrames: Schema.Array(StrippedFrame),
    request: Schema.Struct({
      hash: ContentHash,
      chars: Schema.NonNegativeInt,
      messages: Schema.NonNegativeInt
    }),
    usage: Schema.NullOr(TokenUsage),
    fullText: Schema.NullOr(FullText),
    /**
     * Memories forgotten after the call whose text was removed from what this snapshot refers to:
     * a rebuild no longer hashes to `request.hash`, and says why.
     */
    redacted: Schema.optionalWith(Schema.Array(MemoryId), { default: () => [] })
  }).pipe(
    Schema.filter((s) => {
      if (s.messages.input !== null && s.messages.input >= s.messages.count) {
        return `messages.input (${s.messages.input}) must be a position below messages.count (${s.messages.count})`
      }
      if (s.strippedFrames.some((frame) => frame.seq >= s.messages.count)) {
        return "a stripped frame must lie inside the snapshot's messages"
      }
      return undefined
    })
  )
) {}

/**
 * Where a snapshot sits: session, turn, call.
 *
 * @since 0.1.0
 * @category models
 */
export interface SnapshotKey {
  readonly sessionId: string
  readonly turn: number
  readonly call: number
}

/**
 * The memory ids a snapshot says reached the model — prefix fragments first, then the projected
 * sections — each once, in that order.
 *
 * @since 0.1.0
 * @category attribution
 */
export const memoryIdsOf = (snapshot: PromptSnapshot): ReadonlyArray<string> => {
  const ids = new Set<string>()
  for (const section of snapshot.prefix.sections) {
    for (const fragment of section.fragments) for (const id of fragment.memoryIds) ids.add(id)
  }
  for (const section of snapshot.projection.sections) for (const id of section.memoryIds) ids.add(id)
  return [...ids]
}

const encodeEither = onFirstCall(() => Schema.encodeEither(PromptSnapshot))
const decodeEither = onFirstCall(() => Schema.decodeUnknownEither(PromptSnapshot))

/**
 * Encodes a snapshot to its JSON-safe form (ISO timestamp), or reports why it is invalid.
 *
 * @since 0.1.0
 * @category encoding
 */
export const encode = (
  snapshot: PromptSnapshot
): Either.Either<typeof PromptSnapshot.Encoded, ParseResult.ParseError> => encodeEither(snapshot)

/**
 * Decodes a stored, encoded snapshot.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStored = (encoded: unknown): Either.Either<PromptSnapshot, string> =>
  Either.mapLeft(decodeEither(encoded), (error) => error.message)
