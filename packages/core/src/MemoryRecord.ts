/**
 * The one memory record every Engram store keeps, and the input callers pass to create one.
 *
 * A record carries what was observed (content, kind, label, tags) and the attributes stamped at
 * creation (provenance, scope, delivery policy, epoch). Review state and lifecycle change only
 * through named store operations, never by rewriting content.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"
import { isFlagged } from "./InstructionScreen.js"

/**
 * What a memory *is*.
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryKind = Schema.Literal(
  "profile",
  "standing",
  "fact",
  "decision",
  "note",
  "episode",
  "reference",
  "legacy"
)
/** @since 0.1.0 @category models */
export type MemoryKind = typeof MemoryKind.Type

/**
 * Who wrote a memory and how (provenance).
 *
 * @since 0.1.0
 * @category models
 */
export const SourceType = Schema.Literal(
  "operator",
  "extracted",
  "harvest",
  "conversation",
  "ingest",
  "background_report",
  "unknown"
)
/** @since 0.1.0 @category models */
export type SourceType = typeof SourceType.Type

/**
 * How much the model should trust a memory: 3 operator, 2 agent-derived, 1 external or unknown.
 *
 * @since 0.1.0
 * @category models
 */
export const TrustTier = Schema.Literal(1, 2, 3)
/** @since 0.1.0 @category models */
export type TrustTier = typeof TrustTier.Type

/**
 * When a memory enters the prompt: every turn, on a retrieval match, or only through a tool call.
 *
 * @since 0.1.0
 * @category models
 */
export const DeliveryPolicy = Schema.Literal("always", "retrieved", "on_demand")
/** @since 0.1.0 @category models */
export type DeliveryPolicy = typeof DeliveryPolicy.Type

/**
 * Whether an operator has confirmed a memory. Review state is the approval gate for composition.
 *
 * @since 0.1.0
 * @category models
 */
export const ReviewState = Schema.Literal("confirmed", "pending", "rejected")
/** @since 0.1.0 @category models */
export type ReviewState = typeof ReviewState.Type

// Line and control characters (C0, DEL, C1, and the Unicode line/paragraph separators).
const controlCharacter = /[\p{Cc}\u2028\u2029]/u

// A UTF-16 code unit of a surrogate pair standing alone: with the `u` flag only unpaired ones match.
const loneSurrogate = /[\uD800-\uDFFF]/u

/**
 * The text rule every stored string follows, on every backend: no NUL (PostgreSQL cannot store
 * it in text) and well-formed Unicode (no unpaired surrogate, which SQLite would replace with
 * U+FFFD and PostgreSQL refuse). Such text is refused, never rewritten: see decision 0025.
 *
 * @since 0.1.0
 * @category validation
 */
export const textProblem = (s: string): string | undefined =>
  s.includes("\u0000")
    ? "must not contain NUL (U+0000)"
    : loneSurrogate.test(s)
    ? "must be well-formed Unicode (it has an unpaired surrogate)"
    : undefined

const wellFormed = (what: string) =>
  Schema.filter<typeof Schema.String>((s) => {
    const problem = textProblem(s)
    return problem === undefined ? undefined : `${what} ${problem}`
  })

const noControlCharacters = (what: string) =>
  Schema.filter<typeof Schema.String>((s) =>
    controlCharacter.test(s) ? `${what} must not contain control characters or line breaks` : undefined
  )

/**
 * A record id. Ids are ASCII so that every backend orders them the same way by raw comparison
 * (JavaScript code units, SQLite BINARY and PostgreSQL `COLLATE "C"` agree on ASCII).
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, {
    message: () => "a memory id is 1-128 ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or digit"
  }),
  Schema.annotations({ identifier: "MemoryId" })
)
/** @since 0.1.0 @category models */
export type MemoryId = typeof MemoryId.Type

/**
 * Where a memory applies: `global`, `project:<id>` or `session:<id>`.
 *
 * @since 0.1.0
 * @category models
 */
export const Scope = Schema.String.pipe(
  Schema.pattern(/^(global|(project|session):[^\s\p{Cc}]{1,200})$/u, {
    message: () => "a scope is 'global', 'project:<id>' or 'session:<id>' (the id has no spaces or control characters)"
  }),
  wellFormed("a scope"),
  Schema.annotations({ identifier: "Scope" })
)
/** @since 0.1.0 @category models */
export type Scope = typeof Scope.Type

/**
 * How specific a scope is: `session:<id>` 2, `project:<id>` 1, `global` 0. Where the scopes a
 * request reads disagree about one identity slot, the most specific one wins (decision 0056). Pure.
 *
 * @since 0.1.0
 * @category models
 */
