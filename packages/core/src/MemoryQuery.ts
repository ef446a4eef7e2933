/**
 * Query-less listing and search filters, with the pure semantics every backend must reproduce:
 * which records a filter admits, what "deliverable" means, and the one total listing order.
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import {
  ConversationPosition,
  DeliveryPolicy,
  Instant,
  MemoryId,
  MemoryKind,
  type MemoryRecord,
  ReviewState,
  Scope
} from "./MemoryRecord.js"
import { InvalidCursor } from "./MemoryStoreError.js"
import * as SearchPlan from "./SearchPlan.js"

/**
 * Filters shared by listing and search. An absent filter admits everything; an empty array
 * admits nothing.
 *
 * - `deliverable`: only records that may reach a prompt — not rejected, not expired, not
 *   superseded or otherwise invalidated, and current: valid now (see {@link isValidAt}).
 * - `includeSuperseded`: also return invalidated records (ignored when `deliverable` is set).
 * - `asOf`: only records valid at that instant ({@link isValidAt}); a superseded record is
 *   admitted when it held then (history as of then), other invalidated ones only with
 *   `includeSuperseded` (decision 0173).
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryFilters = Schema.Struct({
  scopes: Schema.optional(Schema.Array(Scope)),
  kinds: Schema.optional(Schema.Array(MemoryKind)),
  deliveryPolicies: Schema.optional(Schema.Array(DeliveryPolicy)),
  reviewStates: Schema.optional(Schema.Array(ReviewState)),
  deliverable: Schema.optional(Schema.Boolean),
  includeSuperseded: Schema.optional(Schema.Boolean),
  asOf: Schema.optional(Instant)
})
/** @since 0.1.0 @category models */
export type MemoryFilters = typeof MemoryFilters.Type

/** @since 0.1.0 @category constants */
export const DEFAULT_LIST_LIMIT = 100
/** @since 0.1.0 @category constants */
export const MAX_LIMIT = 10_000
/** @since 0.1.0 @category constants */
export const DEFAULT_SEARCH_LIMIT = 20

const Limit = Schema.Int.pipe(
  Schema.between(1, MAX_LIMIT, { message: () => `limit must be an integer from 1 to ${MAX_LIMIT}` })
)

/**
 * A query-less listing: filters, a page size and an opaque cursor from a previous page.
 *
 * @since 0.1.0
 * @category models
 */
export const ListQuery = Schema.Struct({
  ...MemoryFilters.fields,
  limit: Schema.optional(Limit),
  cursor: Schema.optional(Schema.String)
})
/** @since 0.1.0 @category models */
export type ListQuery = typeof ListQuery.Type

/**
 * The order search hits come in: `relevance` (the default) ranks by the query's selective tokens
 * (decision 0035); `newest` takes the matches newest first and stops after the limit, scoring
 * nothing — for a lookup by a token rather than a question (decision 0036).
 *
 * @since 0.1.0
 * @category models
 */
export const SearchOrder = Schema.Literal("relevance", "newest")
/** @since 0.1.0 @category models */
export type SearchOrder = typeof SearchOrder.Type

/**
 * Search options: the shared filters, a result limit, the order, and this search's own tuning
 * (`plan`, `fusion`, `ranking`: `SearchPlan.SearchTuning`, over the store's defaults).
 *
 * @since 0.1.0
 * @category models
 */
export const SearchOptions = Schema.Struct({
  ...MemoryFilters.fields,
  limit: Schema.optional(Limit),
  order: Schema.optional(SearchOrder),
  ...SearchPlan.SearchTuning.fields
})
/** @since 0.1.0 @category models */
export type SearchOptions = typeof SearchOptions.Type

/**
 * A conversation position in a scope: where a hit sat, whose neighbours a read asks for.
 *
 * @since 0.1.0
 * @category models
 */
export const ScopedPosition = Schema.Struct({
  scope: Scope,
  ...ConversationPosition.fields
}).annotations({ identifier: "ScopedPosition" })
/** @since 0.1.0 @category models */
export type ScopedPosition = typeof ScopedPosition.Type

/**
 * The thread a scope's write order is filed under (decision 0233): an `episode` written without a
 * position takes the next place of its scope's write order — turn 0, 1, 2, … in the order the
 * store committed them, a batch in item order — and sits in this thread for conversation context
 * (the neighbour ranking of `Bm25` and `MemoryStore.neighbours`) as a written position sits in its
 * own. No written position can name it: a written thread is never empty. The place is the store's,
 * never the record's: `record.position` stays absent.
 *
 * @since 0.1.0
 * @category neighbours
 */
