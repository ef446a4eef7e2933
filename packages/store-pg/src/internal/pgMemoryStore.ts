import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import { MemoryQuery, type MemoryRecord, MemoryStore, MemoryStoreError, MemoryWrite } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import { lexemesOf, searchQuery } from "./lexemes.js"
import { checkSearchTokens, syncSearchTokens } from "./reindex.js"
import { ensureMigrated, memoryTable, migrate } from "./schema.js"

/** A row as `pg` returns it: BIGINT arrives as a string, JSONB already parsed. */
interface Row {
  readonly id: string
  readonly content: string
  readonly kind: string
  readonly label: string | null
  readonly tags: unknown
  readonly source_type: string
  readonly scope: string
  readonly delivery_policy: string
  readonly review_state: string
  readonly created_at: string | number
  readonly epoch: string | null
  readonly expires_at: string | number | null
  readonly invalidated_at: string | number | null
  readonly invalidation_reason: string | null
  readonly superseded_by: string | null
  readonly supersedes: string | null
  readonly domain: string | null
}

const columns = [
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
].join(", ")

const skippedRows = MemoryStore.rowsSkipped.pipe(Metric.tagged("backend", "postgres"))

// Rows per INSERT statement: the arrays of one `unnest` insert are bound as 18 parameters
// whatever their length; chunks keep one statement's payload moderate.
const INSERT_CHUNK = 5_000

const isoOrInvalid = (millis: string | number): string => {
  const n = Number(millis)
  return Number.isSafeInteger(n) && Math.abs(n) <= 8.64e15 ? new Date(n).toISOString() : `invalid:${millis}`
}

const optional = <K extends string>(key: K, value: string | null): { [P in K]?: string } =>
  (value === null ? {} : { [key]: value }) as { [P in K]?: string }

/** The row in the record's encoded (JSON) form, for the core's decoder to judge. */
const toEncoded = (row: Row): unknown => ({
  id: row.id,
  content: row.content,
  kind: row.kind,
  ...optional("label", row.label),
  tags: row.tags,
  sourceType: row.source_type,
  scope: row.scope,
  deliveryPolicy: row.delivery_policy,
  reviewState: row.review_state,
  createdAt: isoOrInvalid(row.created_at),
  ...optional("epoch", row.epoch),
  ...optional("expiresAt", row.expires_at === null ? null : isoOrInvalid(row.expires_at)),
  ...optional("invalidatedAt", row.invalidated_at === null ? null : isoOrInvalid(row.invalidated_at)),
  ...optional("invalidationReason", row.invalidation_reason),
  ...optional("supersededBy", row.superseded_by),
  ...optional("supersedes", row.supersedes),
  ...optional("domain", row.domain)
})

/** Decodes rows one by one: a row that fails is logged, counted and left out; the rest stand. */
const decodeRows = (rows: ReadonlyArray<Row>) =>
  Effect.gen(function*() {
    const records: Array<MemoryRecord.MemoryRecord> = []
    let skipped = 0
    for (const row of rows) {
      const decoded = MemoryWrite.decodeStoredRecord(toEncoded(row))
      if (Either.isRight(decoded)) {
        records.push(decoded.right)
        continue
      }
      skipped++
      yield* Effect.logWarning("skipped a stored memory row that does not decode").pipe(
        Effect.annotateLogs({ backend: "postgres", id: row.id, problem: MemoryWrite.describeParseError(decoded.left) })
      )
    }
    if (skipped > 0) yield* Metric.incrementBy(skippedRows, skipped)
    return { records, skipped }
  })

const millis = (at: DateTime.Utc | undefined): number | null => (at === undefined ? null : DateTime.toEpochMillis(at))

// PostgreSQL text cannot hold U+0000, and a lone surrogate cannot be encoded as UTF-8 (it would
// come back as U+FFFD). Both are refused up front, naming the field, instead of failing in SQL
// or silently changing the content.
const unstorable = /\u0000|[\uD800-\uDFFF]/u

