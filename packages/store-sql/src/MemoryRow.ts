/**
 * The memory record as a table row, the same for every SQL backend: one column per field, in
 * {@link COLUMNS} order, timestamps as epoch milliseconds, tags as a JSON array in text, absent
 * optional fields as `null`.
 *
 * Reading a row applies every rule of the record schema. Rows that pass take a fast path (the
 * record's field checks on decoded values); the rest go through the row schema, which names the
 * field that failed. A backend whose driver returns a column in another form (a BIGINT as a
 * string, say) converts it before decoding.
 *
 * @since 0.1.0
 */
import { MemoryRecord as Records, MemoryWrite } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { onFirstCall } from "./internal/onFirstCall.js"
import * as StoredRows from "./StoredRows.js"

type MemoryRecord = Records.MemoryRecord
const { DeliveryPolicy, MemoryKind, ReviewState, SourceType } = Records

/**
 * The record columns, in bind order.
 *
 * @since 0.1.0
 * @category constants
 */
export const COLUMNS = [
  "id",
  "content",
  "kind",
  "label",
  "tags",
  "source_type",
  "scope",
  "delivery_policy",
  "review_state",
  "created_at",
  "epoch",
  "expires_at",
  "invalidated_at",
  "invalidation_reason",
  "superseded_by",
  "supersedes",
  "domain",
  "thread",
  "turn",
  "valid_from",
  "valid_to",
  "corroborations",
  "corroboration_sessions",
  "corroborated_at"
] as const

/**
 * A record column.
 *
 * @since 0.1.0
 * @category models
 */
export type Column = typeof COLUMNS[number]

/**
 * The largest epoch-millisecond value a JavaScript `Date` holds; its negation is the smallest.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_EPOCH_MILLIS = 8_640_000_000_000_000

/** An epoch-millisecond column: an integer within the range a JavaScript `Date` can hold. */
const EpochMillis = Schema.Int.pipe(Schema.between(-MAX_EPOCH_MILLIS, MAX_EPOCH_MILLIS))

/**
 * A stored row: column types and literal values are checked here; everything else a record
 * requires (id and scope patterns, content and tag rules) is checked by `MemoryRecord`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const MemoryRow = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  kind: MemoryKind,
  label: Schema.NullOr(Schema.String),
  tags: Schema.parseJson(Schema.Array(Schema.String)),
  source_type: SourceType,
  scope: Schema.String,
  delivery_policy: DeliveryPolicy,
  review_state: ReviewState,
  created_at: EpochMillis,
  epoch: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(EpochMillis),
  invalidated_at: Schema.NullOr(EpochMillis),
  invalidation_reason: Schema.NullOr(Schema.String),
  superseded_by: Schema.NullOr(Schema.String),
  supersedes: Schema.NullOr(Schema.String),
  domain: Schema.NullOr(Schema.String),
  thread: Schema.NullOr(Schema.String),
  turn: Schema.NullOr(Schema.Number),
  valid_from: Schema.NullOr(EpochMillis),
  valid_to: Schema.NullOr(EpochMillis),
  corroborations: Schema.NullOr(Schema.Number),
  corroboration_sessions: Schema.NullOr(Schema.parseJson(Schema.Array(Schema.String))),
  corroborated_at: Schema.NullOr(EpochMillis)
})

/**
 * A row as written: the values {@link toRow} binds, tags as JSON text.
 *
 * @since 0.1.0
 * @category models
 */
export type Row = typeof MemoryRow.Encoded

const decodeRowStruct = onFirstCall(() => Schema.decodeUnknownEither(MemoryRow))

const iso = (millis: number): string => new Date(millis).toISOString()

/**
 * Decodes a row through the row schema and then the record schema alone: the reference the fast
 * path of {@link fromRow} must agree with.
 *
 * @since 0.1.0
 * @category decoding
 */
