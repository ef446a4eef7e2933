/**
 * The memory table: its DDL (as migrations), the row schema every read decodes with, and the
 * values every write binds.
 *
 * Timestamps are INTEGER epoch milliseconds, tags a JSON array in TEXT. The search index is a
 * contentless FTS5 table keyed by the row's `seq`, holding the shared tokenizer's tokens joined by
 * spaces. It uses FTS5's `ascii` tokenizer: our tokens hold only letters and digits, so splitting
 * them on ASCII separators gives back exactly the tokens we indexed, and FTS5 never applies a
 * folding or splitting rule of its own.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { MemoryRecord, MemoryWrite } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** @internal */
export const TABLE = "engram_memories"
/** @internal */
export const FTS_TABLE = "engram_memories_fts"
/** @internal */
export const MIGRATIONS_TABLE = "engram_memory_migrations"

/** The record columns, in bind order (the `seq` key is bound separately, first). */
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
  "domain"
] as const

/** `m.id, m.content, …` for selects. */
export const selectColumns = (alias: string) => COLUMNS.map((column) => `${alias}.${column}`).join(", ")

/**
 * Migrations of the memory store, in their own migrations table so other stores sharing the
 * database migrate independently. Each statement is its own query (SQLite prepares one at a time).
 */
export const migrations: Record<string, Effect.Effect<void, SqlError, SqlClient.SqlClient>> = {
  "0001_memories": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // No CHECK constraints: values are validated by the record schema on write and decoded on
    // every read, where a bad row is skipped rather than failing the query.
    yield* sql.unsafe(`CREATE TABLE ${TABLE} (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL COLLATE BINARY UNIQUE,
      content TEXT NOT NULL,
      kind TEXT NOT NULL,
      label TEXT,
      tags TEXT NOT NULL DEFAULT '[]',
      source_type TEXT NOT NULL,
      scope TEXT NOT NULL,
      delivery_policy TEXT NOT NULL,
      review_state TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      epoch TEXT,
      expires_at INTEGER,
      invalidated_at INTEGER,
      invalidation_reason TEXT,
      superseded_by TEXT,
      supersedes TEXT,
      domain TEXT
    )`)
    // The listing order, alone and behind the filters a listing most often narrows by.
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_order ON ${TABLE} (created_at DESC, id)`)
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_scope ON ${TABLE} (scope, created_at DESC, id)`)
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_kind ON ${TABLE} (kind, created_at DESC, id)`)
    yield* sql.unsafe(`CREATE INDEX ${TABLE}_delivery ON ${TABLE} (delivery_policy, created_at DESC, id)`)
    yield* sql.unsafe(`CREATE VIRTUAL TABLE ${FTS_TABLE} USING fts5(tokens, content='', tokenize='ascii')`)
  })
}

const MAX_EPOCH_MILLIS = 8_640_000_000_000_000

/** An epoch-millisecond column: an integer within the range a JavaScript `Date` can hold. */
const EpochMillis = Schema.Int.pipe(Schema.between(-MAX_EPOCH_MILLIS, MAX_EPOCH_MILLIS))

/**
 * A row as SQLite returns it: column types and literal values are checked here; everything else a
 * record requires (id and scope patterns, content and tag rules) is checked by `MemoryRecord`.
 */
export const MemoryRow = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  kind: MemoryRecord.MemoryKind,
  label: Schema.NullOr(Schema.String),
  tags: Schema.parseJson(Schema.Array(Schema.String)),
  source_type: MemoryRecord.SourceType,
  scope: Schema.String,
  delivery_policy: MemoryRecord.DeliveryPolicy,
  review_state: MemoryRecord.ReviewState,
  created_at: EpochMillis,
  epoch: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(EpochMillis),
  invalidated_at: Schema.NullOr(EpochMillis),
  invalidation_reason: Schema.NullOr(Schema.String),
  superseded_by: Schema.NullOr(Schema.String),
  supersedes: Schema.NullOr(Schema.String),
  domain: Schema.NullOr(Schema.String)
})

const iso = (millis: number): string => new Date(millis).toISOString()
const millisOf = (iso: string): number => new Date(iso).getTime()

/** A stored row decoded into a record, with every rule of the record schema applied. */
export const MemoryRecordFromRow = Schema.transformOrFail(MemoryRow, MemoryRecord.MemoryRecord, {
  strict: true,
  decode: (row) =>
    ParseResult.succeed({
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
      ...(row.domain !== null ? { domain: row.domain } : {})
    }),
  encode: (record) =>
    ParseResult.succeed({
      id: record.id,
      content: record.content,
      kind: record.kind,
      label: record.label ?? null,
      tags: record.tags,
      source_type: record.sourceType,
      scope: record.scope,
      delivery_policy: record.deliveryPolicy,
      review_state: record.reviewState,
      created_at: millisOf(record.createdAt),
      epoch: record.epoch ?? null,
      expires_at: record.expiresAt !== undefined ? millisOf(record.expiresAt) : null,
      invalidated_at: record.invalidatedAt !== undefined ? millisOf(record.invalidatedAt) : null,
      invalidation_reason: record.invalidationReason ?? null,
      superseded_by: record.supersededBy ?? null,
      supersedes: record.supersedes ?? null,
      domain: record.domain ?? null
    })
})

/** Decodes a row through {@link MemoryRecordFromRow} alone: the reference the fast path must agree with. */
export const decodeRowSlowly = Schema.decodeUnknownEither(MemoryRecordFromRow)

// The record's own field schemas, checked on the decoded (type) side.
const isRecordFields = Schema.is(Schema.Struct(MemoryRecord.MemoryRecord.fields))

const isEpochMillis = (value: unknown): value is number =>
  typeof value === "number" && Number.isInteger(value) && Math.abs(value) <= MAX_EPOCH_MILLIS

const parseTags = (value: unknown): unknown => {
  if (typeof value !== "string") return undefined
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

/**
 * The fast path of {@link decodeRow}: the row's values placed in a record and checked against
 * the record's own field schemas, skipping the encoded round trip. `undefined` when anything is
 * off, and the full decode then says what.
 */
const decodeRowQuickly = (row: Record<string, unknown>): MemoryRecord.MemoryRecord | undefined => {
  const { created_at, expires_at, invalidated_at } = row
  if (!isEpochMillis(created_at)) return undefined
  if (expires_at !== null && !isEpochMillis(expires_at)) return undefined
  if (invalidated_at !== null && !isEpochMillis(invalidated_at)) return undefined
  const fields: Record<string, unknown> = {
    id: row.id,
    content: row.content,
    kind: row.kind,
    tags: parseTags(row.tags),
    sourceType: row.source_type,
    scope: row.scope,
    deliveryPolicy: row.delivery_policy,
    reviewState: row.review_state,
    createdAt: DateTime.unsafeMake(created_at)
  }
  if (row.label !== null) fields.label = row.label
  if (row.epoch !== null) fields.epoch = row.epoch
  if (expires_at !== null) fields.expiresAt = DateTime.unsafeMake(expires_at)
  if (invalidated_at !== null) fields.invalidatedAt = DateTime.unsafeMake(invalidated_at)
  if (row.invalidation_reason !== null) fields.invalidationReason = row.invalidation_reason
  if (row.superseded_by !== null) fields.supersededBy = row.superseded_by
  if (row.supersedes !== null) fields.supersedes = row.supersedes
  if (row.domain !== null) fields.domain = row.domain
  return isRecordFields(fields) ? new MemoryRecord.MemoryRecord(fields, { disableValidation: true }) : undefined
}

/**
 * Decodes one stored row into a record, with every rule of the record schema applied, or says
 * why it cannot be read. Rows that pass take a fast path (the field checks on decoded values);
 * the rest go through {@link MemoryRecordFromRow}, which names the field that failed.
 */
export const decodeRow = (row: Record<string, unknown>): Either.Either<MemoryRecord.MemoryRecord, string> => {
  const quick = decodeRowQuickly(row)
  if (quick !== undefined) return Either.right(quick)
  return Either.mapLeft(decodeRowSlowly(row), MemoryWrite.describeParseError)
}

const millisOrNull = (value: DateTime.Utc | undefined): number | null =>
  value === undefined ? null : DateTime.toEpochMillis(value)

/**
 * The values a record binds to {@link COLUMNS}, in order. Records reaching here were validated
 * by the core write rules, so this is a plain projection (the hot path of batched writes).
 */
export const rowValues = (record: MemoryRecord.MemoryRecord): Array<string | number | null> => [
  record.id,
  record.content,
  record.kind,
  record.label ?? null,
  JSON.stringify(record.tags),
  record.sourceType,
  record.scope,
  record.deliveryPolicy,
  record.reviewState,
  DateTime.toEpochMillis(record.createdAt),
  record.epoch ?? null,
  millisOrNull(record.expiresAt),
  millisOrNull(record.invalidatedAt),
  record.invalidationReason ?? null,
  record.supersededBy ?? null,
  record.supersedes ?? null,
  record.domain ?? null
]