const unstorableField = (record: MemoryRecord.MemoryRecord): string | undefined => {
  const fields: ReadonlyArray<readonly [string, string | undefined]> = [
    ["id", record.id],
    ["content", record.content],
    ["label", record.label],
    ["scope", record.scope],
    ["epoch", record.epoch],
    ["invalidationReason", record.invalidationReason],
    ["supersededBy", record.supersededBy],
    ["supersedes", record.supersedes],
    ["domain", record.domain],
    ...record.tags.map((tag, i) => [`tags.${i}`, tag] as const)
  ]
  for (const [name, value] of fields) {
    if (value !== undefined && unstorable.test(value)) return name
  }
  return undefined
}

const ensureStorable = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) => {
  for (let index = 0; index < records.length; index++) {
    const field = unstorableField(records[index]!)
    if (field !== undefined) {
      return Effect.fail(
        new MemoryStoreError.InvalidMemoryInput({
          index,
          problem: `${field}: contains U+0000 or an unpaired surrogate, which PostgreSQL cannot store`
        })
      )
    }
  }
  return Effect.void
}

/** Creates the store over the ambient `SqlClient`, after `prepare` (migrating, or checking the version). */
const makeAfter = <E>(prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>) => Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* prepare

  const failure = (operation: string) => (cause: SqlError) =>
    new MemoryStoreError.MemoryStoreFailure({ operation, cause })

  const table = sql(memoryTable)
  const selectColumns = sql.literal(columns)

  /** Inserts records; fails with the first id that is already stored (the caller's transaction rolls back). */
  const insertAll = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
    Effect.gen(function*() {
      for (let start = 0; start < records.length; start += INSERT_CHUNK) {
        const chunk = records.slice(start, start + INSERT_CHUNK)
        const inserted = yield* sql<{ id: string }>`
          INSERT INTO ${table} (id, content, kind, label, tags, source_type, scope, delivery_policy, review_state,
            created_at, epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain,
            search_tokens)
          SELECT id, content, kind, label, tags::jsonb, source_type, scope, delivery_policy, review_state,
            created_at, epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain,
            search_tokens
          FROM unnest(
            ${chunk.map((r) => r.id)}::text[], ${chunk.map((r) => r.content)}::text[],
            ${chunk.map((r) => r.kind)}::text[], ${chunk.map((r) => r.label ?? null)}::text[],
            ${chunk.map((r) => JSON.stringify(r.tags))}::text[], ${chunk.map((r) => r.sourceType)}::text[],
            ${chunk.map((r) => r.scope)}::text[], ${chunk.map((r) => r.deliveryPolicy)}::text[],
            ${chunk.map((r) => r.reviewState)}::text[], ${chunk.map((r) => millis(r.createdAt))}::bigint[],
            ${chunk.map((r) => r.epoch ?? null)}::text[], ${chunk.map((r) => millis(r.expiresAt))}::bigint[],
            ${chunk.map((r) => millis(r.invalidatedAt))}::bigint[],
            ${chunk.map((r) => r.invalidationReason ?? null)}::text[],
            ${chunk.map((r) => r.supersededBy ?? null)}::text[], ${chunk.map((r) => r.supersedes ?? null)}::text[],
            ${chunk.map((r) => r.domain ?? null)}::text[], ${chunk.map((r) => lexemesOf(r).join(" "))}::text[]
          ) AS u(id, content, kind, label, tags, source_type, scope, delivery_policy, review_state, created_at,
            epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain, search_tokens)
          ON CONFLICT (id) DO NOTHING
          RETURNING id`
        if (inserted.length < chunk.length) {
          const stored = new Set(inserted.map((row) => row.id))
          const taken = chunk.find((r) => !stored.has(r.id))!
          return yield* new MemoryStoreError.DuplicateMemoryId({ id: taken.id })
        }
      }
      return records
    })

  /** The record, locked for the rest of the transaction. */
  const lockForUpdate = (id: MemoryRecord.MemoryId, operation: string) =>
    Effect.gen(function*() {
      const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE id = ${id} FOR UPDATE`
      const row = rows[0]
      if (row === undefined) return yield* new MemoryStoreError.MemoryNotFound({ id })
      const decoded = MemoryWrite.decodeStoredRecord(toEncoded(row))
      if (Either.isLeft(decoded)) {
        return yield* new MemoryStoreError.MemoryStoreFailure({
          operation,
          cause: new Error(
            `the stored row of memory "${id}" does not decode (${MemoryWrite.describeParseError(decoded.left)}); ` +
              `repair or delete it first`
          )
        })
      }
      return decoded.right
    })

  // One value compares with "=" so that the (scope, created_at, id) index can deliver rows in
  // listing order; PostgreSQL 15 cannot keep index order under "= ANY(array)".
  const oneOf = (column: string, values: ReadonlyArray<string> | undefined, clauses: Array<Statement.Fragment>) => {
    if (values === undefined) return
    clauses.push(
      values.length === 1 ? sql`${sql(column)} = ${values[0]}` : sql`${sql(column)} = ANY(${values}::text[])`
    )
  }

  const filterClauses = (filters: MemoryQuery.MemoryFilters, nowMillis: number): Array<Statement.Fragment> => {
    const clauses: Array<Statement.Fragment> = []
    oneOf("scope", filters.scopes, clauses)
    oneOf("kind", filters.kinds, clauses)
    oneOf("delivery_policy", filters.deliveryPolicies, clauses)
    oneOf("review_state", filters.reviewStates, clauses)
    if (filters.deliverable === true) {
      clauses.push(
        sql`review_state <> 'rejected' AND invalidated_at IS NULL AND (expires_at IS NULL OR expires_at > ${nowMillis})`
      )
    } else if (filters.includeSuperseded !== true) {
      clauses.push(sql`invalidated_at IS NULL`)
    }
    return clauses
  }

  const nowMillis = Effect.map(MemoryWrite.now, DateTime.toEpochMillis)

  const service: MemoryStore.MemoryStoreService = {
    capabilities: { search: "keyword" },

    write: (inputs) =>
      Effect.gen(function*() {
        const records = yield* MemoryWrite.prepareRecords(inputs)
        if (records.length === 0) return records
        yield* ensureStorable(records)
        return yield* sql.withTransaction(insertAll(records)).pipe(
          Effect.catchTag("SqlError", (e) => Effect.fail(failure("write")(e)))
        )
      }),

    restore: (input) =>
      Effect.gen(function*() {
        const records = yield* MemoryWrite.validateRecords(input)
        if (records.length === 0) return
        yield* ensureStorable(records)
        yield* sql.withTransaction(insertAll(records)).pipe(
          Effect.catchTag("SqlError", (e) => Effect.fail(failure("restore")(e)))
        )
      }),

    get: (ids, options) =>
      Effect.gen(function*() {
        if (ids.length === 0) return { records: [], skipped: 0 }
        const scopes = options?.scopes
        const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE id = ANY(${[...new Set(ids)]}::text[])
          ${scopes === undefined ? sql`` : sql`AND scope = ANY(${scopes}::text[])`}`.pipe(
          Effect.mapError(failure("get"))
        )
        const { records, skipped } = yield* decodeRows(rows)
        const byId = new Map(records.map((r) => [r.id, r]))
        return { records: ids.flatMap((id) => byId.get(id) ?? []), skipped }
      }),

    list: (raw) =>
      Effect.gen(function*() {
        const query = yield* MemoryWrite.decodeQuery(MemoryQuery.ListQuery, raw ?? {})
        const position = query.cursor === undefined ? undefined : yield* MemoryQuery.decodeCursor(query.cursor)
        const limit = query.limit ?? MemoryQuery.DEFAULT_LIST_LIMIT
        const clauses = filterClauses(query, yield* nowMillis)
        if (position !== undefined) {
          // Strictly after the position in (created_at DESC, id ASC) order. The separate
          // "created_at <=" bound lets an index scan start at the position instead of filtering
          // every newer row (mixed sort directions rule out a row comparison).
          const at = position.createdAtMillis
          clauses.push(sql`created_at <= ${at} AND (created_at < ${at} OR id > ${position.id})`)
        }
        const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE ${sql.and(clauses)}
          ORDER BY created_at DESC, id ASC LIMIT ${limit + 1}`.pipe(Effect.mapError(failure("list")))
        const pageRows = rows.slice(0, limit)
        const { records, skipped } = yield* decodeRows(pageRows)
        // The cursor is the last row's position, decodable or not, so a bad row is never read twice.
        const last = pageRows[pageRows.length - 1]
        return {
          records,
          skipped,
          nextCursor: rows.length > limit && last !== undefined
            ? MemoryQuery.encodeCursor({ createdAtMillis: Number(last.created_at), id: last.id })
            : undefined
        }
      }),

    search: (text, raw) =>
      Effect.gen(function*() {
        const options = yield* MemoryWrite.decodeQuery(MemoryQuery.SearchOptions, raw ?? {})
        const query = searchQuery(text)
        if (query === undefined) return { hits: [], skipped: 0 }
        const clauses = filterClauses(options, yield* nowMillis)
        const rows = yield* sql<Row & { readonly score: number }>`
          SELECT ${selectColumns}, ts_rank(search_vector, q.query) AS score
          FROM ${table}, CAST(${query} AS tsquery) AS q(query)
          WHERE search_vector @@ q.query AND ${sql.and(clauses)}
          ORDER BY score DESC, created_at DESC, id ASC
          LIMIT ${options.limit ?? MemoryQuery.DEFAULT_SEARCH_LIMIT}`.pipe(Effect.mapError(failure("search")))
        const { records, skipped } = yield* decodeRows(rows)
        const scores = new Map(rows.map((row) => [row.id, Number(row.score)]))
        return { hits: records.map((record) => ({ record, score: scores.get(record.id)! })), skipped }
      }),

    setReviewState: (id, state) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const record = yield* lockForUpdate(id, "setReviewState")
          const updated = MemoryWrite.withReviewState(record, state)
          yield* sql`UPDATE ${table} SET review_state = ${state} WHERE id = ${id}`
          return updated
        })
      ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("setReviewState")(e)))),

    supersede: (oldId, input) =>
      sql.withTransaction(
        Effect.gen(function*() {
          // The row lock makes concurrent supersessions of one record take turns: the second
          // one finds the record invalidated and fails with MemoryConflict.
          const original = yield* lockForUpdate(oldId, "supersede")
          const successor = yield* MemoryWrite.prepareSuccessor(original, input)
          yield* ensureStorable([successor])
          yield* insertAll([successor])
          const superseded = MemoryWrite.invalidatedBy(original, successor)
          yield* sql`UPDATE ${table} SET invalidated_at = ${millis(superseded.invalidatedAt)},
            invalidation_reason = ${superseded.invalidationReason ?? null},
            superseded_by = ${superseded.supersededBy ?? null}
            WHERE id = ${oldId}`
          return { superseded, successor }
        })
      ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("supersede")(e)))),

    expire: (id) =>
      sql.withTransaction(
        Effect.gen(function*() {
          const record = yield* lockForUpdate(id, "expire")
          const updated = MemoryWrite.expiredAt(record, yield* MemoryWrite.now)
          if (updated !== record) {
            yield* sql`UPDATE ${table} SET expires_at = ${millis(updated.expiresAt)} WHERE id = ${id}`
          }
          return updated
        })
      ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("expire")(e))))
  }
  return service
})

/** The store, after bringing its tables and stored search tokens up to date. */
export const make = makeAfter(Effect.zipRight(migrate, syncSearchTokens))

/** The store, after checking that the tables are already up to date (no DDL, no writes). */
export const makeWithoutMigrations = makeAfter(Effect.zipRight(ensureMigrated, checkSearchTokens))
