import { describe, expect, it } from "@effect/vitest"
import { Embeddings, IdGenerator, MemoryQuery, MemoryStore, SearchTokenizer, VectorIndex } from "@engram/core"
import type { MemoryRecord } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import type * as TestServices from "effect/TestServices"
import { failure, T0 } from "./harness.js"

const DOUG = "project:doug"
const ANA = "project:ana"

/** Records near each other by sub-words and stems only, in two scopes, some of them not deliverable. */
const corpus: ReadonlyArray<MemoryRecord.MemoryWriteInput & { readonly id: string }> = [
  { id: "pg", content: "Doug runs PostgreSQL 16 for the billing service", kind: "fact", scope: DOUG },
  { id: "deploys", content: "Redeployments happen every Tuesday after standup", kind: "fact", scope: DOUG },
  { id: "tea", content: "Doug prefers green tea over coffee", kind: "profile", scope: DOUG },
  { id: "lisbon", content: "The office moved to Lisbon in spring", kind: "note", scope: DOUG },
  { id: "pg-ana", content: "Ana administers PostgreSQL clusters", kind: "fact", scope: ANA },
  { id: "pg-old", content: "Doug ran PostgreSQL 12 once", kind: "fact", scope: DOUG, expiresInDays: 1 },
  { id: "pg-rejected", content: "PostgreSQL billing database", kind: "fact", scope: DOUG }
]

const testEmbedder = Embeddings.makeTest()

const failing = Embeddings.make({
  identity: { model: "always-down", dimensions: Embeddings.TEST_DIMENSIONS },
  embedMany: () => Effect.fail(new Error("provider unavailable"))
})

const other = Embeddings.makeTest({ dimensions: 128 })
const renamed = Embeddings.make({
  identity: { model: "another-model", dimensions: Embeddings.TEST_DIMENSIONS },
  embedMany: (texts) => testEmbedder.embed(texts)
})

type Body<A, E, RExtra> = Effect.Effect<
  A,
  E,
  MemoryStore.MemoryStore | RExtra | IdGenerator.IdGenerator | TestServices.TestServices
>

const provideWith = <RExtra, LE>(
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, LE, Embeddings.Embeddings>,
  embeddings: Embeddings.Service
) =>
<A, E>(self: Body<A, E, RExtra>) =>
  Effect.provide(
    self,
    Layer.merge(
      Layer.provide(layer, Layer.succeed(Embeddings.Embeddings, embeddings)),
      IdGenerator.sequential("mem")
    )
  ) as Effect.Effect<A, E | LE, TestServices.TestServices>

const ids = (result: MemoryStore.SearchResult) => result.hits.map((hit) => hit.record.id)

const writeCorpus = Effect.gen(function*() {
  const s = yield* MemoryStore.MemoryStore
  yield* TestClock.setTime(T0)
  yield* s.write(corpus)
  yield* s.setReviewState("pg-rejected", "rejected")
  yield* s.supersede("tea", { id: "tea-2", content: "Doug now prefers black tea", kind: "profile", scope: DOUG })
  // pg-old expires.
  yield* TestClock.adjust("2 days")
  return s
})

/** The exact reference: every admitted record's test-embedder similarity, best first, then id. */
const reference = (query: string, filters: MemoryQuery.MemoryFilters, limit: number) =>
  Effect.gen(function*() {
    const s = yield* MemoryStore.MemoryStore
    const page = yield* s.list({ ...filters, limit: MemoryQuery.MAX_LIMIT })
    const [q] = yield* testEmbedder.embed([query])
    const vectors = yield* testEmbedder.embed(page.records.map(SearchTokenizer.searchableText))
    return page.records
      .map((record, i) => ({ id: record.id, score: Math.round(Embeddings.dot(q!, vectors[i]!) * 1e6) / 1e6 }))
      .sort((a, b) => b.score - a.score || MemoryQuery.compareRaw(a.id, b.id))
      .slice(0, limit)
      .map((match) => match.id)
  })

