/**
 * The creation and lifecycle rules every backend applies, written once: decoding inputs,
 * assigning ids and timestamps, and the record states that review, supersession and expiry
 * produce. Backends only persist what these functions return.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { IdGenerator } from "./IdGenerator.js"
import * as Rules from "./internal/fieldRules.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import { isInvalidated, MAX_LIMIT, NeighbourQuery } from "./MemoryQuery.js"
import {
  CorroboratingSession,
  type Corroboration,
  fromWriteInput,
  MAX_CORROBORATION_SESSIONS,
  MemoryRecord,
  MemoryWriteInput,
  type ReviewState,
  supersededReason,
  validityProblem
} from "./MemoryRecord.js"
import { DuplicateMemoryId, InvalidMemoryInput, InvalidMemoryQuery, MemoryConflict } from "./MemoryStoreError.js"

/**
 * One line naming the field that failed and why, e.g. `label: label must be at most 64 characters`.
 *
 * @since 0.1.0
 * @category decoding
 */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    // `String`, not `join` alone: a path holds a symbol key when an input has one, and `join` throws on it.
    .map((issue) => (issue.path.length > 0 ? `${issue.path.map(String).join(".")}: ${issue.message}` : issue.message))
    .join("; ")

/**
 * Decodes unknown input with `schema`, failing with {@link InvalidMemoryQuery}.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeQuery = <A, I>(schema: Schema.Schema<A, I>, input: unknown): Effect.Effect<A, InvalidMemoryQuery> =>
  Schema.decodeUnknown(schema)(input).pipe(
    Effect.mapError((error) => new InvalidMemoryQuery({ problem: describeParseError(error) }))
  )

const neighbourKeys: ReadonlySet<string> = new Set(Object.keys(NeighbourQuery.fields))
const positionKeys: ReadonlySet<string> = new Set(["scope", "thread", "turn"])

/** Whether `value` is a plain object whose own keys (enumerable or not, no symbols) are all in `keys`. */
const plainWithKeys = (value: unknown, keys: ReadonlySet<string>): value is Record<string, unknown> => {
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return false
  for (const key of Object.getOwnPropertyNames(value)) if (!keys.has(key)) return false
  return Object.getOwnPropertySymbols(value).length === 0
}

const optionalList = (value: unknown, rule: (item: unknown) => boolean): boolean =>
  value === undefined || (Array.isArray(value) && value.every(rule))

const optionalBoolean = (value: unknown): boolean => value === undefined || typeof value === "boolean"

/**
 * The neighbour query as the schema decodes it, for a plain object whose every field passes the
 * hand-written rules (`internal/fieldRules.ts`); `undefined` for anything else, which the schema
 * then decodes (and names the problem of). A projection's read names a position and an id per
 * hit, hundreds of them: the schema's walk of them cost a neighbour read a sixth of its time
 * (issue #25).
 */
const decodeNeighbourQueryQuickly = (input: unknown): NeighbourQuery | undefined => {
  if (!plainWithKeys(input, neighbourKeys)) return undefined
  const { around, exclude, limit, positions, window } = input
  const valid = Array.isArray(positions) &&
    optionalList(around, Rules.isMemoryId) &&
    positions.every((p) =>
      plainWithKeys(p, positionKeys) && Rules.isScope(p.scope) && Rules.isPosition(p.thread, p.turn)
    ) &&
    typeof window === "number" && Number.isSafeInteger(window) && window >= 0 &&
    optionalList(exclude, Rules.isMemoryId) &&
    (limit === undefined ||
      (typeof limit === "number" && Number.isSafeInteger(limit) && limit >= 1 && limit <= MAX_LIMIT)) &&
    optionalList(input.scopes, Rules.isScope) &&
    optionalList(input.kinds, Rules.isKind) &&
    optionalList(input.deliveryPolicies, Rules.isDeliveryPolicy) &&
    optionalList(input.reviewStates, Rules.isReviewState) &&
    optionalBoolean(input.deliverable) &&
    optionalBoolean(input.includeSuperseded) &&
    // An instant is decoded by the schema (the slow path).
    input.asOf === undefined
  if (!valid) return undefined
  // Copies, as the schema's decode gives: the caller's arrays stay the caller's.
  const decoded: Record<string, unknown> = {}
  for (const key of neighbourKeys) {
    const value = input[key]
    if (!(key in input)) continue
    decoded[key] = key === "positions"
      ? (value as ReadonlyArray<Record<string, unknown>>).map(({ scope, thread, turn }) => ({ scope, thread, turn }))
      : Array.isArray(value)
      ? [...value]
      : value
  }
  return decoded as NeighbourQuery
}

