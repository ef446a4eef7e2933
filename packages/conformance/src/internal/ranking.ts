/**
 * Tier 2's ranking checks: a limit keeps the top of the ranking a search would return without one.
 * Backends bound a ranked search to its top k (decision 0083) instead of ranking every match; the
 * bound must account for the conversation context (a record whose neighbouring turns match
 * gains their scores), so the corpora here are conversations whose turns share words.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryQuery, type MemoryRecord } from "@engram/core"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import * as fc from "fast-check"
import { type Provide, store, T0 } from "./harness.js"

const WORDS = ["harbor", "lantern", "violet", "granite", "meadow", "copper", "willow", "ember", "saffron", "quartz"]

/** One generated conversation corpus and the queries asked of it. */
export interface RankingCorpus {
  /** Write batches, one a second (ties on the score fall to the newer record, then the id). */
  readonly batches: ReadonlyArray<ReadonlyArray<MemoryRecord.MemoryWriteInput & { readonly id: string }>>
  readonly queries: ReadonlyArray<string>
}

const word = fc.constantFrom(...WORDS)

/**
 * Conversations in two scopes and three threads (turns with gaps and, now and then, two records
 * at one turn), some records without a position, each holding one to four of ten words; queries
 * of one to three words. Deterministic per seed.
 */
export const rankingCorpus = (seed: number): RankingCorpus => {
  const record = fc.record({
    words: fc.array(word, { minLength: 1, maxLength: 4 }),
    scope: fc.constantFrom("global", "project:a"),
    thread: fc.constantFrom("t1", "t2", "t3", undefined),
    step: fc.constantFrom(0, 1, 1, 1, 2),
    createdOffset: fc.constantFrom(0, 0, 1, 2)
  })
  const [corpus] = fc.sample(
    fc.record({
      records: fc.array(record, { minLength: 60, maxLength: 90 }),
      queries: fc.array(fc.array(word, { minLength: 1, maxLength: 3 }), { minLength: 6, maxLength: 6 })
    }),
    { seed, numRuns: 1 }
  )
  const turns = new Map<string, number>()
  const inputs = corpus!.records.map((r, i) => {
    const position = r.thread === undefined ? undefined : (() => {
      const turn = (turns.get(r.thread!) ?? 0) + r.step
      turns.set(r.thread!, turn)
      return { thread: r.thread!, turn }
    })()
    return {
      batch: r.createdOffset,
      input: {
        id: `rank-${String(i).padStart(3, "0")}`,
        kind: "episode" as const,
        content: r.words.join(" "),
        scope: r.scope,
        ...(position === undefined ? {} : { position })
      }
    }
  })
  return {
    batches: [0, 1, 2].map((batch) => inputs.filter((i) => i.batch === batch).map((i) => i.input)),
    queries: corpus!.queries.map((q) => q.join(" "))
  }
}

/** The seeds the conformance kit checks: fixed, so every backend ranks the same corpora. */
export const RANKING_SEEDS = [1, 2, 3, 4]

/**
 * Twenty records of two distinct tokens each (one length, one length normalisation): `rare` holds
 * the only "zephyr"; `pair` holds "harbor" and "lantern", which three other records hold each. By
 * BM25's own weights (IDF to the power 1) the pair's two tokens outweigh the one rare token; with
 * the IDF squared the rare token wins. A backend that scored with anything but the plan's weights
 * ranks one of the two the wrong way.
 */
const weightCorpus: ReadonlyArray<MemoryRecord.MemoryWriteInput & { readonly id: string }> = [
  { id: "weight-rare", content: "zephyr quartz" },
  { id: "weight-pair", content: "harbor lantern" },
  ...[1, 2, 3].flatMap((i) => [
    { id: `weight-h${i}`, content: `harbor copper${i}` },
    { id: `weight-l${i}`, content: `lantern ember${i}` }
  ]),
  ...Array.from(
    { length: 12 },
    (_, i) => ({ id: `weight-f${String(i).padStart(2, "0")}`, content: `meadow willow${i}` })
  )
].map((r) => ({ ...r, kind: "fact" as const, scope: "global" }))

/**
 * A question's function words against its content word: `fn-question` holds the only "what" and
 * "when", "instrument" is held by four records (`fn-answer` and three others). Ranked, the two rare
 * function words outweigh the content word and `fn-question` leads; pruned (`pruneFunctionWords`,
 * decision 0209), the record holding only function words falls to the tail, after the four.
 */
const functionWordCorpus: ReadonlyArray<MemoryRecord.MemoryWriteInput & { readonly id: string }> = [
  { id: "fn-question", content: "what when" },
  { id: "fn-answer", content: "clarinet instrument" },
  ...[1, 2, 3].map((i) => ({ id: `fn-i${i}`, content: `instrument brass${i}` })),
  ...Array.from({ length: 15 }, (_, i) => ({ id: `fn-f${String(i).padStart(2, "0")}`, content: `meadow willow${i}` }))
].map((r) => ({ ...r, kind: "fact" as const, scope: "global" }))