export const WRITE_ORDER_THREAD = ""

/**
 * Whether a record takes a place in its scope's write order ({@link WRITE_ORDER_THREAD}): an
 * `episode` — the kind a conversation writes turn by turn — written without a position. Facts,
 * preferences, notes and the rest were said somewhere but written whenever they were saved, so
 * their write order says nothing about which turns surround them (decision 0233).
 *
 * @since 0.1.0
 * @category neighbours
 */
export const takesWriteOrder = (record: Pick<MemoryRecord, "kind" | "position">): boolean =>
  record.position === undefined && record.kind === "episode"

/**
 * Each record's place in its scope's write order ({@link takesWriteOrder}), `null` for a record
 * that takes none, as every SQL store's write gives them: `claim(scope, count)` takes `count`
 * places of the scope's counter inside the write's transaction and answers the counter's next
 * place after them. Scopes are claimed in one order (code units) for every write, so two writes
 * never wait on each other's counters; a scope's places go to its records in item order.
 *
 * @since 0.1.0
 * @category neighbours
 */
export const writePlaces = <E, R>(
  records: ReadonlyArray<Pick<MemoryRecord, "kind" | "position" | "scope">>,
  claim: (scope: string, count: number) => Effect.Effect<number, E, R>
): Effect.Effect<Array<number | null>, E, R> =>
  Effect.gen(function*() {
    const counts = new Map<string, number>()
    for (const record of records) {
      if (takesWriteOrder(record)) counts.set(record.scope, (counts.get(record.scope) ?? 0) + 1)
    }
    const next = new Map<string, number>()
    for (const [scope, count] of [...counts].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
      next.set(scope, (yield* claim(scope, count)) - count)
    }
    return records.map((record) => {
      if (!takesWriteOrder(record)) return null
      const place = next.get(record.scope)!
      next.set(record.scope, place + 1)
      return place
    })
  })

/**
 * Where a record sits for conversation context: its written position, or — for a record that
 * {@link takesWriteOrder} — its place in its scope's write order (`thread` is
 * {@link WRITE_ORDER_THREAD}, `turn` the place).
 *
 * @since 0.1.0
 * @category models
 */
export interface Place {
  readonly id: MemoryId
  readonly scope: Scope
  readonly thread: string
  readonly turn: number
}

/**
 * A read of conversation neighbours (`MemoryStore.neighbours`): the records of the same scope and
 * thread as one of `positions` — or as the place of one of the records `around` names (its
 * position, or its place in its scope's write order, {@link WRITE_ORDER_THREAD}; a record with
 * neither adds nothing) — at most `window` turns before or after it (the position's own turn
 * included), that the shared filters admit; at most `limit` (default {@link MAX_LIMIT}) in
 * conversation order ({@link compareConversationOrder}). Records whose id is in `exclude` are
 * left out before the limit counts: a caller that holds the hits already (the projection) does not
 * read them again. `window` is bounded by `MemoryLimits.maxNeighbourWindow`, the number of
 * positions and ids around by `MemoryLimits.maxNeighbourPositions` and the number of ids left out
 * by `MemoryLimits.maxNeighbourExcluded`.
 *
 * @since 0.1.0
 * @category models
 */
export const NeighbourQuery = Schema.Struct({
  ...MemoryFilters.fields,
  positions: Schema.Array(ScopedPosition),
  around: Schema.optional(Schema.Array(MemoryId)),
  window: Schema.Int.pipe(
    Schema.nonNegative({ message: () => "window must be a non-negative integer (turns before and after)" })
  ),
  exclude: Schema.optional(Schema.Array(MemoryId)),
  limit: Schema.optional(Limit)
})
/** @since 0.1.0 @category models */
export type NeighbourQuery = typeof NeighbourQuery.Type

/**
 * A run of turns of one thread in one scope, `from` to `to` inclusive.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnRange {
  readonly scope: Scope
  readonly thread: string
  readonly from: number
  readonly to: number
}

/**
 * The turn ranges a neighbour read covers: each position widened by `window` turns each side
 * (clamped at turn 0), overlapping or touching ranges of one scope and thread merged, in
 * conversation order (scope, thread, first turn). Every backend reads exactly these ranges. Pure.
 *
 * @since 0.1.0
 * @category neighbours
 */