export const scopeSpecificity = (scope: Scope): number =>
  scope.startsWith("session:") ? 2 : scope.startsWith("project:") ? 1 : 0

/**
 * A name for the thing learned ("name", "timezone"): at most 64 characters, on one line.
 *
 * @since 0.1.0
 * @category models
 */
export const Label = Schema.String.pipe(
  Schema.filter((s) => (s.trim().length === 0 ? "label must not be blank" : undefined)),
  Schema.maxLength(64, { message: () => "label must be at most 64 characters" }),
  noControlCharacters("label"),
  wellFormed("label"),
  Schema.annotations({ identifier: "Label" })
)

/**
 * The longest a tag may be, in characters. Part of what a tag is (a short handle, like a label),
 * so it is fixed: the CLI's flags and the tools' JSON Schemas carry it. How many tags a record may
 * carry is a setting, `MemoryLimits.maxTags`.
 *
 * @since 0.1.0
 * @category constants
 */
export const TAG_MAX_CHARS = 64

/**
 * A free-form tag: non-empty, at most {@link TAG_MAX_CHARS} characters, on one line.
 *
 * @since 0.1.0
 * @category models
 */
export const Tag = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a tag must not be empty" }),
  Schema.maxLength(TAG_MAX_CHARS, {
    message: () => `a tag must be at most ${TAG_MAX_CHARS} characters (MemoryRecord.TAG_MAX_CHARS)`
  }),
  noControlCharacters("a tag"),
  wellFormed("a tag")
)

/**
 * Where a record written from a conversation sat: the conversation's thread (a session id, or a
 * conversation's own name: at most 200 characters, on one line) and the turn's position in it
 * (0 for the first turn). Recall ranks a record higher when turns next to it in the same thread
 * match the question too (see `Bm25`).
 *
 * @since 0.1.0
 * @category models
 */
export const ConversationPosition = Schema.Struct({
  thread: Schema.String.pipe(
    Schema.minLength(1, { message: () => "a thread must not be empty" }),
    Schema.maxLength(200, { message: () => "a thread must be at most 200 characters" }),
    noControlCharacters("a thread"),
    wellFormed("a thread")
  ),
  turn: Schema.Int.pipe(
    Schema.between(0, 2_147_483_647, { message: () => "a turn must be an integer from 0 to 2147483647" })
  )
}).annotations({ identifier: "ConversationPosition" })
/** @since 0.1.0 @category models */
export type ConversationPosition = typeof ConversationPosition.Type

/**
 * The prose of a memory: not blank, no NUL, well-formed Unicode. Its length is bounded by
 * `MemoryLimits.maxContentChars`, a setting, checked by the store contract.
 *
 * @since 0.1.0
 * @category models
 */
export const Content = Schema.String.pipe(
  Schema.filter((s) => (s.trim().length === 0 ? "content must not be empty" : undefined)),
  wellFormed("content"),
  Schema.annotations({ identifier: "Content" })
)

const OneLineText = Schema.String.pipe(Schema.minLength(1), noControlCharacters("this field"), wellFormed("this field"))
const FreeText = Schema.String.pipe(wellFormed("this field"))

/**
 * How many sessions a {@link Corroboration} names at most: the newest, first seen oldest first.
 * The count keeps counting past it.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_CORROBORATION_SESSIONS = 16

/**
 * A session a corroboration came from: its id, 1-200 characters with no whitespace or control
 * characters (the rule of `SessionStore.SessionId`).
 *
 * @since 0.1.0
 * @category models
 */
export const CorroboratingSession = Schema.String.pipe(
  Schema.pattern(/^[^\s\p{Cc}]{1,200}$/u, {
    message: () => "a corroborating session is a session id: 1-200 characters, no whitespace or control characters"
  }),
  wellFormed("a corroborating session"),
  Schema.annotations({ identifier: "CorroboratingSession" })
)

/**
 * Restatements a record has had (decision 0174): how many times its value was said again
 * (`count`), the sessions it was said in (distinct, oldest first, at most
 * {@link MAX_CORROBORATION_SESSIONS}: the newest are kept) and when it was last said. Nothing else
 * about the record changes: the restatement itself is not written (decision 0171).
 *
 * @since 0.1.0
 * @category models
 */
export const Corroboration = Schema.Struct({
  count: Schema.Int.pipe(
    Schema.between(1, 2_147_483_647, { message: () => "a corroboration count is an integer from 1 to 2147483647" })
  ),
  sessions: Schema.Array(CorroboratingSession).pipe(
    Schema.maxItems(MAX_CORROBORATION_SESSIONS, {
      message: () => `a corroboration names at most ${MAX_CORROBORATION_SESSIONS} sessions`
    })
  ),
  lastAt: Schema.DateTimeUtc
}).annotations({ identifier: "Corroboration" })
/** @since 0.1.0 @category models */
export type Corroboration = typeof Corroboration.Type

