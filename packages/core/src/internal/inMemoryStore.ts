import * as Effect from "effect/Effect"
import type { MemoryId, MemoryRecord } from "../MemoryRecord.js"
import {
  compareListOrder,
  decodeCursor,
  DEFAULT_LIST_LIMIT,
  DEFAULT_SEARCH_LIMIT,
  encodeCursor,
  isAfter,
  ListQuery,
  matchesFilters,
  positionOf,
  SearchOptions
} from "../MemoryQuery.js"
import type { MemoryStoreService, SearchHit } from "../MemoryStore.js"
import { DuplicateMemoryId, MemoryNotFound } from "../MemoryStoreError.js"
import {
  decodeQuery,
  expiredAt,
  now,
  ensureNotInvalidated,
  invalidatedBy,
  prepareRecords,
  prepareSuccessor,
  validateRecords,
  withReviewState
} from "../MemoryWrite.js"
import { searchableText, tokenize } from "../SearchTokenizer.js"

interface Entry {
  readonly record: MemoryRecord
  /** Token -> occurrences, over the searchable text. */
  readonly tokens: ReadonlyMap<string, number>
}

const indexEntry = (record: MemoryRecord): Entry => {
  const tokens = new Map<string, number>()
  for (const token of tokenize(searchableText(record))) tokens.set(token, (tokens.get(token) ?? 0) + 1)
  return { record, tokens }
}

/**
 * The in-memory reference store. Every operation runs synchronously inside one `Effect.sync`
 * step after its inputs are prepared, so a batch is all-or-nothing and no reader sees half of it.
 */
export const make = (): MemoryStoreService => {
  const byId = new Map<MemoryId, Entry>()
  // Kept in listing order, so a page is a scan from the cursor.
  let ordered: Array<MemoryRecord> = []

  const insertOrdered = (records: ReadonlyArray<MemoryRecord>) => {
    ordered = [...ordered, ...records].sort(compareListOrder)
  }
  const replace = (record: MemoryRecord) => {
    byId.set(record.id, indexEntry(record))
    const i = ordered.findIndex((r) => r.id === record.id)
    ordered[i] = record
  }
  const insertAll = (records: ReadonlyArray<MemoryRecord>) =>
    Effect.suspend(() => {
      const taken = records.find((r) => byId.has(r.id))
      if (taken !== undefined) return Effect.fail(new DuplicateMemoryId({ id: taken.id }))
      for (const record of records) byId.set(record.id, indexEntry(record))
      insertOrdered(records)
      return Effect.succeed(records)
    })
  const find = (id: MemoryId) =>
    Effect.suspend(() => {
      const entry = byId.get(id)
      return entry === undefined ? Effect.fail(new MemoryNotFound({ id })) : Effect.succeed(entry.record)
    })

  return {
    capabilities: { search: "keyword" },

    write: (inputs) => Effect.flatMap(prepareRecords(inputs), insertAll),

    restore: (records) => Effect.asVoid(Effect.flatMap(validateRecords(records), insertAll)),

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
        const at = yield* now
        const limit = query.limit ?? DEFAULT_LIST_LIMIT
        const page: Array<MemoryRecord> = []
        let more = false
        for (const record of ordered) {
          if (position !== undefined && !isAfter(record, position)) continue
          if (!matchesFilters(record, query, at)) continue
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
        const queryTokens = [...new Set(tokenize(text))]
        if (queryTokens.length === 0) return { hits: [], skipped: 0 }
        const at = yield* now
        const hits: Array<SearchHit> = []
        for (const { record, tokens } of byId.values()) {
          if (!matchesFilters(record, options, at)) continue
          let score = 0
          for (const token of queryTokens) {
            const count = tokens.get(token)
            // One point per distinct query token matched, plus a small term-frequency share.
            if (count !== undefined) score += 1 + count / (count + 1)
          }
          if (score > 0) hits.push({ record, score })
        }
        hits.sort((a, b) => b.score - a.score || compareListOrder(a.record, b.record))
        return { hits: hits.slice(0, options.limit ?? DEFAULT_SEARCH_LIMIT), skipped: 0 }
      }),

    setReviewState: (id, state) =>
      Effect.flatMap(find(id), (record) =>
        Effect.sync(() => {
          const updated = withReviewState(record, state)
          replace(updated)
          return updated
        })),

    supersede: (oldId, input) =>
      Effect.gen(function*() {
        const successor = yield* prepareSuccessor(yield* find(oldId), input)
        // Commit against the record as it is now: another fiber may have changed it meanwhile.
        const current = yield* find(oldId)
        yield* ensureNotInvalidated(current)
        if (byId.has(successor.id)) return yield* new DuplicateMemoryId({ id: successor.id })
        const superseded = invalidatedBy(current, successor)
        byId.set(successor.id, indexEntry(successor))
        insertOrdered([successor])
        replace(superseded)
        return { superseded, successor }
      }),

    expire: (id) =>
      Effect.gen(function*() {
        const record = yield* find(id)
        const at = yield* now
        const updated = expiredAt(record, at)
        replace(updated)
        return updated
      })
  }
}