export const fromRowSlowly = (row: unknown): Either.Either<MemoryRecord, string> =>
  Either.flatMap(decodeRowStruct(row), (row) =>
    MemoryWrite.decodeStoredRecord({
      id: row.id,
      content: row.content,
      kind: row.kind,
      ...(row.label !== null ? { label: row.label } : {}),
      tags: row.tags,
      sourceType: row.source_type,
      scope: row.scope,
      deliveryPolicy: row.delivery_policy,
      reviewState: row.review_state,
      createdAt: iso(row.created_at),
      ...(row.epoch !== null ? { epoch: row.epoch } : {}),
      ...(row.expires_at !== null ? { expiresAt: iso(row.expires_at) } : {}),
      ...(row.invalidated_at !== null ? { invalidatedAt: iso(row.invalidated_at) } : {}),
      ...(row.invalidation_reason !== null ? { invalidationReason: row.invalidation_reason } : {}),
      ...(row.superseded_by !== null ? { supersededBy: row.superseded_by } : {}),
      ...(row.supersedes !== null ? { supersedes: row.supersedes } : {}),
      ...(row.domain !== null ? { domain: row.domain } : {}),
      ...(row.thread !== null || row.turn !== null ? { position: { thread: row.thread, turn: row.turn } } : {}),
      ...(row.valid_from !== null ? { validFrom: iso(row.valid_from) } : {}),
      ...(row.valid_to !== null ? { validTo: iso(row.valid_to) } : {}),
      ...(row.corroborations !== null || row.corroborated_at !== null || row.corroboration_sessions !== null
        ? {
          corroboration: {
            count: row.corroborations,
            sessions: row.corroboration_sessions ?? [],
            lastAt: row.corroborated_at === null ? null : iso(row.corroborated_at)
          }
        }
        : {})
    })).pipe(Either.mapLeft(MemoryWrite.describeParseError))

const isEpochMillis = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && Math.abs(value) <= MAX_EPOCH_MILLIS