export const turnRanges = (positions: ReadonlyArray<ScopedPosition>, window: number): Array<TurnRange> => {
  const sorted = positions
    .map((p) => ({ scope: p.scope, thread: p.thread, from: Math.max(0, p.turn - window), to: p.turn + window }))
    .sort((a, b) => compareRaw(a.scope, b.scope) || compareRaw(a.thread, b.thread) || a.from - b.from)
  const merged: Array<TurnRange> = []
  for (const range of sorted) {
    const last = merged[merged.length - 1]
    if (last !== undefined && last.scope === range.scope && last.thread === range.thread && range.from <= last.to + 1) {
      merged[merged.length - 1] = { ...last, to: Math.max(last.to, range.to) }
    } else merged.push(range)
  }
  return merged
}

/**
 * Conversation order of records by their written positions: scope, thread (code units), turn,
 * then id; records without a position sort last. A neighbour read orders by places
 * ({@link comparePlaces}), which agrees with this on records with a position.
 *
 * @since 0.1.0
 * @category ordering
 */
export const compareConversationOrder = (a: MemoryRecord, b: MemoryRecord): number => {
  if (a.position === undefined || b.position === undefined) {
    return a.position === b.position ? compareRaw(a.id, b.id) : a.position === undefined ? 1 : -1
  }
  return compareRaw(a.scope, b.scope) || compareRaw(a.position.thread, b.position.thread) ||
    a.position.turn - b.position.turn || compareRaw(a.id, b.id)
}

/**
 * Rows keyed by `id` in the order `ids` asks for them (the places of a neighbour read's records
 * around come in the order the query names them, on every backend); rows of ids not asked for
 * are left out. Pure.
 *
 * @since 0.1.0
 * @category neighbours
 */
export const inAskedOrder = <R extends { readonly id: string }>(
  ids: ReadonlyArray<string>,
  rows: ReadonlyArray<R>
): Array<R> => {
  const byId = new Map(rows.map((row) => [row.id, row]))
  return [...new Set(ids)].flatMap((id) => {
    const row = byId.get(id)
    return row === undefined ? [] : [row]
  })
}

/**
 * Conversation order over places ({@link Place}): scope, thread (code units; the write order's
 * empty thread first), turn, then id — the order of a neighbour read on every backend.
 *
 * @since 0.1.0
 * @category ordering
 */
export const comparePlaces = (a: Place, b: Place): number =>
  compareRaw(a.scope, b.scope) || compareRaw(a.thread, b.thread) || a.turn - b.turn || compareRaw(a.id, b.id)

/**
 * Whether a record sits in one of the ranges. Pure.
 *
 * @since 0.1.0
 * @category neighbours
 */
export const inTurnRanges = (record: MemoryRecord, ranges: ReadonlyArray<TurnRange>): boolean =>
  record.position !== undefined &&
  ranges.some((r) =>
    r.scope === record.scope && r.thread === record.position!.thread && record.position!.turn >= r.from &&
    record.position!.turn <= r.to
  )

/**
 * True when the record has been superseded or invalidated for any other reason.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const isInvalidated = (record: MemoryRecord): boolean => record.invalidatedAt !== undefined

/**
 * True when the record carries an expiry at or before `now`.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const isExpired = (record: MemoryRecord, now: DateTime.Utc): boolean =>
  record.expiresAt !== undefined && DateTime.toEpochMillis(record.expiresAt) <= DateTime.toEpochMillis(now)

/**
 * True when the fact a record states holds now by its own bounds: no `validFrom` after `now`, no
 * `validTo` at or before it (decision 0173). An unknown bound is open.
 *
 * @since 0.1.0
 * @category world time
 */
export const isCurrent = (record: MemoryRecord, now: DateTime.Utc): boolean => {
  const t = DateTime.toEpochMillis(now)
  return (record.validFrom === undefined || DateTime.toEpochMillis(record.validFrom) <= t) &&
    (record.validTo === undefined || t < DateTime.toEpochMillis(record.validTo))
}

/**
 * True when the record may reach a prompt: not rejected, not expired, not invalidated, and
 * current ({@link isCurrent}).
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const isDeliverable = (record: MemoryRecord, now: DateTime.Utc): boolean =>
  record.reviewState !== "rejected" && !isExpired(record, now) && !isInvalidated(record) && isCurrent(record, now)

/**
 * True when the record may reach a prompt that reads as of `asOf` (decision 0175): not rejected,
 * not expired at `now`, invalidated only by a supersession (a value replaced since still held
 * then), and current at `asOf` by its own bounds. Where a superseded value ends is its successor's
 * business: the read that found it (`MemoryFilters.asOf`) decided that.
 *
 * @since 0.1.0
 * @category world time
 */