/**
 * Decodes a read of conversation neighbours (`MemoryStore.neighbours`), failing with
 * {@link InvalidMemoryQuery} naming the problem: the hand-written rules first, the schema for
 * anything they do not accept (a test holds the two to one answer).
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeNeighbourQuery = (input: unknown): Effect.Effect<NeighbourQuery, InvalidMemoryQuery> => {
  const quick = decodeNeighbourQueryQuickly(input)
  return quick !== undefined ? Effect.succeed(quick) : decodeQuery(NeighbourQuery, input)
}

const decodeInput = onFirstCall(() => Schema.decodeUnknownEither(MemoryWriteInput))

const inputFieldNames: ReadonlyArray<string> = Object.keys(MemoryWriteInput.fields)
const inputKeys: ReadonlySet<string> = new Set(inputFieldNames)

/** A write input's every field, `undefined` where the input has none. */
type InputFields = { readonly [K in keyof MemoryWriteInput]-?: MemoryWriteInput[K] | undefined }

/**
 * The input's fields, for a plain object whose every field passes the hand-written rules
 * (`internal/fieldRules.ts`); `undefined` for anything else, which the schema then decodes (and
 * names the problem of). Each field is read from the input once and the value read is the value
 * checked and kept: an accessor that answers differently the second time changes nothing. The
 * tags are copied before they are checked, so the caller's array stays the caller's.
 */
const readInputQuickly = (input: unknown): InputFields | undefined => {
  if (typeof input !== "object" || input === null || Object.getPrototypeOf(input) !== Object.prototype) return undefined
  // Any other key, enumerable or not, and any symbol key: the schema decides (and names it).
  for (const key of Object.getOwnPropertyNames(input)) if (!inputKeys.has(key)) return undefined
  if (Object.getOwnPropertySymbols(input).length > 0) return undefined
  const i = input as Record<string, unknown>
  const given = i.tags
  const fields = {
    id: i.id,
    content: i.content,
    kind: i.kind,
    label: i.label,
    tags: Array.isArray(given) ? given.slice() : given,
    sourceType: i.sourceType,
    scope: i.scope,
    deliveryPolicy: i.deliveryPolicy,
    epoch: i.epoch,
    position: i.position,
    validFrom: i.validFrom,
    validTo: i.validTo,
    expiresInDays: i.expiresInDays
  }
  const { expiresInDays } = fields
  const valid = Rules.isContent(fields.content) && Rules.isKind(fields.kind) &&
    (fields.id === undefined || Rules.isMemoryId(fields.id)) &&
    (fields.label === undefined || Rules.isLabel(fields.label)) &&
    (fields.tags === undefined || Rules.isTags(fields.tags)) &&
    (fields.sourceType === undefined || Rules.isSourceType(fields.sourceType)) &&
    (fields.scope === undefined || Rules.isScope(fields.scope)) &&
    (fields.deliveryPolicy === undefined || Rules.isDeliveryPolicy(fields.deliveryPolicy)) &&
    (fields.epoch === undefined || Rules.isOneLineText(fields.epoch)) &&
    // A position and world time are decoded by the schema (the slow path).
    fields.position === undefined && fields.validFrom === undefined && fields.validTo === undefined &&
    (expiresInDays === undefined || (typeof expiresInDays === "number" && expiresInDays > 0 && expiresInDays <= 36_500))
  return valid ? fields as InputFields : undefined
}

/** The fields as the schema's decode gives them: a key for each key the input has. */
const asDecoded = (input: object, fields: InputFields): MemoryWriteInput => {
  const decoded: Record<string, unknown> = {}
  for (const key of inputFieldNames) if (key in input) decoded[key] = fields[key as keyof InputFields]
  return decoded as MemoryWriteInput
}

/**
 * The inputs decoded, the first invalid one failing the batch with its index: each as `keep`
 * makes it of its fields when the hand-written rules accept it, the schema's decode otherwise.
 */
const decodeEach = (
  inputs: ReadonlyArray<unknown>,
  keep: (input: object, fields: InputFields) => MemoryWriteInput
): Effect.Effect<ReadonlyArray<MemoryWriteInput>, InvalidMemoryInput> =>
  Effect.suspend(() => {
    // A plain loop: batches run to tens of thousands of inputs and this is the write hot path.
    const kept: Array<MemoryWriteInput> = []
    for (let index = 0; index < inputs.length; index++) {
      const input = inputs[index]
      const fields = readInputQuickly(input)
      if (fields !== undefined) {
        kept.push(keep(input as object, fields))
        continue
      }
      const result = decodeInput(input, { onExcessProperty: "error" })
      if (Either.isLeft(result)) {
        return Effect.fail(new InvalidMemoryInput({ index, problem: describeParseError(result.left) }))
      }
      const problem = validityProblem(result.right.validFrom, result.right.validTo)
      if (problem !== undefined) return Effect.fail(new InvalidMemoryInput({ index, problem }))
      kept.push(result.right)
    }
    return Effect.succeed(kept)
  })