/**
 * A stored memory.
 *
 * @since 0.1.0
 * @category models
 */
export class MemoryRecord extends Schema.Class<MemoryRecord>("MemoryRecord")({
  id: MemoryId,
  content: Content,
  kind: MemoryKind,
  label: Schema.optional(Label),
  tags: Schema.Array(Tag),
  sourceType: SourceType,
  scope: Scope,
  deliveryPolicy: DeliveryPolicy,
  reviewState: ReviewState,
  createdAt: Schema.DateTimeUtc,
  epoch: Schema.optional(OneLineText),
  expiresAt: Schema.optional(Schema.DateTimeUtc),
  invalidatedAt: Schema.optional(Schema.DateTimeUtc),
  invalidationReason: Schema.optional(FreeText),
  supersededBy: Schema.optional(MemoryId),
  supersedes: Schema.optional(MemoryId),
  domain: Schema.optional(FreeText),
  position: Schema.optional(ConversationPosition),
  validFrom: Schema.optional(Schema.DateTimeUtc),
  validTo: Schema.optional(Schema.DateTimeUtc),
  corroboration: Schema.optional(Corroboration)
}) {
  /** Derived from provenance, never stored, so it can never disagree with `sourceType`. */
  get trustTier(): TrustTier {
    return trustTierOf(this.sourceType)
  }

  /**
   * Whether the poisoning screen flags this record (`InstructionScreen`): its content or label
   * reads as an instruction to the agent, or the second screen marked it at creation. Derived,
   * never stored.
   */
  get flagged(): boolean {
    return isFlagged(this)
  }
}

/**
 * An instant a caller passes: a `DateTime.Utc`, or its ISO 8601 text where the input is JSON.
 *
 * @since 0.1.0
 * @category models
 */
export const Instant = Schema.Union(Schema.DateTimeUtcFromSelf, Schema.DateTimeUtc).annotations({
  identifier: "Instant",
  // Over JSON (the HTTP API's OpenAPI document) an instant is only ever its ISO 8601 text.
  jsonSchema: { type: "string", format: "date-time", description: "an ISO 8601 instant" }
})

/**
 * World time (decision 0173): when the fact a record states holds, apart from when it was written
 * (`createdAt`). Either bound may be unknown (absent), and an unknown bound is open. `validFrom`
 * must come before `validTo`. Pure.
 *
 * @since 0.1.0
 * @category validation
 */
export const validityProblem = (
  validFrom: DateTime.Utc | undefined,
  validTo: DateTime.Utc | undefined
): string | undefined =>
  validFrom !== undefined && validTo !== undefined &&
    DateTime.toEpochMillis(validFrom) >= DateTime.toEpochMillis(validTo)
    ? "validFrom must be before validTo"
    : undefined

/**
 * What callers pass to create a memory. Creation stamps the rest: trust tier and review state
 * from `sourceType` (default `unknown`), `createdAt` from the clock, `expiresAt` from
 * `expiresInDays`, scope `global` and delivery policy `retrieved` unless given.
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryWriteInput = Schema.Struct({
  id: Schema.optional(MemoryId),
  content: Content,
  kind: MemoryKind,
  label: Schema.optional(Label),
  tags: Schema.optional(Schema.Array(Tag)),
  sourceType: Schema.optional(SourceType),
  scope: Schema.optional(Scope),
  deliveryPolicy: Schema.optional(DeliveryPolicy),
  epoch: Schema.optional(OneLineText),
  position: Schema.optional(ConversationPosition),
  validFrom: Schema.optional(Instant),
  validTo: Schema.optional(Instant),
  expiresInDays: Schema.optional(
    Schema.Number.pipe(
      Schema.positive({ message: () => "expiresInDays must be a positive number of days" }),
      Schema.lessThanOrEqualTo(36_500, { message: () => "expiresInDays must be at most 36500" })
    )
  )
}).annotations({ identifier: "MemoryWriteInput" })
/** @since 0.1.0 @category models */
export type MemoryWriteInput = typeof MemoryWriteInput.Type

/**
 * The trust tier a provenance earns.
 *
 * @since 0.1.0
 * @category trust
 */
export const trustTierOf = (sourceType: SourceType): TrustTier => {
  switch (sourceType) {
    case "operator":
      return 3
    case "extracted":
    case "harvest":
    case "conversation":
    case "background_report":
      return 2
    case "ingest":
    case "unknown":
      return 1
  }
}

