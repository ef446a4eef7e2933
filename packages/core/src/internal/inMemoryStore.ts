import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Bm25 from "../Bm25.js"
import { dot, type EmbedderIdentity, EmbedderMismatch, sameIdentity } from "../Embeddings.js"
import {
  type Cascade,
  compareTombstones,
  decodeForget,
  forgetDependents,
  targets,
  type Tombstone,
  tombstoneOf
} from "../MemoryForget.js"
import {
  compareListOrder,
  comparePlaces,
  compareRaw,
  decodeCursor,
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  encodeCursor,
  isAfter,
  isDeliverable,
  ListQuery,
  matchesFilters,
  MAX_LIMIT,
  type Place,
  positionOf,
  SearchOptions,
  takesWriteOrder,
  turnRanges,
  WRITE_ORDER_THREAD
} from "../MemoryQuery.js"
import type { MemoryId, MemoryRecord } from "../MemoryRecord.js"
import type { SearchHit, Service as MemoryStoreService } from "../MemoryStore.js"
import { DuplicateMemoryId, MemoryNotFound } from "../MemoryStoreError.js"
import {
  checkCorroboratingSession,
  corroborated,
  decodeNeighbourQuery,
  decodeQuery,
  expiredAt,
  invalidatedBy,
  prepareRecords,
  prepareSuccessor,
  validateRecords,
  withReviewState
} from "../MemoryWrite.js"
import * as SearchPlan from "../SearchPlan.js"
import { distinctTokens, type Language, searchableText, tokenize } from "../SearchTokenizer.js"
import type { Service as VectorIndexService } from "../VectorIndex.js"
import * as TopK from "./topK.js"
import { roundScore } from "./vectorScore.js"

interface Entry {
  /**
   * The current version of the record. Updates (review state, expiry, invalidation) replace it in
   * place: they never change the text, so the entry's tokens and postings stay valid.
   */
  record: MemoryRecord
  /** `record.createdAt` in epoch millis, for ordering without a DateTime call per comparison. */
  readonly createdAtMillis: number
  /** The distinct tokens of the searchable text. */
  readonly tokens: ReadonlySet<string>
  /** How many distinct tokens the searchable text has (BM25's document length). */
  readonly length: number
  /** The record's unit-length vector, once an embedder gave one (`VectorIndex`). */
  vector: Float32Array | undefined
  /**
   * Where the record sits for conversation context: its position, or its place in its scope's
   * write order (`MemoryQuery.WRITE_ORDER_THREAD`); fixed when it is stored.
   */
  readonly place: ConversationPlace | undefined
}

/** A place's thread and turn, the scope being the record's. */
interface ConversationPlace {
  readonly thread: string
  readonly turn: number
}

const indexEntry = (record: MemoryRecord, language: Language, place: ConversationPlace | undefined): Entry => {
  const tokens = new Set(tokenize(searchableText(record), language))
  return {
    record,
    place,
    createdAtMillis: DateTime.toEpochMillis(record.createdAt),
    tokens,
    length: tokens.size,
    vector: undefined
  }
}

/** A ranked-tier match: its entry, BM25's length normalisation for it, and its score so far. */
interface Candidate {
  readonly entry: Entry
  readonly norm: number
  score: number
}

/**
 * The inverted index: token -> the entries holding it, plus
 * the totals BM25 needs. A posting points at its entry (not at an id to look up), so scoring a
 * question walks its postings without a hash lookup per posting. Text never changes; only
 * `forget` takes an entry (and its postings) out.
 */
const makeIndex = () => {
  const postings = new Map<string, Set<Entry>>()
  let totalLength = 0
  let count = 0
  return {
    add: (entry: Entry) => {
      count++
      totalLength += entry.length
      for (const token of entry.tokens) {
        let holders = postings.get(token)
        if (holders === undefined) postings.set(token, holders = new Set())
        holders.add(entry)
      }
    },
    remove: (entry: Entry) => {
      count--
      totalLength -= entry.length
      for (const token of entry.tokens) {
        const holders = postings.get(token)
        holders?.delete(entry)
        if (holders?.size === 0) postings.delete(token)
      }
    },
    postings: (token: string): ReadonlySet<Entry> | undefined => postings.get(token),
    statistics: (): SearchPlan.TokenStatistics => ({
      total: count,
      documentFrequency: (token) => postings.get(token)?.size ?? 0
    }),
    averageLength: () => (count === 0 ? 0 : totalLength / count)
  }
}

