/**
 * The named steps of `ContextProjection`'s `project` (0161 (d)) that hold logic of their own: the
 * settings a call runs with, the request it refuses, and how recall is sized before its first
 * search. The reads keep their store-level tests (`ContextProjection.test.ts`, `RecallBudget.test.ts`).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryQuery,
  MemoryStore,
  ProjectionLayout,
  PromotionStore,
  TelemetryStore
} from "@engram/core"
import { Effect, Either, Layer } from "effect"
import * as Steps from "../src/internal/contextProjection.js"

const decode = (input: unknown): Either.Either<ContextProjection.ProjectionOverrides, string> =>
  Either.mapLeft(ContextProjection.decodeSettings(input), (error) => error.problem)

const defaults = ContextProjection.defaultSettings

describe("resolveSettings", () => {
  it("is the defaults when the call carries none", () => {
    expect(Steps.resolveSettings(defaults, {}, decode)).toEqual(Either.right(defaults))
  })

  it("applies every field the call sets, per call, over the defaults", () => {
    const resolved = Either.getOrThrow(
      Steps.resolveSettings(defaults, { settings: { digest: "off", identityLimit: 0, budgetTokens: 900 } }, decode)
    )
    expect(resolved).toMatchObject({ digest: "off", identityLimit: 0, budgetTokens: 900 })
    expect(ContextProjection.budgetOf(resolved)).toEqual(ProjectionLayout.tokens(900))
    // The defaults are untouched for the next call.
    expect(defaults.digest).toBeUndefined()
  })

  it("refuses a bad value, naming the field", () => {
    const refused = Steps.resolveSettings(defaults, { settings: { budgetTokens: 10 } }, decode)
    expect(Either.isLeft(refused) && refused.left).toContain("budgetTokens")
  })
})

describe("validateRequest", () => {
  it("refuses a bad session id or turn, and passes a good request", () => {
    expect(Either.isRight(Steps.validateRequest({ sessionId: "s-1", turn: 1 }))).toBe(true)
    expect(Either.isLeft(Steps.validateRequest({ sessionId: "", turn: 1 }))).toBe(true)
    const turn = Steps.validateRequest({ sessionId: "s-1", turn: -1 })
    expect(Either.isLeft(turn) && turn.left).toBe("turn must be a non-negative integer, got -1")
    expect(Either.isLeft(Steps.validateRequest({ sessionId: "s-1", turn: 1.5 }))).toBe(true)
  })
})

describe("recallLimitFor", () => {
  const used = () => ({ usedChars: 0, usedTokens: 0 })
  const base = { mode: "native" as const, query: "when does the ferry leave?", unboundedRecallLimit: 300, used }

  it("caps at the settings' recallLimit, else MAX_LIMIT, else the unbounded cap under an unbounded budget", () => {
    const tokens = ProjectionLayout.tokens(16_000)
    expect(Steps.recallLimitFor({ ...base, settings: { ...defaults, recallLimit: 7 }, budget: tokens }).cap).toBe(7)
    expect(Steps.recallLimitFor({ ...base, settings: defaults, budget: tokens }).cap).toBe(MemoryQuery.MAX_LIMIT)
    expect(Steps.recallLimitFor({ ...base, settings: defaults, budget: ProjectionLayout.unbounded }).cap).toBe(300)
  })

  it("does not search for a question of function words, unless the search is trusted", () => {
    const budget = ProjectionLayout.tokens(16_000)
    const plain = Steps.recallLimitFor({ ...base, query: "what about the", settings: defaults, budget })
    expect(plain).toMatchObject({ limit: 0, searchable: false })
    const trusted = Steps.recallLimitFor({
      ...base,
      query: "what about the",
      settings: { ...defaults, recallRelevance: "search" },
      budget
    })
    expect(trusted.searchable).toBe(true)
    expect(trusted.limit).toBeGreaterThan(0)
  })

  it("sizes the first search by the budget left", () => {
    const budget = ProjectionLayout.tokens(4_000)
    const empty = Steps.recallLimitFor({ ...base, settings: defaults, budget })
    const half = Steps.recallLimitFor({
      ...base,
      settings: defaults,
      budget,
      used: () => ({ usedChars: 0, usedTokens: 2_000 })
    })
    expect(half.limit).toBeLessThan(empty.limit)
  })
})

describe("project: a call's own settings reach every step", () => {
  const stores = Layer.mergeAll(
    MemoryStore.layerMemory,
    PromotionStore.layerMemory,
    TelemetryStore.layerMemory,
    IdGenerator.sequential("mem")
  )
  it.effect("a call's digest setting is read per call, not fixed when the layer was built", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([ContextProjection.summaryInput("s-old", "Planned the ferry trip")])
      const projection = yield* ContextProjection.ContextProjection
      const request = { sessionId: "s-new", turn: 1, query: "ferry", scopes: ["global"], mode: "native" } as const
      const newest = yield* projection.project(request)
      expect(newest.text).toContain("Planned the ferry trip")
      const off = yield* projection.project({ ...request, settings: { digest: "off" } })
      expect(off.text).not.toContain("Planned the ferry trip")
    }).pipe(Effect.provide(ContextProjection.layer.pipe(Layer.provideMerge(stores)))))
})