/** A JSON array column (tags, corroborating sessions) read back; `undefined` when it is not JSON. */
const parseTags = (value: unknown): unknown => {
  if (typeof value !== "string") return undefined
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

/** The fast path of {@link fromRow}: `undefined` when anything is off, and the full decode then says what. */
const fromRowQuickly = (row: Readonly<Record<string, unknown>>): MemoryRecord | undefined => {
  const { created_at, expires_at, invalidated_at } = row
  // Rows read before world time existed have neither column (undefined): unknown bounds.
  const valid_from = row.valid_from ?? null
  const valid_to = row.valid_to ?? null
  // Rows read before corroboration existed have none of its columns: never corroborated.
  const corroborations = typeof row.corroborations === "bigint"
    ? Number(row.corroborations)
    : row.corroborations ?? null
  const corroborated_at = row.corroborated_at ?? null
  const corroboration_sessions = row.corroboration_sessions ?? null
  if (!isEpochMillis(created_at)) return undefined
  if (expires_at !== null && !isEpochMillis(expires_at)) return undefined
  if (invalidated_at !== null && !isEpochMillis(invalidated_at)) return undefined
  if (valid_from !== null && !isEpochMillis(valid_from)) return undefined
  if (valid_to !== null && !isEpochMillis(valid_to)) return undefined
  // Checked below before it becomes a record; a draft that fails is dropped.
  const fields = Records.recordDraft() as unknown as Record<string, unknown>
  fields.id = row.id
  fields.content = row.content
  fields.kind = row.kind
  fields.tags = parseTags(row.tags)
  fields.sourceType = row.source_type
  fields.scope = row.scope
  fields.deliveryPolicy = row.delivery_policy
  fields.reviewState = row.review_state
  fields.createdAt = DateTime.unsafeMake(created_at)
  if (row.label !== null) fields.label = row.label
  if (row.epoch !== null) fields.epoch = row.epoch
  if (expires_at !== null) fields.expiresAt = DateTime.unsafeMake(expires_at)
  if (invalidated_at !== null) fields.invalidatedAt = DateTime.unsafeMake(invalidated_at)
  if (row.invalidation_reason !== null) fields.invalidationReason = row.invalidation_reason
  if (row.superseded_by !== null) fields.supersededBy = row.superseded_by
  if (row.supersedes !== null) fields.supersedes = row.supersedes
  if (row.domain !== null) fields.domain = row.domain
  // Rows written before positions existed have neither column (undefined): no position.
  if ((row.thread ?? null) !== null || (row.turn ?? null) !== null) {
    fields.position = { thread: row.thread, turn: typeof row.turn === "bigint" ? Number(row.turn) : row.turn }
  }
  if (valid_from !== null) fields.validFrom = DateTime.unsafeMake(valid_from)
  if (valid_to !== null) fields.validTo = DateTime.unsafeMake(valid_to)
  if (corroborations !== null || corroborated_at !== null || corroboration_sessions !== null) {
    if (!isEpochMillis(corroborated_at)) return undefined
    fields.corroboration = {
      count: corroborations,
      sessions: corroboration_sessions === null ? [] : parseTags(corroboration_sessions),
      lastAt: DateTime.unsafeMake(corroborated_at)
    }
  }
  return MemoryWrite.satisfiesFieldRules(fields)
    ? Records.unsafeFromDraft(fields as unknown as Records.RecordDraft)
    : undefined
}

/**
 * Decodes one stored row into a record, with every rule of the record schema applied, or says
 * why it cannot be read (naming the field).
 *
 * @since 0.1.0
 * @category decoding
 */
export const fromRow = (row: Readonly<Record<string, unknown>>): Either.Either<MemoryRecord, string> => {
  const quick = fromRowQuickly(row)
  return quick !== undefined ? Either.right(quick) : fromRowSlowly(row)
}

/**
 * Decodes rows one by one: `make` builds a value from each record that decodes (and its row);
 * the others are skipped under their `id`, with the reason.
 *
 * @since 0.1.0
 * @category decoding
 */
export const decodeRows = <R extends Readonly<Record<string, unknown>>, A>(
  rows: ReadonlyArray<R>,
  make: (record: MemoryRecord, row: R) => A
): StoredRows.Decoded<A, string> =>
  StoredRows.decodeEach(rows, (row) => Either.map(fromRow(row), (record) => make(record, row)), (row) => String(row.id))

const millisOrNull = (value: DateTime.Utc | undefined): number | null =>
  value === undefined ? null : DateTime.toEpochMillis(value)

/**
 * The row a record is stored as. Records reaching here were validated by the core write rules,
 * so this is a plain projection.
 *
 * @since 0.1.0
 * @category encoding
 */
export const toRow = (record: MemoryRecord): Row => ({
  id: record.id,
  content: record.content,
  kind: record.kind,
  label: record.label ?? null,
  tags: JSON.stringify(record.tags),
  source_type: record.sourceType,
  scope: record.scope,
  delivery_policy: record.deliveryPolicy,
  review_state: record.reviewState,
  created_at: DateTime.toEpochMillis(record.createdAt),
  epoch: record.epoch ?? null,
  expires_at: millisOrNull(record.expiresAt),
  invalidated_at: millisOrNull(record.invalidatedAt),
  invalidation_reason: record.invalidationReason ?? null,
  superseded_by: record.supersededBy ?? null,
  supersedes: record.supersedes ?? null,
  domain: record.domain ?? null,
  thread: record.position?.thread ?? null,
  turn: record.position?.turn ?? null,
  valid_from: millisOrNull(record.validFrom),
  valid_to: millisOrNull(record.validTo),
  corroborations: record.corroboration?.count ?? null,
  corroboration_sessions: record.corroboration === undefined ? null : JSON.stringify(record.corroboration.sessions),
  corroborated_at: millisOrNull(record.corroboration?.lastAt)
})

/**
 * The values of {@link toRow}, in {@link COLUMNS} order, for positional binds.
 *
 * @since 0.1.0
 * @category encoding
 */
export const rowValues = (record: MemoryRecord): Array<string | number | null> => {
  const row = toRow(record)
  return COLUMNS.map((column) => row[column])
}