const shares = (a: string, b: string) => {
  const tokens = new Set(SearchTokenizer.tokenize(a))
  return SearchTokenizer.tokenize(b).some((token) => tokens.has(token))
}

export const vectorTier = <RExtra, LE>(
  layer: Layer.Layer<MemoryStore.MemoryStore | RExtra, LE, Embeddings.Embeddings>,
  vectorIndex: Effect.Effect<VectorIndex.Service, unknown, RExtra> | undefined
) => {
  const hybrid = provideWith(layer, testEmbedder)
  // The fused ranking with the keyword list weighing nothing: the vector ranking alone, as a search's own tuning.
  const vectorOnly = { fusion: { lexicalWeight: 0, minSimilarity: -1 } } as const

  describe("hybrid search", () => {
    it.effect("finds a memory that shares no whole word with the query", () =>
      Effect.gen(function*() {
        const s = yield* writeCorpus
        const query = "postgres setup"
        expect(shares(query, corpus[0]!.content)).toBe(false)
        const result = yield* s.search(query, { scopes: [DOUG], deliverable: true, limit: 3 })
        expect(ids(result)[0]).toBe("pg")
        for (let i = 1; i < result.hits.length; i++) {
          expect(result.hits[i - 1]!.score).toBeGreaterThanOrEqual(result.hits[i]!.score)
        }
      }).pipe(hybrid))

    it.effect("fused by standardised scores (decision 0187): the vectors alone rank exactly, the memory no word matches is found", () =>
      Effect.gen(function*() {
        const s = yield* writeCorpus
        const filters = { scopes: [DOUG], deliverable: true } as const
        const alone = yield* s.search("postgres setup", {
          ...filters,
          limit: 3,
          fusion: { ...vectorOnly.fusion, method: "score" }
        })
        expect(ids(alone)).toEqual(yield* reference("postgres setup", filters, 3))
        const fused = yield* s.search("postgres setup", { ...filters, limit: 3, fusion: { method: "score" } })
        expect(ids(fused)[0]).toBe("pg")
      }).pipe(hybrid))

    it.effect("newest-order searches stay lexical", () =>
      Effect.gen(function*() {
        const s = yield* writeCorpus
        expect(ids(yield* s.search("postgres setup", { order: "newest" }))).toEqual([])
      }).pipe(hybrid))
  })

  describe("vector ranking", () => {
    const cases: ReadonlyArray<{ query: string; filters: MemoryQuery.MemoryFilters }> = [
      { query: "postgres setup", filters: { scopes: [DOUG], deliverable: true } },
      { query: "postgres", filters: {} },
      { query: "deploying on tuesdays", filters: { scopes: [DOUG] } },
      { query: "a tea drinker", filters: { includeSuperseded: true } },
      { query: "postgresql billing", filters: { kinds: ["fact"], reviewStates: ["pending", "confirmed"] } },
      { query: "postgresql billing", filters: { scopes: [ANA, DOUG], deliverable: true } }
    ]
    for (const { filters, query } of cases) {
      it.effect(`${JSON.stringify(query)} with ${JSON.stringify(filters)}: the exact top 3`, () =>
        Effect.gen(function*() {
          const s = yield* writeCorpus
          const result = yield* s.search(query, { ...filters, limit: 3, ...vectorOnly })
          expect(ids(result)).toEqual(yield* reference(query, filters, 3))
        }).pipe(hybrid))
    }

    it.effect("filters apply before the top k: nothing foreign, expired, rejected or superseded", () =>
      Effect.gen(function*() {
        const s = yield* writeCorpus
        // pg-ana is the nearest record to this query, in another scope.
        expect(yield* reference("administers postgresql clusters", {}, 1)).toEqual(["pg-ana"])
        const one = yield* s.search("administers postgresql clusters", {
          scopes: [DOUG],
          deliverable: true,
          limit: 1,
          ...vectorOnly
        })
        expect(ids(one)).toEqual(["pg"])
        const all = yield* s.search("postgresql 12 billing tea", {
          scopes: [DOUG],
          deliverable: true,
          limit: 20,
          ...vectorOnly
        })
        for (const id of ["pg-ana", "pg-old", "pg-rejected", "tea"]) expect(ids(all)).not.toContain(id)
      }).pipe(hybrid))
  })

  describe("write path", () => {
    it.effect("a write is stored and found lexically when the embedder fails", () =>
      Effect.gen(function*() {
        const s = yield* MemoryStore.MemoryStore
        const written = yield* s.write([{ id: "kept", content: "Doug runs PostgreSQL", kind: "fact", scope: DOUG }])
        expect(written.map((r) => r.id)).toEqual(["kept"])
        expect((yield* s.get(["kept"])).records.map((r) => r.content)).toEqual(["Doug runs PostgreSQL"])
        expect(ids(yield* s.search("postgresql", { scopes: [DOUG] }))).toEqual(["kept"])
      }).pipe(provideWith(layer, failing)))
  })

  if (vectorIndex === undefined) return

  describe("embedder identity", () => {
    it.effect("another model or other dimensions are refused with EmbedderMismatch until reset", () =>
      Effect.gen(function*() {
        const s = yield* writeCorpus
        const index = yield* Effect.orDie(vectorIndex)
        expect(yield* index.identity).toEqual(Option.some(testEmbedder.identity))
        const smaller = yield* failure(VectorIndex.withVectors(s, index, other))
        expect(smaller._tag).toBe("EmbedderMismatch")
        const another = yield* failure(VectorIndex.withVectors(s, index, renamed))
        expect(another).toMatchObject({ _tag: "EmbedderMismatch", stored: testEmbedder.identity })
        const [v] = yield* other.embed(["postgres"])
        expect((yield* failure(index.search(testEmbedder.identity, v!, {}, 3)))._tag).toBe("EmbedderMismatch")
        expect((yield* failure(index.upsert(other.identity, [{ id: "pg", vector: v! }])))._tag).toBe("EmbedderMismatch")
        yield* index.reset(other.identity)
        expect(yield* index.coverage).toMatchObject({ embedded: 0 })
        const reopened = yield* VectorIndex.withVectors(s, index, other)
        expect(ids(yield* reopened.search("postgres", { scopes: [DOUG], deliverable: true, limit: 1 }))).toEqual([])
      }).pipe(hybrid))

    it.effect("records whose embedding failed are backfilled", () =>
      Effect.gen(function*() {
        const s = yield* MemoryStore.MemoryStore
        yield* s.write([{ id: "kept", content: "Doug runs PostgreSQL", kind: "fact", scope: DOUG }])
        const index = yield* Effect.orDie(vectorIndex)
        expect(yield* index.coverage).toEqual({ deliverable: 1, embedded: 0 })
        expect(yield* index.unembedded(10)).toEqual(["kept"])
        yield* index.reset(testEmbedder.identity)
        const records = (yield* s.get(yield* index.unembedded(10))).records
        expect(yield* VectorIndex.embedRecords(index, testEmbedder, records)).toBe(1)
        expect(yield* index.coverage).toEqual({ deliverable: 1, embedded: 1 })
        const reopened = yield* VectorIndex.withVectors(s, index, testEmbedder)
        expect(ids(yield* reopened.search("postgres setup", { scopes: [DOUG] }))).toEqual(["kept"])
      }).pipe(provideWith(layer, failing)))

    it.effect("a forgotten record's vector goes with it", () =>
      Effect.gen(function*() {
        const s = yield* writeCorpus
        const index = yield* Effect.orDie(vectorIndex)
        const before = (yield* index.coverage).embedded
        yield* s.forget({ ids: ["pg"] }, { by: "conformance" })
        expect((yield* index.coverage).embedded).toBe(before - 1)
        const [v] = yield* testEmbedder.embed(["postgres setup"])
        const matches = yield* index.search(testEmbedder.identity, v!, { includeSuperseded: true }, 50)
        expect(matches.map((m) => m.id)).not.toContain("pg")
      }).pipe(hybrid))
  })
}