/**
 * The review state a new record starts in: operator writes are confirmed; everything else —
 * agent-derived, external, unknown — waits for an operator.
 *
 * @since 0.1.0
 * @category trust
 */
export const initialReviewState = (sourceType: SourceType): ReviewState =>
  trustTierOf(sourceType) === 3 ? "confirmed" : "pending"

const DAY_MS = 86_400_000

/**
 * The review state a new record starts in, given its text too: what {@link initialReviewState}
 * gives, except that a record the poisoning screen flags (`InstructionScreen`) starts `pending`
 * whatever its source — no write path, an operator's included, stores an instruction to the
 * agent as confirmed on arrival.
 *
 * @since 0.1.0
 * @category trust
 */
export const initialReviewStateOf = (
  input: {
    readonly sourceType?: SourceType | undefined
    readonly content: string
    readonly label?: string | undefined
    readonly tags?: ReadonlyArray<string> | undefined
  }
): ReviewState => {
  const state = initialReviewState(input.sourceType ?? "unknown")
  // Only a write that would be confirmed is screened here: every other write starts pending anyway
  // (and the screen runs again wherever the record is read, so its verdict is never stored).
  return state === "confirmed" && isFlagged(input) ? "pending" : state
}

type RecordFields = ConstructorParameters<typeof MemoryRecord>[0]

const hasConstructorDefault = (field: Schema.Struct.Field): boolean =>
  Schema.isPropertySignature(field) &&
  (field.ast._tag === "PropertySignatureDeclaration" ? field.ast.defaultValue : field.ast.to.defaultValue) !==
    undefined

// A record whose fields are known valid (a new record, a stored row that passed its checks) is built
// as `new MemoryRecord(fields, { disableValidation: true })` builds it — the class constructor copies
// the fields onto the instance — without the constructor's walk of every schema field for
// defaults on each call, which cost ten times the copy: a twentieth of a batched write, three
// quarters of reading a row back (issue #25, decision 0110). No field of the record has a
// constructor default; should one be added, the constructor is taken again.
const constructorDefaults = Object.values(MemoryRecord.fields).some(hasConstructorDefault)

/**
 * The fields of a record being built, assigned one by one in the schema's field order (the order a
 * record's keys print in).
 *
 * @since 0.1.0
 * @category constructors
 */
export type RecordDraft = { -readonly [K in keyof RecordFields]: RecordFields[K] }

/**
 * An empty {@link RecordDraft}: the instance itself unless the class constructor has defaults to
 * fill in. Finish it with {@link unsafeFromDraft}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const recordDraft = (): RecordDraft =>
  (constructorDefaults ? {} : Object.create(MemoryRecord.prototype)) as RecordDraft

/**
 * The record a {@link recordDraft} holds. Unsafe: nothing is checked — the caller has checked
 * every field against the record's rules (a write's decoded input, a stored row's field checks).
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeFromDraft = (draft: RecordDraft): MemoryRecord =>
  constructorDefaults ? new MemoryRecord(draft, { disableValidation: true }) : draft as MemoryRecord

/**
 * Builds the record a write creates, stamping everything creation decides.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromWriteInput = (
  input: MemoryWriteInput,
  options: { readonly id: MemoryId; readonly now: DateTime.Utc; readonly scope?: Scope; readonly supersedes?: MemoryId }
): MemoryRecord => {
  const fields = recordDraft()
  fields.id = options.id
  fields.content = input.content
  fields.kind = input.kind
  if (input.label !== undefined) fields.label = input.label
  fields.tags = input.tags ?? []
  fields.sourceType = input.sourceType ?? "unknown"
  fields.scope = input.scope ?? options.scope ?? "global"
  fields.deliveryPolicy = input.deliveryPolicy ?? "retrieved"
  fields.reviewState = initialReviewStateOf(input)
  fields.createdAt = options.now
  if (input.epoch !== undefined) fields.epoch = input.epoch
  if (input.expiresInDays !== undefined) {
    fields.expiresAt = DateTime.unsafeMake(
      DateTime.toEpochMillis(options.now) + Math.round(input.expiresInDays * DAY_MS)
    )
  }
  if (options.supersedes !== undefined) fields.supersedes = options.supersedes
  if (input.position !== undefined) fields.position = input.position
  if (input.validFrom !== undefined) fields.validFrom = input.validFrom
  if (input.validTo !== undefined) fields.validTo = input.validTo
  return unsafeFromDraft(fields)
}

/**
 * The invalidation reason a supersession writes: `superseded_by:<newId>`.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const supersededReason = (successorId: MemoryId): string => `superseded_by:${successorId}`
