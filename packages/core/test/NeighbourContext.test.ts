import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord, ProjectionLayout } from "@engram/core"
import { DateTime, FastCheck as fc } from "effect"
import * as NeighbourContext from "../src/internal/neighbourContext.js"

const { chars, composeProjectedContext: compose, unbounded } = ProjectionLayout

const now = DateTime.unsafeMake("2025-03-01T12:00:00.000Z")

const turn = (thread: string, n: number, extra: Partial<MemoryRecord.MemoryWriteInput> = {}) =>
  MemoryRecord.fromWriteInput(
    {
      content: `turn ${n} of ${thread}`,
      kind: "episode",
      sourceType: "conversation",
      scope: "project:x",
      position: { thread, turn: n },
      ...extra
    },
    { id: `${thread}-${n}`, now: DateTime.unsafeMake("2025-02-01T00:00:00Z") }
  )

const recallLines = (p: ProjectionLayout.ProjectedContext) => {
  const text = p.text
  const start = text.indexOf("<recalled_memory>\n")
  if (start < 0) return []
  const body = text.slice(start + "<recalled_memory>\n".length, text.indexOf("\n</recalled_memory>"))
  // The handle: up to " · " (a kind follows) or "]" (an episode carries its handle alone).
  return body.split("\n").map((line) => /^- \[(.+?)(?: · |\])/.exec(line)?.[1] ?? line)
}

describe("composing neighbours", () => {
  const input = (): ProjectionLayout.ProjectionInput => ({
    now,
    recall: [{ record: turn("a", 5), score: 3 }, { record: turn("b", 2), score: 1 }],
    neighbours: [
      { record: turn("a", 6), of: "a-5" },
      { record: turn("a", 4), of: "a-5" },
      { record: turn("b", 1), of: "b-2" }
    ]
  })

  it("delivers each neighbour as its own line beside its hit, in conversation order, attributed to the hit", () => {
    const p = compose(input(), { budget: unbounded })
    expect(recallLines(p)).toEqual(["a-4", "a-5", "a-6", "b-1", "b-2"])
    expect(p.injection.memoryIds).toEqual(["a-4", "a-5", "a-6", "b-1", "b-2"])
    expect(p.section("recalled_memory")?.neighbours).toEqual({ "a-4": "a-5", "a-6": "a-5", "b-1": "b-2" })
    expect(p.section("recalled_memory")?.items).toBe(5)
  })

  it("delivers a memory once: a neighbour that is a hit, or repeats another neighbour, adds no line", () => {
    const p = compose({
      ...input(),
      neighbours: [
        ...input().neighbours!,
        { record: turn("a", 4), of: "a-5" },
        { record: turn("b", 2), of: "a-5" },
        { record: turn("a", 6), of: "b-2" }
      ]
    }, { budget: unbounded })
    expect(recallLines(p)).toEqual(["a-4", "a-5", "a-6", "b-1", "b-2"])
    expect(p.text.match(/turn 4 of a/g)).toHaveLength(1)
    expect(p.budget.withheld).toEqual([])
  })

  it("withholds a neighbour the prefix carries, and drops the neighbours of a hit that is not delivered", () => {
    const p = compose({ ...input(), inPrefix: ["a-6", "b-2"] }, { budget: unbounded })
    expect(recallLines(p)).toEqual(["a-4", "a-5"])
    expect(p.budget.withheld).toEqual([
      { section: "recalled_memory", ref: "b-2", reason: "in-prefix" },
      { section: "recalled_memory", ref: "a-6", reason: "in-prefix" }
    ])
  })

  it("sheds neighbours before every hit by default, and names the hit of a shed neighbour", () => {
    const full = compose(input(), { budget: unbounded }).text.length
    const lineOf = (id: string) =>
      compose(input(), { budget: unbounded }).text.split("\n").find((l) =>
        l.startsWith(`- [${id}]`) || l.includes(`[${id} `)
      )!
    const p = compose(input(), { budget: chars(full - lineOf("b-1").length - 1) })
    expect(recallLines(p)).toEqual(["a-4", "a-5", "a-6", "b-2"])
    expect(p.budget.shed).toEqual([
      { section: "recalled_memory", ref: "b-1", chars: lineOf("b-1").length, neighbourOf: "b-2" }
    ])
    // with-hit: the weaker hit and its neighbour go before the stronger hit's neighbours.
    const w = compose(input(), { budget: chars(full - lineOf("b-1").length - 1), neighbourShed: "with-hit" })
    expect(recallLines(w)).toEqual(["a-4", "a-5", "a-6", "b-2"])
    const tighter = full - lineOf("b-1").length - lineOf("b-2").length - 2
    expect(recallLines(compose(input(), { budget: chars(tighter), neighbourShed: "with-hit" }))).toEqual([
      "a-4",
      "a-5",
      "a-6"
    ])
    // before-hits: b-1, then a-4 (a-5's neighbours at one turn each: the later input first) go first.
    expect(recallLines(compose(input(), { budget: chars(tighter) }))).toEqual(["a-5", "a-6", "b-2"])
  })

  // Random hits (scores with ties), neighbours of random hits, random budgets, both shed rules.
  const scenario = fc.record({
    scores: fc.array(fc.integer({ min: 0, max: 4 }), { minLength: 1, maxLength: 8 }),
    neighbours: fc.array(fc.record({ hit: fc.nat(7), offset: fc.integer({ min: -2, max: 2 }) }), { maxLength: 16 }),
    cut: fc.double({ min: 0, max: 1, noNaN: true }),
    shed: fc.constantFrom<ProjectionLayout.NeighbourShed>("before-hits", "with-hit")
  })

  it.prop(
    "a neighbour never displaces its own hit or a stronger one; each memory is delivered once",
    [scenario],
    ([s]) => {
      const hits = s.scores.map((score, i) => ({ record: turn(`t${i}`, 10), score }))
      const neighbours = s.neighbours.map(({ hit, offset }) => {
        const h = Math.min(hit, hits.length - 1)
        return { record: turn(`t${h}`, 10 + (offset === 0 ? 3 : offset)), of: `t${h}-10` }
      })
      const base: ProjectionLayout.ProjectionInput = { now, recall: hits, neighbours }
      const full = compose(base, { budget: unbounded, neighbourShed: s.shed }).text.length
      const p = compose(base, { budget: chars(Math.floor(full * s.cut)), neighbourShed: s.shed })
      const kept = new Set(p.injection.memoryIds)
      expect(p.injection.memoryIds.length).toBe(kept.size)
      expect(recallLines(p)).toEqual(p.injection.memoryIds)
      const hitKept = hits.map((hit) => kept.has(hit.record.id))
      for (const [id, of] of Object.entries(p.section("recalled_memory")?.neighbours ?? {})) {
        expect(kept.has(id)).toBe(true)
        const h = hits.findIndex((hit) => hit.record.id === of)
        expect(hitKept[h]).toBe(true)
        hits.forEach((hit, i) => {
          // Stronger: a higher score, or an equal one earlier in the ranking (ties shed the later first).
          if (hit.score > hits[h]!.score || (hit.score === hits[h]!.score && i < h)) expect(hitKept[i]).toBe(true)
          if (s.shed === "before-hits") expect(hitKept[i]).toBe(true)
        })
      }
    }
  )
})

