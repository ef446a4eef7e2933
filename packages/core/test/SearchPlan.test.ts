import { describe, expect, it } from "@effect/vitest"
import {
  Bm25,
  IdGenerator,
  MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  PriorSessionDigest,
  SearchPlan
} from "@engram/core"
import { Effect, FastCheck as fc, Layer } from "effect"

// Function words mixed in, so the planner's pruning of them (decision 0209) is exercised.
const token = fc.oneof(fc.stringMatching(/^[a-z]{1,6}$/), fc.constantFrom(...PriorSessionDigest.STOPWORDS))
const scenario = fc.record({
  tokens: fc.uniqueArray(token, { maxLength: 30 }),
  frequencies: fc.dictionary(token, fc.nat(10_000)),
  total: fc.nat(100_000),
  options: fc.record({
    maxDocumentShare: fc.double({ min: 0, max: 1, noNaN: true }),
    minPrunedPostings: fc.nat(1_000),
    maxRankedTokens: fc.nat(20),
    idfPower: fc.constantFrom(0.5, 1, 1.5, 2, 3, 4),
    pruneFunctionWords: fc.boolean()
  })
})

const statisticsOf = (total: number, frequencies: Record<string, number>): SearchPlan.TokenStatistics => ({
  total,
  documentFrequency: (t) => (Object.hasOwn(frequencies, t) ? frequencies[t]! : 0)
})

describe("SearchPlan.plan", () => {
  it.prop("splits the distinct tokens into ranked and tail, keeping at least one and the rarest", [scenario], ([s]) => {
    const statistics = statisticsOf(s.total, s.frequencies)
    const { ranked, tail } = SearchPlan.plan(s.tokens, statistics, s.options)
    expect([...ranked, ...tail].sort()).toEqual([...s.tokens].sort())
    expect(ranked.length > 0).toBe(s.tokens.length > 0)
    expect(ranked.length).toBeLessThanOrEqual(Math.max(1, s.options.maxRankedTokens))
    const limit = Math.max(s.options.minPrunedPostings, s.options.maxDocumentShare * s.total)
    const df = statistics.documentFrequency
    const pruned = (t: string) => s.options.pruneFunctionWords && PriorSessionDigest.STOPWORDS.has(t)
    // Every ranked token after the first is below the threshold and not a pruned function word; no
    // other tail token is rarer than a ranked one.
    for (const t of ranked.slice(1)) expect(df(t) <= limit && !pruned(t)).toBe(true)
    for (const t of tail.filter((t) => !pruned(t))) for (const r of ranked) expect(df(t)).toBeGreaterThanOrEqual(df(r))
    // A tail token is there because it is a pruned function word, frequent, or the ranked tier is full.
    for (const t of tail) {
      expect(pruned(t) || df(t) > limit || ranked.length === Math.max(1, s.options.maxRankedTokens)).toBe(true)
    }
    // Pruning function words ranks a function word only when the query holds nothing else.
    if (ranked.some(pruned)) expect(s.tokens.every(pruned)).toBe(true)
  })

  it.prop("weighs each ranked token by its IDF raised to the planner's power, rarest heaviest", [scenario], ([s]) => {
    const statistics = statisticsOf(s.total, s.frequencies)
    const { ranked, weights } = SearchPlan.plan(s.tokens, statistics, s.options)
    expect(weights.length).toBe(ranked.length)
    ranked.forEach((t, i) => {
      const idf = Bm25.idf(s.total, statistics.documentFrequency(t))
      expect(weights[i]).toBeCloseTo(idf ** s.options.idfPower, 9)
      expect(weights[i]).toBeGreaterThan(0)
      if (i > 0) expect(weights[i]!).toBeLessThanOrEqual(weights[i - 1]!)
    })
  })

  it("squares the IDF by default, so one rare token outweighs two common ones", () => {
    const statistics = statisticsOf(20, { zephyr: 1, harbor: 4, lantern: 4 })
    const [rare, common] = [Bm25.idf(20, 1), Bm25.idf(20, 4)]
    // BM25's own weights rank two common tokens above the rare one; squared, the rare one wins.
    expect(2 * common).toBeGreaterThan(rare)
    const { ranked, weights } = SearchPlan.plan(["harbor", "lantern", "zephyr"], statistics)
    expect(ranked[0]).toBe("zephyr")
    expect(weights[0]!).toBeGreaterThan(weights[1]! + weights[2]!)
  })

  it("refuses an IDF power outside 0.5 to 4, naming the option", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const error = yield* Effect.flip(store.search("harbor", { plan: { idfPower: 5 } }))
      expect(error._tag).toBe("InvalidMemoryQuery")
      expect(error.message).toContain("idfPower")
    }).pipe(Effect.provide(MemoryStore.layerMemory), Effect.runPromise))

  it("prunes the frequent tokens of a question and keeps the rare ones, rarest first", () => {
    const frequencies: Record<string, number> = {
      what: 40_000,
      did: 30_000,
      the: 90_000,
      say: 12_000,
      lisbon: 12,
      ferry: 300
    }
    const { ranked, tail } = SearchPlan.plan(
      ["what", "did", "the", "say", "lisbon", "ferry"],
      statisticsOf(100_000, frequencies)
    )
    expect(ranked).toEqual(["lisbon", "ferry"])
    expect(tail).toEqual(["say", "did", "what", "the"])
  })

  it("prunes a question's function words however rare, unless they are all it holds", () => {
    const statistics = statisticsOf(100_000, { when: 3, did: 5, melani: 400, paint: 900 })
    const question = ["when", "did", "melani", "paint"]
    const pruning = { ...SearchPlan.defaultOptions, pruneFunctionWords: true }
    expect(SearchPlan.plan(question, statistics, pruning)).toMatchObject({
      ranked: ["melani", "paint"],
      tail: ["when", "did"]
    })
    expect(SearchPlan.plan(question, statistics).ranked).toEqual(["when", "did", "melani", "paint"])
    expect(SearchPlan.plan(["when", "did"], statistics, pruning)).toMatchObject({ ranked: ["when"], tail: ["did"] })
  })

  it("ranks the rarest token when every token is frequent, and bounds long queries", () => {
    expect(
      SearchPlan.plan(["the", "a"], statisticsOf(1_000, { the: 900, a: 800 }), {
        ...SearchPlan.defaultOptions,
        minPrunedPostings: 0
      })
    )
      .toEqual({ ranked: ["a"], weights: [Bm25.idf(1_000, 800) ** 2], tail: ["the"] })
    const many = Array.from({ length: 40 }, (_, i) => `w${i}`)
    const planned = SearchPlan.plan(many, statisticsOf(1_000_000, {}))
    expect(planned.ranked).toEqual(many.slice(0, SearchPlan.defaultOptions.maxRankedTokens))
    expect(planned.tail).toEqual(many.slice(SearchPlan.defaultOptions.maxRankedTokens))
  })
})