/**
 * The in-memory reference store, linearizable like a database's transactions: every change takes
 * the one write permit (so two changes never interleave, even across the steps that prepare them
 * — a clock read, an id, another store's forget), then reads the state it changes and commits in
 * one synchronous step, so no reader sees half of it and no change is made against a stale read.
 */
export const make = (language: Language = "english", cascade?: Cascade): MemoryStoreService =>
  makeWithVectors(language, cascade).store

/**
 * The in-memory store and its exact vector index over the same entries: a forgotten record's
 * vector goes with its entry.
 */
export const makeWithVectors = (
  language: Language = "english",
  cascade?: Cascade
): { readonly store: MemoryStoreService; readonly vectors: VectorIndexService } => {
  const permit = Effect.unsafeMakeSemaphore(1)
  const serial = permit.withPermits(1)
  const byId = new Map<MemoryId, Entry>()
  // An as-of read ends a superseded record where its successor starts (MemoryQuery.isValidAt).
  const successorValidFrom = (id: MemoryId) => byId.get(id)?.record.validFrom
  const index = makeIndex()
  // Entries by scope and thread, for reading conversation neighbours.
  const byThread = new Map<string, Set<Entry>>()
  const threadKey = (scope: string, thread: string) => `${scope}\u0000${thread}`
  // Each scope's next place in its write order (decision 0233): places are never reused.
  const writeOrder = new Map<string, number>()
  /** A record's place as it is stored: its position, else the next of its scope's write order, if it takes one. */
  const placeFor = (record: MemoryRecord): ConversationPlace | undefined => {
    if (record.position !== undefined) return record.position
    if (!takesWriteOrder(record)) return undefined
    const turn = writeOrder.get(record.scope) ?? 0
    writeOrder.set(record.scope, turn + 1)
    return { thread: WRITE_ORDER_THREAD, turn }
  }
  const placeOf = (entry: Entry): Place | undefined =>
    entry.place === undefined ? undefined : { id: entry.record.id, scope: entry.record.scope, ...entry.place }
  const addThread = (entry: Entry) => {
    const position = entry.place
    if (position === undefined) return
    const key = threadKey(entry.record.scope, position.thread)
    let entries = byThread.get(key)
    if (entries === undefined) byThread.set(key, entries = new Set())
    entries.add(entry)
  }
  const removeThread = (entry: Entry) => {
    const position = entry.place
    if (position === undefined) return
    const key = threadKey(entry.record.scope, position.thread)
    byThread.get(key)?.delete(entry)
    if (byThread.get(key)?.size === 0) byThread.delete(key)
  }
  // Kept in listing order, so a page is a scan from the cursor.
  let ordered: Array<MemoryRecord> = []
  const graves: Array<Tombstone> = []

  // A merge of the sorted batch into the sorted list: linear, where re-sorting the whole list
  // on every batch made loading a large store quadratic.
  const insertOrdered = (records: ReadonlyArray<MemoryRecord>) => {
    const batch = [...records].sort(compareListOrder)
    const oldest = batch[batch.length - 1]
    // The usual case: the batch is newer than everything stored, so it goes in front.
    if (oldest === undefined || ordered.length === 0 || compareListOrder(oldest, ordered[0]!) < 0) {
      ordered = batch.concat(ordered)
      return
    }
    const merged: Array<MemoryRecord> = new Array(ordered.length + batch.length)
    let i = 0
    let j = 0
    let k = 0
    while (i < ordered.length && j < batch.length) {
      merged[k++] = compareListOrder(ordered[i]!, batch[j]!) <= 0 ? ordered[i++]! : batch[j++]!
    }
    while (i < ordered.length) merged[k++] = ordered[i++]!
    while (j < batch.length) merged[k++] = batch[j++]!
    ordered = merged
  }
  const replace = (record: MemoryRecord) => {
    byId.get(record.id)!.record = record
    const i = ordered.findIndex((r) => r.id === record.id)
    ordered[i] = record
  }
  const insertAll = (records: ReadonlyArray<MemoryRecord>) =>
    Effect.suspend(() => {
      const taken = records.find((r) => byId.has(r.id))
      if (taken !== undefined) return Effect.fail(new DuplicateMemoryId({ id: taken.id }))
      for (const record of records) {
        const entry = indexEntry(record, language, placeFor(record))
        byId.set(record.id, entry)
        index.add(entry)
        addThread(entry)
      }
      insertOrdered(records)
      return Effect.succeed(records)
    })
  const find = (id: MemoryId) =>
    Effect.suspend(() => {
      const entry = byId.get(id)
      return entry === undefined ? Effect.fail(new MemoryNotFound({ id })) : Effect.succeed(entry.record)
    })

  let identity: EmbedderIdentity | undefined
  const mismatch = (given: EmbedderIdentity) =>
    identity !== undefined && !sameIdentity(identity, given)
      ? Effect.fail(new EmbedderMismatch({ stored: identity, given }))
      : Effect.void
  const wrongLength = (given: EmbedderIdentity, length: number) =>
    Effect.fail(new EmbedderMismatch({ stored: identity ?? given, given: { model: given.model, dimensions: length } }))

  const vectors: VectorIndexService = {
    method: "exact",
    identity: Effect.sync(() => Option.fromNullable(identity)),
    claim: (given) =>
      Effect.suspend(() =>
        identity === undefined ?
          Effect.sync(() => {
            identity = given
          }) :
          mismatch(given)
      ),
    reset: (given) =>
      serial(Effect.sync(() => {
        for (const entry of byId.values()) entry.vector = undefined
        identity = given
      })),
    upsert: (given, entries) =>
      serial(Effect.suspend(() => {
        if (identity === undefined) identity = given
        const bad = entries.find((e) => e.vector.length !== given.dimensions)
        if (bad !== undefined) return wrongLength(given, bad.vector.length)
        return Effect.map(mismatch(given), () => {
          for (const { id, vector } of entries) {
            const entry = byId.get(id)
            if (entry !== undefined) entry.vector = vector
          }
        })
      })),
    search: (given, vector, filters, limit) =>
      Effect.gen(function*() {
        yield* mismatch(given)
        if (vector.length !== (identity ?? given).dimensions) return yield* wrongLength(given, vector.length)
        const at = yield* DateTime.now
        const matches: Array<{ id: MemoryId; score: number }> = []
        for (const entry of byId.values()) {
          if (entry.vector === undefined || !matchesFilters(entry.record, filters, at, successorValidFrom)) continue
          matches.push({ id: entry.record.id, score: roundScore(dot(entry.vector, vector)) })
        }
        return TopK.select(matches, limit, (a, b) => b.score - a.score || compareRaw(a.id, b.id))
      }),
    unembedded: (limit) =>
      Effect.map(DateTime.now, (at) => {
        const out: Array<MemoryId> = []
        for (let i = ordered.length - 1; i >= 0 && out.length < limit; i--) {
          const record = ordered[i]!
          if (byId.get(record.id)!.vector === undefined && isDeliverable(record, at)) out.push(record.id)
        }
        return out
      }),
    coverage: Effect.map(DateTime.now, (at) => {
      let deliverable = 0
      let embedded = 0
      for (const entry of byId.values()) {
        if (!isDeliverable(entry.record, at)) continue
        deliverable++
        if (entry.vector !== undefined) embedded++
      }
      return { deliverable, embedded }
    })
  }

  const store: MemoryStoreService = {
    capabilities: { search: "keyword" },

    write: (inputs) => Effect.flatMap(prepareRecords(inputs), (records) => serial(insertAll(records))),

    restore: (records) => Effect.asVoid(Effect.flatMap(validateRecords(records), (valid) => serial(insertAll(valid)))),

    get: (ids, options) =>
      Effect.sync(() => {
        const records: Array<MemoryRecord> = []
        for (const id of ids) {
          const entry = byId.get(id)
          if (entry === undefined) continue
          if (options?.scopes !== undefined && !options.scopes.includes(entry.record.scope)) continue
          records.push(entry.record)
        }
        return { records, skipped: 0 }
      }),

    list: (raw) =>
      Effect.gen(function*() {
        const query = yield* decodeQuery(ListQuery, raw ?? {})
        const position = query.cursor === undefined ? undefined : yield* decodeCursor(query.cursor)
        const at = yield* DateTime.now
        const limit = query.limit ?? DEFAULT_LIST_LIMIT
        const page: Array<MemoryRecord> = []
        let more = false
        for (const record of ordered) {
          if (position !== undefined && !isAfter(record, position)) continue
          if (!matchesFilters(record, query, at, successorValidFrom)) continue
          if (page.length === limit) {
            more = true
            break
          }
          page.push(record)
        }
        const last = page[page.length - 1]
        return {
          records: page,
          skipped: 0,
          nextCursor: more && last !== undefined ? encodeCursor(positionOf(last)) : undefined
        }
      }),

    search: (text, raw) =>
      Effect.gen(function*() {
        const options = yield* decodeQuery(SearchOptions, raw ?? {})
        const at = yield* DateTime.now
        const statistics = index.statistics()
        const tuning = SearchPlan.resolve(options)
        const searchPlan = SearchPlan.plan(distinctTokens(text, language), statistics, tuning.plan)
        const parameters = tuning.ranking
        return yield* SearchPlan.run(searchPlan, options.limit ?? DEFAULT_SEARCH_LIMIT, options.order, (tier, limit) =>
          Effect.sync(() => {
            if (!tier.rank) {
              // The tail: newest first, stopping after `limit` (ordered is in listing order).
              const hits: Array<SearchHit> = []
              for (const record of ordered) {
                if (hits.length === limit) {
                  break
                }
                const { tokens } = byId.get(record.id)!
                if (
                  !tier.include.some((t) =>
                    tokens.has(t)
                  ) || tier.exclude.some((t) =>
                    tokens.has(t)
                  )
                ) continue
                if (matchesFilters(record, options, at, successorValidFrom)) {
                  hits.push({ record, score: SearchPlan.tailScore(hits.length) })
                }
              }
              return { hits, skipped: 0 }
            }
            // BM25 (see Bm25) accumulated posting by posting: each record holding a ranked token is looked up
            // and filtered once, and only the best `limit` are kept (a bounded heap), so a
            // question costs its postings, not a sort of every match.
            const candidates = new Map<Entry, Candidate>()
            const rejected = new Set<Entry>()
            const averageLength = index.averageLength()
            for (const [t, token] of tier.include.entries()) {
              const weight = tier.weights[t]!
              for (const entry of index.postings(token) ?? []) {
                let candidate = candidates.get(entry)
                if (candidate === undefined) {
                  if (rejected.has(entry)) {
                    continue
                  }
                  if (!matchesFilters(entry.record, options, at, successorValidFrom)) {
                    rejected.add(entry)
                    continue
                  }
                  candidate = { entry, norm: Bm25.lengthNorm(entry.length, averageLength, parameters), score: 0 }
                  candidates.set(entry, candidate)
                }
                candidate.score += weight
              }
            }
            // Core's bounded ranking (decision 0083), the scheme SQLite and PostgreSQL run in SQL.
            const matches = [...candidates.values()].map(({ entry, norm, score }) => ({
              entry,
              id: entry.record.id,
              scope: entry.record.scope,
              position: entry.place,
              createdAtMillis: entry.createdAtMillis,
              score: Bm25.rounded(score * norm)
            }))
            const best = Bm25.topK(matches, limit, parameters).map(({ match, score }) => ({
              entry: match.entry,
              score
            }))
            return { hits: best.map(({ entry, score }) => ({ record: entry.record, score })), skipped: 0 }
          }))
      }),

    neighbours: (raw) =>
      Effect.gen(function*() {
        const query = yield* decodeNeighbourQuery(raw)
        const at = yield* DateTime.now
        const found: Array<{ readonly record: MemoryRecord; readonly place: Place }> = []
        const excluded = new Set(query.exclude)
        const around: Array<Place> = []
        for (const id of new Set(query.around)) {
          const entry = byId.get(id)
          const place = entry === undefined ? undefined : placeOf(entry)
          if (place !== undefined) around.push(place)
        }
        for (const range of turnRanges([...query.positions, ...around], query.window)) {
          for (const entry of byThread.get(threadKey(range.scope, range.thread)) ?? []) {
            const place = placeOf(entry)!
            if (
              place.turn >= range.from && place.turn <= range.to && !excluded.has(entry.record.id) &&
              matchesFilters(entry.record, query, at, successorValidFrom)
            ) {
              found.push({ record: entry.record, place })
            }
          }
        }
        const read = found.sort((a, b) => comparePlaces(a.place, b.place)).slice(0, query.limit ?? MAX_LIMIT)
        return {
          records: read.map(({ record }) => record),
          skipped: 0,
          places: [...around, ...read.map(({ place }) => place)]
        }
      }),

    setReviewState: (id, state) =>
      serial(Effect.flatMap(find(id), (record) =>
        Effect.sync(() => {
          const updated = withReviewState(record, state)
          replace(updated)
          return updated
        }))),

    supersede: (oldId, input) =>
      serial(Effect.gen(function*() {
        // Under the permit the original cannot change between this read and the commit.
        const current = yield* find(oldId)
        const successor = yield* prepareSuccessor(current, input)
        return yield* Effect.suspend(() => {
          if (byId.has(successor.id)) return Effect.fail(new DuplicateMemoryId({ id: successor.id }))
          const superseded = invalidatedBy(current, successor)
          const entry = indexEntry(successor, language, placeFor(successor))
          byId.set(successor.id, entry)
          index.add(entry)
          addThread(entry)
          insertOrdered([successor])
          replace(superseded)
          return Effect.succeed({ superseded, successor })
        })
      })),

    expire: (id) =>
      serial(Effect.flatMap(DateTime.now, (at) =>
        Effect.flatMap(find(id), (record) =>
          Effect.sync(() => {
            const updated = expiredAt(record, at)
            replace(updated)
            return updated
          })))),

    corroborate: (id, options) =>
      Effect.flatMap(
        checkCorroboratingSession(options?.session),
        (session) =>
          serial(Effect.flatMap(DateTime.now, (at) =>
            Effect.flatMap(find(id), (record) =>
              Effect.sync(() => {
                const updated = corroborated(record, { session, at })
                replace(updated)
                return updated
              }))))
      ),

    forget: (rawTarget, options) =>
      serial(Effect.gen(function*() {
        const { by, target } = yield* decodeForget(rawTarget, options.by)
        const at = yield* DateTime.now
        const doomed = ordered.filter((record) => targets(target, record))
        const tombstones = doomed.map((record) => tombstoneOf(record, at, by)).sort(compareTombstones)
        const ids = new Set(doomed.map((record) => record.id))
        if (cascade !== undefined) {
          yield* forgetDependents(
            cascade,
            [...ids],
            doomed.map((record) => ({ id: record.id, content: record.content }))
          )
        }
        for (const id of ids) {
          const entry = byId.get(id)
          if (entry !== undefined) {
            index.remove(entry)
            removeThread(entry)
          }
          byId.delete(id)
        }
        ordered = ordered.filter((record) => !ids.has(record.id))
        graves.push(...tombstones)
        return { tombstones }
      })),

    tombstones: (query) =>
      Effect.sync(() =>
        graves.filter((t) =>
          (query?.ids === undefined || query.ids.includes(t.memoryId)) &&
          (query?.scopes === undefined || query.scopes.includes(t.scope))
        ).sort(compareTombstones)
      )
  }
  return { store, vectors }
}
