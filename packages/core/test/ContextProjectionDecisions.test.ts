/**
 * The pure decisions the projection layer calls: the recall search's size, which recalled hits a
 * projection keeps (no session summaries), and the address each memory takes under an identity
 * source (what withholds a memory whose address the prefix or an identity line already holds).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  MemoryRecord,
  PriorSessionDigest,
  ProjectionLayout,
  Routing,
  RoutingPresets
} from "@engram/core"
import { DateTime, FastCheck as fc, Option } from "effect"
import * as Decisions from "../src/internal/projectionDecisions.js"
import { aRecord } from "./utilities.js"

const record = aRecord

const modes: ReadonlyArray<ProjectionLayout.ProjectionMode> = [
  "native",
  "external",
  "autonomous",
  "incognito",
  "subagent"
]
const recalls = (mode: ProjectionLayout.ProjectionMode) =>
  ProjectionLayout.sectionsFor(mode).includes("recalled_memory")

const budgetArb: fc.Arbitrary<ProjectionLayout.ProjectionBudget> = fc.oneof(
  fc.nat({ max: 100_000 }).map(ProjectionLayout.tokens),
  fc.nat({ max: 400_000 }).map(ProjectionLayout.chars),
  fc.constant(ProjectionLayout.unbounded)
)
const usedArb = fc.record({ usedChars: fc.nat({ max: 500_000 }), usedTokens: fc.nat({ max: 120_000 }) })

describe("recallSearchLimit", () => {
  const limit = (
    fields: Partial<Parameters<typeof ContextProjection.recallSearchLimit>[0]> = {}
  ) =>
    ContextProjection.recallSearchLimit({
      mode: "native",
      query: "who am I?",
      budget: ProjectionLayout.tokens(16_000),
      used: () => ({ usedChars: 0, usedTokens: 0 }),
      cap: 300,
      ...fields
    })

  it("asks for what the budget left holds, at most the cap, and at least one line", () => {
    expect(limit()).toBe(300) // 16,000 / 40 = 400 lines, capped at 300
    expect(limit({ used: () => ({ usedChars: 0, usedTokens: 15_000 }) })).toBe(25)
    expect(limit({ used: () => ({ usedChars: 0, usedTokens: 16_000 }) })).toBe(1)
    expect(limit({ budget: ProjectionLayout.chars(1_000), used: () => ({ usedChars: 500, usedTokens: 0 }) })).toBe(5)
    expect(limit({ budget: ProjectionLayout.unbounded, cap: 7 })).toBe(7)
  })

  it("does not search, nor measure the other sections, for a mode without recall or a blank query", () => {
    let measured = 0
    const used = () => {
      measured++
      return { usedChars: 0, usedTokens: 0 }
    }
    expect(limit({ mode: "incognito", used })).toBe(0)
    expect(limit({ mode: "subagent", used })).toBe(0)
    expect(limit({ query: "  \n ", used })).toBe(0)
    expect(measured).toBe(0)
    expect(limit({ mode: "autonomous", used })).toBe(300)
    expect(measured).toBe(1)
  })

  it("is 0 exactly when recall does not run, else between 1 and the cap, and never grows as more is used", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...modes),
        fc.oneof(fc.constant(""), fc.constant("   "), fc.string({ minLength: 1, maxLength: 20 })),
        budgetArb,
        usedArb,
        usedArb,
        fc.integer({ min: 1, max: 1_000 }),
        (mode, query, budget, a, b, cap) => {
          const of = (used: typeof a) =>
            ContextProjection.recallSearchLimit({ mode, query, budget, used: () => used, cap })
          const runs = recalls(mode) && query.trim() !== ""
          const n = of(a)
          if (!runs) return n === 0
          const more = { usedChars: a.usedChars + b.usedChars, usedTokens: a.usedTokens + b.usedTokens }
          return n >= 1 && n <= cap && of(more) <= n &&
            n === Math.max(1, ContextProjection.recallLimitFor(budget, a, cap))
        }
      )
    )
  })
})

describe("withoutSummaries", () => {
  const hit = (fields: Partial<MemoryRecord.MemoryRecord>) => ({ record: record(fields), score: 1 })

  it("drops session summaries (tagged with their session, or in a session scope) and keeps the rest in order", () => {
    const hits = [
      hit({ id: "a" }),
      hit({ id: "summary", kind: "episode", tags: ["session:s-1"] }),
      hit({ id: "b", kind: "episode" }),
      hit({ id: "scoped", scope: "session:s-2" }),
      hit({ id: "c", tags: ["sessions"] })
    ]
    expect(ContextProjection.withoutSummaries(hits).map((h) => h.record.id)).toEqual(["a", "b", "c"])
  })

  it("keeps exactly the hits the digest would not read as a summary, in order", () => {
    const fields = fc.record({
      id: fc.stringMatching(/^m[a-z0-9]{1,6}$/),
      kind: fc.constantFrom<MemoryRecord.MemoryKind>("episode", "fact", "profile"),
      tags: fc.array(fc.constantFrom("session:s-1", "session:s-2", "ops", "session:"), { maxLength: 2 }),
      scope: fc.constantFrom("global", "session:s-3", "project:x")
    })
    fc.assert(
      fc.property(fc.array(fields, { maxLength: 12 }), (all) => {
        const hits = all.map((f) => hit(f))
        const kept = ContextProjection.withoutSummaries(hits)
        const expected = hits.filter((h) => Option.isNone(PriorSessionDigest.fromRecord(h.record)))
        return kept.length === expected.length && kept.every((h, i) => h === expected[i])
      })
    )
  })
})

describe("addressesOf", () => {
  const source: ContextProjection.IdentitySource = {
    spec: RoutingPresets.userBackground,
    scope: "global",
    context: Routing.routingContext(RoutingPresets.userBackgroundSections),
    heldAddresses: []
  }

  it("gives each record the address routing gives it, whatever its scope (one slot across scopes), and others none", () => {
    const addresses = ContextProjection.addressesOf(source, [
      record({ id: "name", label: "name" }),
      record({ id: "elsewhere", label: "name", scope: "project:x" }),
      record({ id: "note", kind: "episode", content: "We met on Tuesday" })
    ])
    const name = Routing.placementKey(Routing.background("about_user", "name"))
    expect(addresses).toEqual({ name, elsewhere: name })
  })

  it("gives no address, and does not throw, when the spec cannot place a record", () => {
    const broken: Routing.MemoryRoutingSpec = {
      ...RoutingPresets.userBackground,
      route: (r) => (r.label === "boom" ? { primitive: "background", section: "", key: "x" } : null)
    }
    const throwing: Routing.MemoryRoutingSpec = {
      ...RoutingPresets.userBackground,
      route: () => {
        throw new Error("the spec fell over")
      }
    }
    const records = [record({ id: "a", label: "boom" }), record({ id: "b", label: "name" })]
    expect(ContextProjection.addressesOf({ ...source, spec: broken }, records)).toEqual({})
    expect(ContextProjection.addressesOf({ ...source, spec: throwing }, records)).toEqual({})
  })

  it("agrees with the route evaluation for every record, whatever the spec places", () => {
    const placement = fc.oneof(
      fc.constant(null),
      fc.record({
        primitive: fc.constant("background" as const),
        section: fc.constantFrom("about_user", "preferences", "undeclared", ""),
        key: fc.constantFrom("name", "tea", "")
      })
    )
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ label: fc.constantFrom("name", "tea", "x"), scope: fc.constantFrom("global", "project:x") }),
          {
            maxLength: 8
          }
        ),
        fc.func(placement),
        (fields, route) => {
          // No declared keys, so the address is the placement's as the spec returned it.
          const spec: Routing.MemoryRoutingSpec = {
            key: "any",
            version: "1",
            route: (r) => route(r.label),
            finalize: Routing.finalizeOldestFirst
          }
          const records = fields.map((f, i) => record({ ...f, id: `m${i}` }))
          const addresses = ContextProjection.addressesOf({ ...source, spec }, records)
          return records.every((r) => {
            const routed = route(r.label)
            const valid = routed !== null && routed.section !== "" && routed.key !== ""
            const expected = valid ? Routing.placementKey(routed) : undefined
            return addresses[r.id] === expected
          })
        }
      )
    )
  })
})

describe("nextRecallLimit", () => {
  // A round of 40 hits whose delivered lines leave most of a 4,000-token budget free.
  const projection = ProjectionLayout.composeProjectedContext({
    now: DateTime.unsafeMake("2025-03-01T12:00:00.000Z"),
    recall: Array.from({ length: 10 }, (_, i) => ({
      record: record({ id: `r-${i}`, content: `the ferry to island ${i} leaves at noon` }),
      score: 10 - i
    }))
  }, { budget: ProjectionLayout.tokens(4_000) })
  const next = (relevant: number, options: { readonly limit?: number; readonly more?: boolean } = {}) =>
    Decisions.nextRecallLimit({
      budget: ProjectionLayout.tokens(4_000),
      projection,
      limit: options.limit ?? 40,
      cap: 10_000,
      hits: 10,
      added: { returned: 40, relevant },
      more: options.more ?? true
    })

  it("asks for more the more of the round's new hits the relevance step dropped (decisions 0181, 0216)", () => {
    // Every hit kept: the room at the lines' measured cost, a quarter more.
    const perHit = projection.section("recalled_memory")!.tokens / 10
    const room = 4_000 - projection.budget.usedTokens
    expect(next(40)).toBe(Math.ceil(40 + (room / perHit) * 1.25) + 1)
    // A quarter kept: four times the hits for the same room.
    expect(next(10)).toBe(Math.ceil(40 + (room / perHit / 0.25) * 1.25) + 1)
    // Fewer than a tenth kept is read as a tenth, so one bad round cannot ask for the whole cap.
    expect(next(2)).toBe(Math.ceil(40 + (room / perHit / 0.1) * 1.25) + 1)
  })

  it("stops for budget when the round's last hit or a delivered hit's neighbour was shed, not for a line filled past (decision 0222)", () => {
    const shedding = (shed: ReadonlyArray<ProjectionLayout.ShedItem>) =>
      Decisions.nextRecallLimit({
        budget: ProjectionLayout.tokens(4_000),
        projection: new ProjectionLayout.ProjectedContext({
          ...projection,
          budget: { ...projection.budget, shed }
        }),
        limit: 40,
        cap: 10_000,
        hits: 11,
        lastHit: "r-9",
        added: { returned: 40, relevant: 40 },
        more: true
      })
    const long = { section: "recalled_memory", ref: "long", chars: 30_000 } as const
    // A long hit and its neighbour filled past: the hits below may still fit.
    expect(shedding([{ ...long }, { section: "recalled_memory", ref: "n-1", chars: 20, neighbourOf: "long" }]))
      .toBeGreaterThan(40)
    expect(shedding([long, { section: "recalled_memory", ref: "r-9", chars: 40 }])).toBeUndefined()
    expect(shedding([long, { section: "recalled_memory", ref: "n-2", chars: 20, neighbourOf: "r-3" }]))
      .toBeUndefined()
  })

  it("stops when no more candidates exist, not when the round's new hits held no relevant one (decision 0229)", () => {
    // None of the round's new hits kept: read on, as far as a round that kept a tenth.
    expect(next(0)).toBe(next(2))
    expect(next(0)).toBeGreaterThanOrEqual(80)
    expect(next(40, { more: false })).toBeUndefined()
    expect(next(0, { more: false })).toBeUndefined()
  })

  it("at least doubles the limit, so the rounds are at most 1 + log2(cap / first limit)", () => {
    // The room holds a few lines more than a limit of 1,000 already took: the next asks for 2,000.
    expect(next(40, { limit: 1_000 })).toBe(2_000)
    let limit = 1
    let rounds = 1
    for (let n = next(40, { limit }); n !== undefined && n < 10_000; n = next(40, { limit })) {
      expect(n).toBeGreaterThanOrEqual(2 * limit)
      limit = n
      rounds++
    }
    expect(rounds).toBeLessThanOrEqual(1 + Math.log2(10_000))
  })

  it("never asks for less when fewer hits were kept", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 40 }), (a, b) => {
      const [fewer, more] = a <= b ? [a, b] : [b, a]
      expect(next(fewer)!).toBeGreaterThanOrEqual(next(more)!)
    }))
  })
})
