import { describe, expect, it } from "@effect/vitest"
import { Embeddings, IdGenerator, MemoryQuery, MemoryStore, SearchTokenizer } from "@engram/core"
import { Effect, FastCheck as fc, Layer } from "effect"

const words = [
  "Doug",
  "doug",
  "name",
  "am",
  "prefers",
  "café",
  "CAFE",
  "Zürich",
  "e-mail",
  "doug@example.com",
  "v2.0",
  "O'Brien",
  "Москве",
  "東京",
  "ΦΙΛΟΥΣ",
  "Smørrebrød",
  "ガラス",
  "カラス",
  "가방",
  "½",
  "ﬁle"
]
const sentence = fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 5 }).map((ws) => ws.join(" "))
const content = fc.oneof(
  sentence,
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }).filter((s) => s.trim().length > 0)
)

// A query is made of corpus words, random text, or a slice of a stored text (a substring must
// only match when it is a whole token).
const scenario = fc.array(content, { minLength: 1, maxLength: 8 }).chain((contents) =>
  fc.record({
    contents: fc.constant(contents),
    query: fc.oneof(
      sentence,
      fc.string({ unit: "grapheme", maxLength: 12 }),
      fc.constantFrom(...contents).chain((c) =>
        fc.tuple(fc.nat(c.length), fc.nat(c.length)).map(([i, j]) => c.slice(Math.min(i, j), Math.max(i, j)))
      )
    )
  })
)

const provideStore = Effect.provide(Layer.merge(MemoryStore.layerMemory, IdGenerator.sequential("doc")))

describe("in-memory search", () => {
  it.effect.prop(
    "returns exactly the records that share a whole token with the query",
    [scenario],
    ([{ contents, query }]) =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const written = yield* store.write(contents.map((c) => ({ content: c, kind: "note" as const })))
        const result = yield* store.search(query, { limit: MemoryQuery.MAX_LIMIT })
        const wanted = new Set(SearchTokenizer.tokenize(query))
        const sharesToken = (text: string) => SearchTokenizer.tokenize(text).some((token) => wanted.has(token))
        for (const hit of result.hits) expect(sharesToken(hit.record.content)).toBe(true)
        expect(result.hits.map((hit) => hit.record.id).sort()).toEqual(
          written.filter((r) => sharesToken(r.content)).map((r) => r.id).sort()
        )
      }).pipe(provideStore)
  )
})

describe("in-memory vectors are chosen by the layer (decision 0161 (c))", () => {
  const stored = "Doug runs PostgreSQL 16 for the billing service"
  const searchWith = (store: Layer.Layer<MemoryStore.MemoryStore>) =>
    Effect.gen(function*() {
      const s = yield* MemoryStore.MemoryStore
      yield* s.write([{ content: stored, kind: "fact" }])
      return (yield* s.search("postgres setup")).hits.map((hit) => hit.record.content)
    }).pipe(Effect.provide(Layer.merge(store, IdGenerator.sequential("mem"))))

  it.effect("layerMemoryWithVectors searches hybrid over the embeddings it requires", () =>
    Effect.gen(function*() {
      expect(yield* searchWith(MemoryStore.layerMemoryWithVectors.pipe(Layer.provide(Embeddings.layerTest()))))
        .toEqual([stored])
    }))

  it.effect("layerMemory stays lexical even with an Embeddings service in context", () =>
    Effect.gen(function*() {
      expect(yield* searchWith(MemoryStore.layerMemory).pipe(Effect.provide(Embeddings.layerTest()))).toEqual([])
    }))
})

describe("hybrid search embeds a question as the statement it asks about (decision 0220)", () => {
  const seen: Array<string> = []
  const recording = Layer.succeed(
    Embeddings.Embeddings,
    Embeddings.make({
      identity: { model: "recording-test", dimensions: 2 },
      embedMany: (texts) => Effect.sync(() => (seen.push(...texts), texts.map(() => [1, 0])))
    })
  )

  it.effect("the embedder reads the question without its interrogative and question mark", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([{ content: "Doug runs PostgreSQL 16", kind: "fact" }])
      seen.length = 0
      yield* store.search("When did Doug set up postgres?")
      yield* store.search("postgres setup")
      expect(seen).toEqual(["Doug set up postgres", "postgres setup"])
    }).pipe(
      Effect.provide(
        Layer.merge(MemoryStore.layerMemoryWithVectors.pipe(Layer.provide(recording)), IdGenerator.sequential("q"))
      )
    ))
})