describe("assignNeighbours", () => {
  it.prop(
    "each read record once, never a hit, beside the strongest hit of its thread within the window",
    [
      fc.array(fc.record({ thread: fc.constantFrom("a", "b"), turn: fc.nat(12) }), { minLength: 1, maxLength: 6 }),
      fc.array(fc.record({ thread: fc.constantFrom("a", "b", "c"), turn: fc.nat(12) }), { maxLength: 30 }),
      fc.integer({ min: 0, max: 3 })
    ],
    ([hitAt, readAt, window]) => {
      const hits = [...new Map(hitAt.map((p) => [`${p.thread}-${p.turn}`, p])).values()].map((p) => ({
        record: turn(p.thread, p.turn)
      }))
      const read = readAt.map((p) => turn(p.thread, p.turn))
      const places = [...hits.map((h) => h.record), ...read].map((r) => ({ id: r.id, scope: r.scope, ...r.position! }))
      const assigned = NeighbourContext.assignNeighbours(hits, read, places, window)
      const ids = assigned.map((n) => n.record.id)
      expect(new Set(ids).size).toBe(ids.length)
      const hitIds = hits.map((h) => h.record.id)
      for (const n of assigned) {
        expect(hitIds).not.toContain(n.record.id)
        const near = hits.filter((h) =>
          h.record.position!.thread === n.record.position!.thread &&
          Math.abs(h.record.position!.turn - n.record.position!.turn) <= window
        )
        expect(n.of).toBe(near[0]!.record.id)
      }
      // Everything near a hit and not a hit is assigned.
      const expected = new Set(
        read.filter((r) =>
          !hitIds.includes(r.id) &&
          hits.some((h) =>
            h.record.position!.thread === r.position!.thread &&
            Math.abs(h.record.position!.turn - r.position!.turn) <= window
          )
        ).map((r) => r.id)
      )
      expect(new Set(ids)).toEqual(expected)
    }
  )
})