export const isDeliverableAsOf = (record: MemoryRecord, now: DateTime.Utc, asOf: DateTime.Utc): boolean =>
  record.reviewState !== "rejected" && !isExpired(record, now) &&
  (record.supersededBy !== undefined || !isInvalidated(record)) && isCurrent(record, asOf)

/**
 * Where a record stands in its life, as an operator reads it — one word, the first that applies:
 * `superseded` (an edit replaced it), `invalidated` (closed for another reason), `expired`,
 * `rejected`, `confirmed`, `pending`. Whether the poisoning screen flags it is a separate fact
 * (`MemoryRecord.flagged`): a flagged record is still pending or confirmed.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export type Lifecycle = "pending" | "confirmed" | "rejected" | "superseded" | "invalidated" | "expired"

/**
 * The {@link Lifecycle} of a record at `now`.
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const lifecycleOf = (record: MemoryRecord, now: DateTime.Utc): Lifecycle =>
  isInvalidated(record)
    ? (record.supersededBy !== undefined ? "superseded" : "invalidated")
    : isExpired(record, now)
    ? "expired"
    : record.reviewState

/**
 * True when an operator's review can still change what the record does: it is pending, and
 * neither expired nor invalidated (confirming an expired record would deliver nothing).
 *
 * @since 0.1.0
 * @category lifecycle
 */
export const isReviewable = (record: MemoryRecord, now: DateTime.Utc): boolean => lifecycleOf(record, now) === "pending"

/**
 * The instant a record starts to hold, in epoch milliseconds: its `validFrom`; unknown, the
 * creation of a successor (it replaced a value then) and otherwise open (`-Infinity`). Pure.
 *
 * @since 0.1.0
 * @category world time
 */
export const validFromMillis = (record: MemoryRecord): number =>
  record.validFrom !== undefined
    ? DateTime.toEpochMillis(record.validFrom)
    : record.supersedes !== undefined
    ? DateTime.toEpochMillis(record.createdAt)
    : -Infinity

/**
 * The instant a record stops holding, in epoch milliseconds: its `validTo`; unknown, for a
 * superseded record its successor's `validFrom` (`successorFrom`, when the caller read the
 * successor) or else when it was superseded, and otherwise open (`Infinity`). Pure.
 *
 * @since 0.1.0
 * @category world time
 */
export const validToMillis = (record: MemoryRecord, successorFrom?: DateTime.Utc): number =>
  record.validTo !== undefined
    ? DateTime.toEpochMillis(record.validTo)
    : record.supersededBy !== undefined && record.invalidatedAt !== undefined
    ? DateTime.toEpochMillis(successorFrom ?? record.invalidatedAt)
    : Infinity

/**
 * Whether the fact a record states holds at `at`: `validFrom <= at < validTo`, each bound as
 * {@link validFromMillis} and {@link validToMillis} give it (decision 0173). Pure.
 *
 * @since 0.1.0
 * @category world time
 */
export const isValidAt = (record: MemoryRecord, at: DateTime.Utc, successorFrom?: DateTime.Utc): boolean => {
  const t = DateTime.toEpochMillis(at)
  return validFromMillis(record) <= t && t < validToMillis(record, successorFrom)
}

/**
 * A record's world time in words, for `explain` and `inspect`: "from <iso>", "until <iso>", "from
 * <iso> until <iso>", or `null` when it has no bound of its own (valid whenever it is live).
 *
 * @since 0.1.0
 * @category world time
 */
export const describeValidity = (record: MemoryRecord): string | null =>
  record.validFrom === undefined && record.validTo === undefined ? null : [
    ...(record.validFrom !== undefined ? [`from ${DateTime.formatIso(record.validFrom)}`] : []),
    ...(record.validTo !== undefined ? [`until ${DateTime.formatIso(record.validTo)}`] : [])
  ].join(" ")

/**
 * A record's corroboration in one line (decision 0174) — "said again 3 times, in sessions s-1,
 * s-2; last 2026-01-15T12:00:00.000Z" — or null when its value was never said again. Explain and
 * `engram memory show` print it.
 *
 * @since 0.1.0
 * @category corroboration
 */
