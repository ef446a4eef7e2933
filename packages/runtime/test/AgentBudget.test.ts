import { describe, expect, it } from "@effect/vitest"
import { type MemoryRecord, TokenEstimator } from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import { agent, environment, projectionText, seed } from "./agentFixtures.js"

const answer: ScriptedModel.Script = () => [ScriptedModel.text("ok")]

/** 400 facts about ferries: far more than a small budget holds. */
const ferries: ReadonlyArray<MemoryRecord.MemoryWriteInput> = Array.from({ length: 400 }, (_, i) => ({
  content: `The ferry to island ${i} leaves from pier ${i % 7} at ${i % 24}:00`,
  kind: "fact"
}))

describe("budgets travel with the agent and the call (decision 0182)", () => {
  it.effect("two agents in one process, with different budgets, each get their own through the native loop", () =>
    Effect.gen(function*() {
      yield* seed(ferries)
      const small = yield* agent({ projection: { budgetTokens: 512 } })
      const large = yield* agent({ projection: { budgetTokens: 6_000 } })
      const layerDefault = yield* agent()
      yield* NativeRuntime.runTurn({ agent: small, sessionId: "small", input: "when does the ferry leave?" })
      yield* NativeRuntime.runTurn({ agent: large, sessionId: "large", input: "when does the ferry leave?" })
      yield* NativeRuntime.runTurn({ agent: layerDefault, sessionId: "plain", input: "when does the ferry leave?" })
      // The same agent, one call with its own budget over the agent's.
      yield* NativeRuntime.runTurn({
        agent: large,
        sessionId: "large",
        input: "when does the ferry leave?",
        settings: { budgetTokens: 1_000 }
      })
      const snapshots = yield* PromptObserver.captured
      const budgets = snapshots.map((s) => [s.sessionId, s.projection.budget.budgetTokens])
      expect(budgets).toEqual([["small", 512], ["large", 6_000], ["plain", 2_000], ["large", 1_000]])
      // What each model call got, counted by o200k_base: inside its own budget, and filling it
      // (the facts outnumber what any of these budgets holds).
      const requests = yield* ScriptedModel.requests
      expect(requests).toHaveLength(4)
      for (const [i, request] of requests.entries()) {
        const [text] = projectionText(request)
        const used = yield* TokenEstimator.estimate(text!)
        const budget = snapshots[i]!.projection.budget.budgetTokens!
        expect(snapshots[i]!.projection.budget.usedTokens).toBe(used)
        expect(used).toBeLessThanOrEqual(budget)
        expect(used).toBeGreaterThanOrEqual(0.9 * budget)
      }
    }).pipe(Effect.provide(environment(answer, { budgetTokens: 2_000 }))))

  it.effect("a budget under 256 tokens is refused, naming the field", () =>
    Effect.gen(function*() {
      const tiny = yield* agent({ projection: { budgetTokens: 100 } })
      const result = yield* Effect.either(NativeRuntime.runTurn({ agent: tiny, sessionId: "s-1", input: "ferry?" }))
      expect(result._tag).toBe("Left")
      expect(result._tag === "Left" && result.left.message).toContain("budgetTokens must be an integer of at least 256")
    }).pipe(Effect.provide(environment(answer))))
})

/** 200 memories full of function words; none names a garden or the weather. */
const twoHundred: ReadonlyArray<MemoryRecord.MemoryWriteInput> = [
  { content: "The staging database is db-2 and it is what the team uses", kind: "fact" },
  ...Array.from({ length: 199 }, (_, i): MemoryRecord.MemoryWriteInput => ({
    content: `What the ${["team", "client", "deploy", "office", "invoice"][i % 5]} ${i} is about: it was ${
      ["moved", "paid", "fixed", "closed"][i % 4]
    } on the ${i % 28 + 1}th`,
    kind: i % 3 === 0 ? "episode" : "fact"
  }))
]

describe("relevance before budget (decision 0180)", () => {
  it.effect("on a 200-memory store, a question that shares only function words with every memory recalls nothing, and says so", () =>
    Effect.gen(function*() {
      yield* seed(twoHundred)
      const companion = yield* agent()
      yield* NativeRuntime.runTurn({ agent: companion, sessionId: "s-1", input: "what about the garden?" })
      yield* NativeRuntime.runTurn({ agent: companion, sessionId: "s-2", input: "what is the weather" })
      yield* NativeRuntime.runTurn({ agent: companion, sessionId: "s-3", input: "what is it about?" })
      yield* NativeRuntime.runTurn({ agent: companion, sessionId: "s-4", input: "which staging database is it?" })
      const snapshots = yield* PromptObserver.captured
      const [garden, weather, onlyFunction, staging] = snapshots.map((s) => s.projection)
      for (const p of [garden!, weather!, onlyFunction!]) {
        expect(p.section("recalled_memory")).toBeUndefined()
        expect(p.injection.memoryIds).toEqual([])
      }
      // The store's search matched on "the", "what", "about"; the relevance step kept none of it.
      expect(garden!.budget.recall).toMatchObject({ stop: "no-relevant-match", relevant: 0 })
      expect(garden!.budget.recall!.candidates).toBeGreaterThan(0)
      expect(weather!.budget.recall).toMatchObject({ stop: "no-relevant-match", relevant: 0 })
      // Only function words: nothing is searched at all.
      expect(onlyFunction!.budget.recall).toMatchObject({ stop: "no-content-words", searches: 0 })
      // A content word still recalls the one memory that has it, and only it.
      expect(staging!.section("recalled_memory")!.memoryIds).toHaveLength(1)
      expect(staging!.text).toContain("The staging database is db-2")
      expect(staging!.budget.recall).toMatchObject({ stop: "candidates-exhausted", relevant: 1 })
      const requests = yield* ScriptedModel.requests
      expect(projectionText(requests[1]!).join("")).not.toContain("staging database")
    }).pipe(Effect.provide(environment(answer))))

  it.effect("a store whose search is trusted (a hybrid store with a similarity floor) keeps every hit", () =>
    Effect.gen(function*() {
      yield* seed(twoHundred)
      const companion = yield* agent()
      yield* NativeRuntime.runTurn({ agent: companion, sessionId: "s-1", input: "what is the weather" })
      const [p] = (yield* PromptObserver.captured).map((s) => s.projection)
      expect(p!.section("recalled_memory")!.memoryIds.length).toBeGreaterThan(0)
    }).pipe(Effect.provide(environment(answer, { recallRelevance: "search" }))))
})