const hit = (id: string, score: number): MemoryStore.SearchHit => ({ record: { id } as never, score })

describe("SearchPlan.runTiers", () => {
  const tierScores = fc.array(fc.double({ min: -5, max: 50, noNaN: true }), { maxLength: 8 })
    .map((scores) => scores.sort((a, b) => b - a))
  it.effect.prop("reads the tail only when the ranked tier is short, and keeps scores non-increasing", [
    tierScores,
    tierScores,
    fc.integer({ min: 1, max: 10 })
  ], ([first, second, limit]) =>
    Effect.gen(function*() {
      const calls: Array<SearchPlan.Tier> = []
      const result = yield* SearchPlan.runTiers(
        { ranked: ["rare"], weights: [1], tail: ["common"] },
        limit,
        (tier, n) => {
          calls.push(tier)
          const scores = tier.exclude.length === 0 ? first : second
          return Effect.succeed({
            hits: scores.slice(0, n).map((s, i) => hit(`${tier.include[0]}-${i}`, s)),
            skipped: 0
          })
        }
      )
      const firstCount = Math.min(first.length, limit)
      expect(calls.length).toBe(firstCount >= limit ? 1 : 2)
      if (calls.length === 2) {
        expect(calls[1]).toEqual({ include: ["common"], weights: [], exclude: ["rare"], rank: false })
      }
      expect(result.hits.length).toBe(Math.min(limit, firstCount + second.length))
      for (let i = 1; i < result.hits.length; i++) {
        expect(result.hits[i - 1]!.score).toBeGreaterThanOrEqual(result.hits[i]!.score)
      }
    }))
})

describe("planned search on the in-memory store", () => {
  // 600 records hold "the"; one holds "zebra": "the" is pruned (above 256 records and 5%).
  const records = Array.from({ length: 600 }, (_, i) => ({
    id: `r${i}`,
    content: i === 7 ? "the zebra crossed the road" : `the note number ${i}`,
    kind: "note" as const
  }))
  const provide = Effect.provide(Layer.merge(MemoryStore.layerMemory, IdGenerator.sequential("doc")))

  it.effect("ranks the record with the rare token first, and still matches every record with a pruned token", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write(records)
      const top = yield* store.search("what about the zebra", { limit: 3 })
      expect(top.hits[0]!.record.id).toBe("r7")
      expect(top.hits.length).toBe(3)
      const all = yield* store.search("what about the zebra", { limit: MemoryQuery.MAX_LIMIT })
      expect(all.hits.length).toBe(600)
      expect(all.hits[0]!.record.id).toBe("r7")
      expect(all.hits[1]!.score).toBeLessThan(all.hits[0]!.score)
    }).pipe(provide))

  it.effect("ranks by BM25: a rare token outweighs a more frequent one", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([
        { id: "a", content: "lisbon ferry", kind: "note" },
        { id: "b", content: "ferry schedule", kind: "note" },
        { id: "c", content: "ferry tickets", kind: "note" },
        { id: "d", content: "ferry delays", kind: "note" }
      ])
      const result = yield* store.search("lisbon ferry")
      expect(result.hits[0]!.record.id).toBe("a")
      const [, ...others] = result.hits
      // The three "ferry" records score alike and below the one that also holds "lisbon".
      for (const other of others) expect(other.score).toBeLessThan(result.hits[0]!.score)
    }).pipe(provide))
})