export const describeCorroboration = (record: MemoryRecord): string | null => {
  const c = record.corroboration
  if (c === undefined) return null
  const times = c.count === 1 ? "once" : `${c.count} times`
  const sessions = c.sessions.length === 0
    ? ""
    : `, in session${c.sessions.length === 1 ? "" : "s"} ${c.sessions.join(", ")}`
  return `said again ${times}${sessions}; last ${DateTime.formatIso(c.lastAt)}`
}

/**
 * Looks up the `validFrom` of a superseded record's successor, for {@link matchesFilters} with
 * `asOf`: `undefined` when the successor has none (or is not at hand).
 *
 * @since 0.1.0
 * @category world time
 */
export type SuccessorValidFrom = (successorId: MemoryId) => DateTime.Utc | undefined

const admits = <A>(allowed: ReadonlyArray<A> | undefined, value: A): boolean =>
  allowed === undefined || allowed.includes(value)

/**
 * Whether `filters` admit `record` at time `now`. Backends translate this predicate into their
 * own query language; the in-memory store and the conformance model use it directly.
 *
 * @since 0.1.0
 * @category filtering
 */
export const matchesFilters = (
  record: MemoryRecord,
  filters: MemoryFilters,
  now: DateTime.Utc,
  successorValidFrom?: SuccessorValidFrom
): boolean => {
  if (!admits(filters.scopes, record.scope)) return false
  if (!admits(filters.kinds, record.kind)) return false
  if (!admits(filters.deliveryPolicies, record.deliveryPolicy)) return false
  if (!admits(filters.reviewStates, record.reviewState)) return false
  if (filters.asOf !== undefined) {
    const successorFrom = record.supersededBy !== undefined ? successorValidFrom?.(record.supersededBy) : undefined
    if (!isValidAt(record, filters.asOf, successorFrom)) return false
    const superseded = record.supersededBy !== undefined
    if (filters.deliverable === true) {
      return record.reviewState !== "rejected" && !isExpired(record, now) && (superseded || !isInvalidated(record))
    }
    return superseded || filters.includeSuperseded === true || !isInvalidated(record)
  }
  if (filters.deliverable === true) return isDeliverable(record, now)
  if (filters.includeSuperseded !== true && isInvalidated(record)) return false
  return true
}

/**
 * Raw code-unit comparison, never locale-aware: the same answer on every machine.
 *
 * @since 0.1.0
 * @category ordering
 */
export const compareRaw = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * The listing order: newest `createdAt` first, then `id` ascending. Total and stable.
 *
 * @since 0.1.0
 * @category ordering
 */
export const compareListOrder = (a: MemoryRecord, b: MemoryRecord): number => {
  const byTime = DateTime.toEpochMillis(b.createdAt) - DateTime.toEpochMillis(a.createdAt)
  return byTime !== 0 ? byTime : compareRaw(a.id, b.id)
}

/**
 * The position a listing page ended at; the next page starts strictly after it.
 *
 * @since 0.1.0
 * @category cursors
 */
export interface ListPosition {
  readonly createdAtMillis: number
  readonly id: MemoryId
}

// "<createdAtMillis>~<id>": "~" never occurs in an id, so the split is unambiguous.
const cursorPattern = /^(-?\d{1,16})~(.+)$/

/**
 * Encodes a listing position as an opaque cursor.
 *
 * @since 0.1.0
 * @category cursors
 */
export const encodeCursor = (position: ListPosition): string => `${position.createdAtMillis}~${position.id}`

/**
 * Decodes a cursor produced by {@link encodeCursor}.
 *
 * @since 0.1.0
 * @category cursors
 */
export const decodeCursor = (cursor: string): Either.Either<ListPosition, InvalidCursor> => {
  const match = cursorPattern.exec(cursor)
  if (match === null || !Schema.is(MemoryId)(match[2])) return Either.left(new InvalidCursor({ cursor }))
  return Either.right({ createdAtMillis: Number(match[1]), id: match[2] })
}

/**
 * True when `record` sorts strictly after `position` in listing order.
 *
 * @since 0.1.0
 * @category cursors
 */
export const isAfter = (record: MemoryRecord, position: ListPosition): boolean => {
  const t = DateTime.toEpochMillis(record.createdAt)
  return t < position.createdAtMillis || (t === position.createdAtMillis && record.id > position.id)
}

/**
 * The position of a record, for building the next cursor.
 *
 * @since 0.1.0
 * @category cursors
 */
export const positionOf = (record: MemoryRecord): ListPosition => ({
  createdAtMillis: DateTime.toEpochMillis(record.createdAt),
  id: record.id
})
