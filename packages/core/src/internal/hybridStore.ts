/**
 * The store decorator behind `VectorIndex.withVectors`.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { type EmbeddingFailure, queryText, type Service as EmbeddingsService } from "../Embeddings.js"
import { DEFAULT_SEARCH_LIMIT, isDeliverable, matchesFilters, type SearchOptions } from "../MemoryQuery.js"
import type { MemoryRecord } from "../MemoryRecord.js"
import type { SearchHit, Service as MemoryStoreService } from "../MemoryStore.js"
import * as SearchPlan from "../SearchPlan.js"
import { searchableText, words } from "../SearchTokenizer.js"
import type { Service as VectorIndexService } from "../VectorIndex.js"

const decodeTuning = Schema.decodeUnknownEither(SearchPlan.SearchTuning)

type Failure = Effect.Effect.Error<ReturnType<VectorIndexService["upsert"]>> | EmbeddingFailure

/** Embeds `records` batch by batch and stores each batch's vectors; returns how many it stored. */
export const embedRecords = (
  index: VectorIndexService,
  embeddings: EmbeddingsService,
  records: ReadonlyArray<MemoryRecord>
): Effect.Effect<number, Failure> =>
  Effect.gen(function*() {
    let stored = 0
    for (let start = 0; start < records.length; start += embeddings.batchSize) {
      const batch = records.slice(start, start + embeddings.batchSize)
      const vectors = yield* embeddings.embed(batch.map(searchableText))
      yield* index.upsert(embeddings.identity, batch.map((record, i) => ({ id: record.id, vector: vectors[i]! })))
      stored += batch.length
    }
    return stored
  })

export const withVectors = (
  store: MemoryStoreService,
  index: VectorIndexService,
  embeddings: EmbeddingsService
) =>
  Effect.gen(function*() {
    yield* index.claim(embeddings.identity)

    /** Embeds the deliverable ones of freshly stored records; a failure is logged, never raised. */
    const embedStored = (records: ReadonlyArray<MemoryRecord>): Effect.Effect<void> =>
      Effect.gen(function*() {
        const now = yield* DateTime.now
        const deliverable = records.filter((record) => isDeliverable(record, now))
        if (deliverable.length > 0) yield* embedRecords(index, embeddings, deliverable)
      }).pipe(
        Effect.catchAllCause((cause) =>
          Effect.logWarning("stored memories without vectors: the embedder failed; `engram embed` backfills them")
            .pipe(Effect.annotateLogs({ ids: records.map((r) => r.id).join(","), cause: String(cause) }))
        )
      )

    const vectorHits = (text: string, options: SearchOptions, limit: number, minSimilarity: number) =>
      Effect.gen(function*() {
        const [query] = yield* embeddings.embed([queryText(text)])
        const matches = (yield* index.search(embeddings.identity, query!, options, limit))
          .filter((match) => match.score > minSimilarity)
        if (matches.length === 0) return { hits: [] as ReadonlyArray<SearchHit>, skipped: 0 }
        const read = yield* store.get(
          matches.map((match) => match.id),
          options.scopes ? { scopes: options.scopes } : undefined
        )
        const now = yield* DateTime.now
        const byId = new Map(read.records.map((record) => [record.id, record]))
        const hits: Array<SearchHit> = []
        for (const match of matches) {
          const record = byId.get(match.id)
          // The index filtered already; the check again here is what keeps a race from leaking.
          if (record !== undefined && matchesFilters(record, options, now)) hits.push({ record, score: match.score })
        }
        return { hits: hits as ReadonlyArray<SearchHit>, skipped: read.skipped }
      })

    const service: MemoryStoreService = {
      ...store,
      write: (inputs) => Effect.tap(store.write(inputs), embedStored),
      restore: (records) => Effect.tap(store.restore(records), () => embedStored(records)),
      supersede: (oldId, input) => Effect.tap(store.supersede(oldId, input), (done) => embedStored([done.successor])),
      search: (text, options) => {
        if (options?.order === "newest" || typeof text !== "string" || words(text).length === 0) {
          return store.search(text, options)
        }
        const limit = options?.limit ?? DEFAULT_SEARCH_LIMIT
        const tuning = decodeTuning(options ?? {})
        // Options the store refuses: its own search fails naming the field.
        if (Either.isLeft(tuning)) return store.search(text, options)
        const fusion = SearchPlan.resolve(tuning.right).fusion
        return Effect.gen(function*() {
          // Each list is read `candidates` deep (at least `limit`), then fused and cut to `limit`.
          const depth = Math.max(limit, fusion.candidates)
          const lexical = yield* store.search(text, { ...options, limit: depth })
          const vector = yield* vectorHits(text, options ?? {}, depth, fusion.minSimilarity).pipe(
            Effect.catchAllCause((cause) =>
              Effect.as(
                Effect.logWarning("vector search failed: the search is lexical").pipe(
                  Effect.annotateLogs({ cause: String(cause) })
                ),
                undefined
              )
            )
          )
          if (vector === undefined) return { hits: lexical.hits.slice(0, limit), skipped: lexical.skipped }
          return {
            hits: SearchPlan.fuse(lexical.hits, vector.hits, limit, fusion),
            skipped: lexical.skipped + vector.skipped
          }
        })
      }
    }
    return service
  })