export const ranking = <RExtra, LE>(provide: Provide<RExtra, LE>) => {
  describe("the plan's function words", () => {
    for (const [pruneFunctionWords, at] of [[false, 0], [true, 4]] as const) {
      it.effect(
        `rank the record of function words ${at === 0 ? "first" : "last"} when they are ${
          pruneFunctionWords ? "pruned" : "ranked"
        }`,
        () =>
          Effect.gen(function*() {
            const s = yield* store
            yield* s.write(functionWordCorpus)
            const result = yield* s.search("what instrument, and when?", { limit: 5, plan: { pruneFunctionWords } })
            const ids = result.hits.map((hit) => hit.record.id)
            expect(ids.indexOf("fn-question")).toBe(at)
            expect(ids.filter((id) => id !== "fn-question").sort()).toEqual(["fn-answer", "fn-i1", "fn-i2", "fn-i3"])
          }).pipe(provide)
      )
    }
  })

  describe("the plan's token weights", () => {
    for (const [idfPower, first] of [[1, "weight-pair"], [2, "weight-rare"]] as const) {
      it.effect(`rank with the IDF to the power ${idfPower}`, () =>
        Effect.gen(function*() {
          const s = yield* store
          yield* s.write(weightCorpus)
          const result = yield* s.search("harbor lantern zephyr", { limit: 2, plan: { idfPower } })
          expect(result.hits.map((hit) => hit.record.id)).toEqual(
            first === "weight-pair" ? ["weight-pair", "weight-rare"] : ["weight-rare", "weight-pair"]
          )
        }).pipe(provide))
    }
  })

  describe("write order as conversation context (decision 0233)", () => {
    it.effect("an episode written without a position gains from the episodes written next to it in its scope", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(T0)
        const said = (id: string, content: string, extra: Partial<MemoryRecord.MemoryWriteInput> = {}) => ({
          id,
          content,
          kind: "episode" as const,
          scope: "project:a",
          ...extra
        })
        // x1 and z1 say the same; only x1's neighbour in the write order (x0) matches the rest of the
        // question. z1 is newer, so it would rank first on its own score alone — and it would
        // gain as much if another scope's episode, a positioned one or a fact counted as its neighbour.
        const batches = [
          [said("x0", "a boat trip"), said("x1", "the harbor visit"), said("x2", "then lunch")],
          [said("o0", "a boat trip", { scope: "project:b" })],
          [said("p0", "a boat trip", { position: { thread: "t", turn: 0 } })],
          [said("z1", "the harbor visit")],
          [said("f0", "a boat trip", { kind: "fact" })],
          [said("z2", "then dinner")]
        ]
        for (const [i, batch] of batches.entries()) {
          yield* TestClock.setTime(T0 + i * 1000)
          yield* s.write(batch)
        }
        const found = yield* s.search("harbor boat", { scopes: ["project:a"], limit: 10 })
        const order = found.hits.map((hit) => hit.record.id)
        expect(order.indexOf("x1")).toBeLessThan(order.indexOf("z1"))
        const scores = new Map(found.hits.map((hit) => [hit.record.id, hit.score]))
        expect(scores.get("x1")!).toBeGreaterThan(scores.get("z1")!)
        // With the context off, the two tie and the newer comes first.
        const plain = yield* s.search("harbor boat", {
          scopes: ["project:a"],
          limit: 10,
          ranking: { neighbourWindow: 0 }
        })
        const plainOrder = plain.hits.map((hit) => hit.record.id)
        expect(plainOrder.indexOf("z1")).toBeLessThan(plainOrder.indexOf("x1"))
      }).pipe(provide))
  })

  describe("a limit keeps the top of the ranking, conversation context included", () => {
    for (const seed of RANKING_SEEDS) {
      it.effect(`generated conversations, seed ${seed}`, () =>
        Effect.gen(function*() {
          const s = yield* store
          const corpus = rankingCorpus(seed)
          for (const [i, batch] of corpus.batches.entries()) {
            yield* TestClock.setTime(T0 + i * 1000)
            yield* s.write(batch)
          }
          for (const query of corpus.queries) {
            for (const filters of [{}, { scopes: ["project:a"] }]) {
              const all = yield* s.search(query, { ...filters, limit: MemoryQuery.MAX_LIMIT })
              const ranked = all.hits.map((hit) => [hit.record.id, hit.score] as const)
              for (const limit of [1, 2, 3, 5, 8, 13]) {
                const top = yield* s.search(query, { ...filters, limit })
                expect(top.hits.map((hit) => [hit.record.id, hit.score] as const), `${query} limit ${limit}`)
                  .toEqual(ranked.slice(0, limit))
              }
            }
          }
        }).pipe(provide))
    }
  })
}