// The record's own field schemas, checked on the decoded (type) side.
const RecordFields = Schema.Struct(MemoryRecord.fields)
const isRecordFields = onFirstCall(() => Schema.is(RecordFields))

// The same rules, hand-written, for the fields that pass them (nearly all); anything refused goes
// to the schema above, which keeps the last word.
const passesFieldRules = (fields: Record<string, unknown>): boolean =>
  Rules.isMemoryId(fields.id) && Rules.isContent(fields.content) && Rules.isKind(fields.kind) &&
  Rules.isSourceType(fields.sourceType) && Rules.isDeliveryPolicy(fields.deliveryPolicy) &&
  Rules.isReviewState(fields.reviewState) && Rules.isScope(fields.scope) && Rules.isTags(fields.tags) &&
  (fields.label === undefined || Rules.isLabel(fields.label)) &&
  (fields.epoch === undefined || Rules.isOneLineText(fields.epoch)) &&
  (fields.invalidationReason === undefined || Rules.isFreeText(fields.invalidationReason)) &&
  (fields.domain === undefined || Rules.isFreeText(fields.domain)) &&
  (fields.supersededBy === undefined || Rules.isMemoryId(fields.supersededBy)) &&
  (fields.supersedes === undefined || Rules.isMemoryId(fields.supersedes)) &&
  (fields.position === undefined ||
    Rules.isPosition((fields.position as { thread?: unknown }).thread, (fields.position as { turn?: unknown }).turn)) &&
  (fields.corroboration === undefined || Rules.isCorroboration(fields.corroboration))

/**
 * Whether decoded record fields (a `MemoryRecord.recordDraft` filled in by a row codec, say)
 * satisfy every field rule of the record schema, so `MemoryRecord.unsafeFromDraft` may finish
 * them. Hand-written checks first (a few regular-expression tests), the schema for whatever they
 * refuse, so the schema keeps the last word.
 *
 * @since 0.1.0
 * @category validation
 */
export const satisfiesFieldRules = (fields: Record<string, unknown>): boolean =>
  passesFieldRules(fields) || isRecordFields(fields)

const decodeRecord = onFirstCall(() => Schema.decodeUnknownEither(MemoryRecord))
const encodeRecord = onFirstCall(() => Schema.encodeSync(MemoryRecord))

/**
 * Decodes a batch of write inputs, failing on the first invalid one with its index.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeInputs = (
  inputs: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<MemoryWriteInput>, InvalidMemoryInput> => decodeEach(inputs, asDecoded)

/**
 * Fails with {@link DuplicateMemoryId} if an id repeats within the batch.
 *
 * @since 0.1.0
 * @category validation
 */
export const ensureDistinctIds = (ids: ReadonlyArray<string>): Effect.Effect<void, DuplicateMemoryId> => {
  const seen = new Set<string>()
  for (const id of ids) {
    if (seen.has(id)) return Effect.fail(new DuplicateMemoryId({ id }))
    seen.add(id)
  }
  return Effect.void
}

/**
 * Turns write inputs into the records to insert: decoded, ids assigned (caller's id or the
 * `IdGenerator`'s), trust-derived review state. The batch's `createdAt`s are the clock's instant
 * plus the input's index in milliseconds, so the order the caller wrote them in is the order every
 * backend lists them in, newest last written (decision 0173). Repeated ids in the batch fail it.
 *
 * @since 0.1.0
 * @category creation
 */