describe("SearchPlan.resolve", () => {
  it("merges a search's own tuning over the defaults, field by field", () => {
    expect(SearchPlan.resolve(undefined)).toEqual(SearchPlan.defaultTuning)
    expect(SearchPlan.resolve({})).toEqual(SearchPlan.defaultTuning)
    const tuned = SearchPlan.resolve({ plan: { maxDocumentShare: 0.5 }, fusion: { k: 60 }, ranking: { b: 0.5 } })
    expect(tuned.plan).toEqual({ ...SearchPlan.defaultOptions, maxDocumentShare: 0.5 })
    expect(tuned.fusion).toEqual({ ...SearchPlan.defaultFusion, k: 60 })
    expect(tuned.ranking).toEqual({ ...Bm25.defaultParameters, b: 0.5 })
  })

  it("merges over a store's own defaults when it has them", () => {
    const defaults = { ...SearchPlan.defaultTuning, plan: { ...SearchPlan.defaultOptions, idfPower: 1 } }
    expect(SearchPlan.resolve({ plan: { maxRankedTokens: 4 } }, defaults).plan).toEqual({
      ...SearchPlan.defaultOptions,
      idfPower: 1,
      maxRankedTokens: 4
    })
  })

  it.effect("a search refuses tuning out of range, naming the field", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      for (
        const [options, field] of [
          [{ plan: { maxDocumentShare: 0 } }, "maxDocumentShare"],
          [{ plan: { maxDocumentShare: 1.5 } }, "maxDocumentShare"],
          [{ plan: { minPrunedPostings: -1 } }, "minPrunedPostings"],
          [{ plan: { maxRankedTokens: 0 } }, "maxRankedTokens"],
          [{ plan: { maxRankedTokens: 2.5 } }, "maxRankedTokens"],
          [{ fusion: { k: -1 } }, "k"],
          [{ ranking: { b: 2 } }, "b"]
        ] as const
      ) {
        const error = yield* Effect.flip(store.search("harbor", options))
        expect(error._tag).toBe("InvalidMemoryQuery")
        expect(error.message).toContain(field)
      }
    }).pipe(Effect.provide(MemoryStore.layerMemory)))
})

describe("SearchPlan.withDefaults (a store's search defaults, decision 0196)", () => {
  const plan = fc.record(
    { maxDocumentShare: fc.double({ min: 0.01, max: 1, noNaN: true }), idfPower: fc.constantFrom(1, 2, 3) },
    { requiredKeys: [] }
  )
  const ranking = fc.record({ k1: fc.constantFrom(0.3, 0.8, 2), b: fc.constantFrom(0, 0.5, 0.75) }, {
    requiredKeys: []
  })
  const fusion = fc.record({ k: fc.constantFrom(10, 60), vectorWeight: fc.constantFrom(0, 0.5, 1) }, {
    requiredKeys: []
  })
  const tuning = fc.record({ plan, ranking, fusion }, { requiredKeys: [] })

  it.prop(
    "a search's fields win, the store's fill what it leaves out, the global defaults the rest",
    [tuning, tuning],
    ([call, store]) => {
      const merged = SearchPlan.resolve(SearchPlan.withDefaults(call, store))
      expect(merged).toEqual(SearchPlan.resolve(call, SearchPlan.resolve(store)))
    }
  )

  it.effect("an in-memory store built with defaults ranks by them; a search's own options still win", () =>
    Effect.gen(function*() {
      const records: ReadonlyArray<MemoryRecord.MemoryWriteInput> = [
        { id: "short", content: "The ferry leaves at noon", kind: "fact" },
        { id: "long", content: "The ferry to the island leaves from the north pier, past the harbour", kind: "fact" }
      ]
      const plain = yield* MemoryStore.makeMemory()
      const tuned = yield* MemoryStore.makeMemory({ search: { ranking: { b: 0 } } })
      yield* plain.write(records)
      yield* tuned.write(records)
      const scores = (result: MemoryStore.SearchResult) => result.hits.map((hit) => hit.score)
      expect(scores(yield* tuned.search("ferry"))).toEqual(scores(yield* plain.search("ferry", { ranking: { b: 0 } })))
      expect(scores(yield* tuned.search("ferry", { ranking: { b: 0.75 } }))).toEqual(
        scores(yield* plain.search("ferry"))
      )
      expect(scores(yield* tuned.search("ferry"))).not.toEqual(scores(yield* plain.search("ferry")))
    }).pipe(Effect.provide(IdGenerator.sequential())))
})

