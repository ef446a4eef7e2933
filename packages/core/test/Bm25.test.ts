import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Bm25 from "../src/Bm25.js"

const match = fc.record({
  scope: fc.constantFrom("global", "project:a"),
  position: fc.option(fc.record({ thread: fc.constantFrom("t1", "t2", "t3"), turn: fc.integer({ min: 0, max: 6 }) }), {
    nil: undefined
  }),
  // Few distinct scores and creation times, so ties (and neighbour-made ties) are common; the
  // sub-rounding offsets put some bounds within a rounding step of each other.
  units: fc.integer({ min: 1, max: 30 }),
  jitter: fc.constantFrom(0, 1e-10, 4e-10, 6e-10),
  createdAtMillis: fc.constantFrom(0, 1000, 2000)
})

const matches = fc.array(match, { maxLength: 80 }).map((ms) =>
  ms.map((m, i) => ({
    id: `m${String(i).padStart(2, "0")}`,
    scope: m.scope,
    position: m.position,
    createdAtMillis: m.createdAtMillis,
    score: Bm25.rounded(m.units * 0.137 + m.jitter)
  }))
)

const parameters = fc.record({
  k1: fc.constant(0.3),
  b: fc.constant(0.25),
  neighbourWindow: fc.integer({ min: 0, max: 3 }),
  neighbourWeight: fc.constantFrom(0, 0.3, 0.5, 1)
})

describe("Bm25.topK", () => {
  it.prop(
    "equals the full ranking's first k, scores included",
    [matches, fc.integer({ min: 0, max: 30 }), parameters],
    ([ms, k, p]) => {
      expect(Bm25.topK(ms, k, p)).toEqual(Bm25.rank(ms, p).slice(0, k))
    },
    { fastCheck: { numRuns: 300 } }
  )

  it("keeps a record its neighbours lift above records that score more on their own", () => {
    const p = { ...Bm25.defaultParameters, neighbourWindow: 1, neighbourWeight: 0.3 }
    const ms = [
      { id: "alone", scope: "global", position: undefined, createdAtMillis: 0, score: 1 },
      { id: "lifted", scope: "global", position: { thread: "t", turn: 5 }, createdAtMillis: 0, score: 0.8 },
      { id: "before", scope: "global", position: { thread: "t", turn: 4 }, createdAtMillis: 0, score: 0.5 },
      { id: "after", scope: "global", position: { thread: "t", turn: 6 }, createdAtMillis: 0, score: 0.5 }
    ]
    expect(Bm25.topK(ms, 1, p).map((r) => [r.match.id, r.score])).toEqual([["lifted", 1.1]])
  })
})

describe("Bm25.withNeighbours", () => {
  it.prop(
    "does not depend on the order matches come in, even where two share a position",
    [matches, parameters, fc.integer()],
    ([ms, p, seed]) => {
      const shuffled = ms.map((m, i) => ({ m, key: (i * 2654435761 + seed) % 1009 })).sort((a, b) => a.key - b.key)
        .map(({ m }) => m)
      const byId = (list: typeof ms) => {
        const finals = Bm25.withNeighbours(list, p)
        return new Map(list.map((m, i) => [m.id, finals[i]]))
      }
      expect(byId(shuffled)).toEqual(byId(ms))
    }
  )
})