export const prepareRecords = (
  inputs: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<MemoryRecord>, InvalidMemoryInput | DuplicateMemoryId> =>
  Effect.gen(function*() {
    // The fields as read, not a decoded copy of them: the record copies each one (issue #25).
    const decoded = yield* decodeEach(inputs, (_, fields) => fields as MemoryWriteInput)
    const ids = yield* IdGenerator
    const at = DateTime.toEpochMillis(yield* DateTime.now)
    const records: Array<MemoryRecord> = []
    for (let index = 0; index < decoded.length; index++) {
      const input = decoded[index]!
      const id = input.id !== undefined ? input.id : yield* ids.next
      records.push(fromWriteInput(input, { id, now: DateTime.unsafeMake(at + index) }))
    }
    yield* ensureDistinctIds(records.map((r) => r.id))
    return records
  })

/**
 * Re-validates fully formed records before a restore (a record built with validation disabled,
 * or by hand, is checked here), failing with the index of the first bad one.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateRecords = (
  records: ReadonlyArray<MemoryRecord>
): Effect.Effect<ReadonlyArray<MemoryRecord>, InvalidMemoryInput | DuplicateMemoryId> =>
  Effect.gen(function*() {
    const valid = yield* Effect.forEach(records, (record, index) =>
      Either.match(
        Either.flatMap(
          Either.try({ try: () => encodeRecord(record), catch: (e) => e as ParseResult.ParseError }),
          (encoded) => decodeRecord(encoded)
        ),
        {
          onLeft: (error) =>
            Effect.fail(
              new InvalidMemoryInput({
                index,
                problem: ParseResult.isParseError(error) ? describeParseError(error) : String(error)
              })
            ),
          onRight: Effect.succeed
        }
      ))
    yield* ensureDistinctIds(valid.map((r) => r.id))
    return valid
  })

/**
 * Fails with {@link MemoryConflict} when the record is already superseded or invalidated.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const ensureNotInvalidated = (record: MemoryRecord): Effect.Effect<void, MemoryConflict> =>
  isInvalidated(record)
    ? Effect.fail(
      new MemoryConflict({
        id: record.id,
        reason: `it is already invalidated (${record.invalidationReason ?? "no reason recorded"})`
      })
    )
    : Effect.void

/**
 * Builds the successor that supersedes `original`: `supersedes` set, scope defaulting to the
 * original's. Fails with {@link MemoryConflict} when the original is already invalidated.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const prepareSuccessor = (
  original: MemoryRecord,
  input: unknown
): Effect.Effect<MemoryRecord, InvalidMemoryInput | MemoryConflict> =>
  Effect.gen(function*() {
    yield* ensureNotInvalidated(original)
    const [decoded] = yield* decodeInputs([input])
    const ids = yield* IdGenerator
    const at = yield* DateTime.now
    const id = decoded!.id ?? (yield* ids.next)
    return fromWriteInput(decoded!, { id, now: at, scope: original.scope, supersedes: original.id })
  })

/**
 * The original as its successor leaves it: invalidated at the successor's creation, with
 * reason `superseded_by:<successorId>` and the `supersededBy` link.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const invalidatedBy = (original: MemoryRecord, successor: MemoryRecord): MemoryRecord =>
  new MemoryRecord(
    {
      ...original,
      invalidatedAt: successor.createdAt,
      invalidationReason: supersededReason(successor.id),
      supersededBy: successor.id
    },
    { disableValidation: true }
  )

/**
 * The record with a new review state.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const withReviewState = (record: MemoryRecord, reviewState: ReviewState): MemoryRecord =>
  new MemoryRecord({ ...record, reviewState }, { disableValidation: true })

/**
 * The record expired at `at`, unless it already expires earlier.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const expiredAt = (record: MemoryRecord, at: DateTime.Utc): MemoryRecord =>
  record.expiresAt !== undefined && DateTime.lessThanOrEqualTo(record.expiresAt, at)
    ? record
    : new MemoryRecord({ ...record, expiresAt: at }, { disableValidation: true })

/**
 * The record corroborated once more at `at` (decision 0174): its count up by one, `session` (when
 * given) added to its sessions unless named already — the oldest dropped past
 * `MemoryRecord.MAX_CORROBORATION_SESSIONS` — and `lastAt` set. Nothing else changes. Pure: every
 * backend stores what this returns.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const corroborated = (
  record: MemoryRecord,
  options: { readonly session?: string | undefined; readonly at: DateTime.Utc }
): MemoryRecord => {
  const before = record.corroboration
  const known = before?.sessions ?? []
  const sessions = options.session === undefined || known.includes(options.session)
    ? known
    : [...known, options.session].slice(-MAX_CORROBORATION_SESSIONS)
  const corroboration: Corroboration = {
    count: Math.min((before?.count ?? 0) + 1, 2_147_483_647),
    sessions,
    lastAt: options.at
  }
  return new MemoryRecord({ ...record, corroboration }, { disableValidation: true })
}

const isCorroboratingSession = onFirstCall(() => Schema.is(CorroboratingSession))

/**
 * Checks the session a corroboration names, failing with {@link InvalidMemoryInput} (index 0)
 * when it is not a session id.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkCorroboratingSession = (session: unknown): Effect.Effect<string | undefined, InvalidMemoryInput> =>
  session === undefined || isCorroboratingSession(session)
    ? Effect.succeed(session as string | undefined)
    : Effect.fail(
      new InvalidMemoryInput({
        index: 0,
        problem:
          "session: a corroborating session is a session id: 1-200 characters, no whitespace or control characters"
      })
    )

/**
 * Decodes a stored, already-encoded record (as a backend reads it back), or reports why not.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeStoredRecord = (encoded: unknown): Either.Either<MemoryRecord, ParseResult.ParseError> =>
  decodeRecord(encoded)

/**
 * Encodes a record to its JSON-safe form (ISO timestamps).
 *
 * @since 0.1.0
 * @category encoding
 */
export const encodeStoredRecord = (record: MemoryRecord): typeof MemoryRecord.Encoded => encodeRecord(record)