describe("SearchPlan.fuse by standardised scores (decision 0187)", () => {
  const score = { ...SearchPlan.defaultFusion, method: "score", vectorWeight: 0.5 } as const
  const fusedIds = (
    lexical: ReadonlyArray<MemoryStore.SearchHit>,
    vector: ReadonlyArray<MemoryStore.SearchHit>,
    options: SearchPlan.FusionOptions,
    limit = 10
  ) => SearchPlan.fuse(lexical, vector, limit, options).map((h) => h.record.id)
  const hits = (pairs: ReadonlyArray<readonly [string, number]>) => pairs.map(([id, s]) => hit(id, s))
  // Distinct ids, scores best first, as a store returns them: BM25 scores above 0, similarities in [-1, 1].
  const list = (prefix: string, min: number, max: number, scale: number) =>
    fc.uniqueArray(fc.integer({ min, max }), { minLength: 1, maxLength: 12 })
      .map((scores) => scores.sort((a, b) => b - a).map((s, i) => hit(`${prefix}${i}`, s / scale)))
  // The vector list holds some of the keyword list's records.
  const lists = fc.tuple(
    list("r", 1, 3_000, 100),
    list("v", -1_000, 1_000, 1_000),
    fc.array(fc.boolean(), { maxLength: 12 })
  )
    .map(([lexical, vector, shared]) => ({
      lexical,
      vector: vector.map((h, i) => (shared[i] === true && i < lexical.length ? hit(`r${i}`, h.score) : h))
    }))

  it.prop("with no vector weight, the keyword list's order stands", [lists], ([{ lexical, vector }]) => {
    const expected = lexical.map((h) => h.record.id)
    expect(fusedIds(lexical, vector, { ...score, vectorWeight: 0 }, lexical.length)).toEqual(expected)
    expect(fusedIds(lexical, [], score, lexical.length)).toEqual(expected)
  })

  it.prop(
    "the lists' units cancel: keyword scores scaled, similarities scaled and shifted, every fused score is the same",
    [
      lists,
      fc.integer({ min: 1, max: 1_000 }),
      fc.integer({ min: 1, max: 1_000 }),
      fc.integer({ min: -500, max: 500 })
    ],
    ([{ lexical, vector }, c, a, b]) => {
      const scores = (fused: ReadonlyArray<MemoryStore.SearchHit>) => new Map(fused.map((h) => [h.record.id, h.score]))
      const before = scores(SearchPlan.fuse(lexical, vector, 100, score))
      const after = scores(SearchPlan.fuse(
        lexical.map((h) => hit(h.record.id, (h.score * c) / 10)),
        vector.map((h) => hit(h.record.id, (h.score * a) / 100 + b / 1_000)),
        100,
        score
      ))
      expect([...after.keys()].sort()).toEqual([...before.keys()].sort())
      for (const [id, s] of before) expect(after.get(id)!).toBeCloseTo(s, 6)
    }
  )

  it("a keyword hit far above the rest of its list stays first, where rank fusion lets the vector list's head pass it", () => {
    const lexical = hits([["a", 9], ["b", 5], ["c", 4.8], ["d", 4.6], ["e", 4.5]])
    const vector = hits([["x", 0.52], ["e", 0.5], ["d", 0.49], ["c", 0.48], ["y", 0.47]])
    expect(fusedIds(lexical, vector, score, 3)).toEqual(["a", "e", "d"])
    expect(fusedIds(lexical, vector, { ...score, method: "rank" }, 3)).toEqual(["c", "d", "e"])
  })

  it("a record only the vector list holds must stand far above that list to pass records the words match", () => {
    const lexical = hits([["a", 9], ["b", 5], ["c", 4.8], ["d", 4.6], ["e", 4.5]])
    const near = hits([["x", 0.52], ["e", 0.5], ["d", 0.49], ["c", 0.48], ["y", 0.47]])
    expect(fusedIds(lexical, near, score).indexOf("x")).toBe(5)
    const lexicalFew = hits([["a", 3], ["b", 2.9], ["both", 2.8], ["c", 1]])
    const vector = hits([["v", 0.9], ["both", 0.6], ["w", 0.5], ["z", 0.4]])
    expect(fusedIds(lexicalFew, vector, { ...score, vectorWeight: 1 })).toEqual(["both", "a", "b", "v", "c", "w", "z"])
  })
})
