import { describe, expect, it } from "@effect/vitest"
import { type MemoryRecord, RoutingSpecs, SessionStore } from "@engram/core"
import { PromptObserver, StablePrefix, Turn } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { environment, prefix, seed } from "./agentFixtures.js"

/** 400 facts about ferries: far more than any budget below holds. */
const ferries: ReadonlyArray<MemoryRecord.MemoryWriteInput> = Array.from({ length: 400 }, (_, i) => ({
  content: `The ferry to island ${i} leaves from pier ${i % 7} at ${i % 24}:00`,
  kind: "fact"
}))

const turnAgent = (settings?: Turn.TurnSettings): Turn.TurnAgent => ({
  prefix,
  scopes: ["global"],
  mode: "native",
  ...(settings !== undefined ? { projection: settings } : {})
})

const request = (sessionId: string) =>
  Effect.map(DateTime.now, (at): Turn.TurnRequest => ({
    sessionId,
    turn: 1,
    input: new SessionStore.OperatorMessage({ text: "when does the ferry leave?", at }),
    history: []
  }))

describe("Turn (decision 0166)", () => {
  it.effect("two agents in one process, one projection layer: each gets its own budget; a call's settings win", () =>
    Effect.gen(function*() {
      yield* seed(ferries)
      const small = turnAgent({ contextWindowTokens: 20_000, budgetPct: 25 })
      const plain = turnAgent()
      const fromSmall = yield* Turn.compose(small, yield* request("small"))
      const fromPlain = yield* Turn.compose(plain, yield* request("plain"))
      expect(fromSmall.projection.budget.budgetTokens).toBe(5_000)
      expect(fromPlain.projection.budget.budgetTokens).toBe(16_000)
      // One call's own settings over the agent's.
      const overridden = yield* Turn.compose(small, yield* request("small-2"), { budgetTokens: 1_000 })
      expect(overridden.projection.budget.budgetTokens).toBe(1_000)
      // Each composed request carries its own projection, and each was observed once.
      const observed = yield* PromptObserver.captured
      expect(observed.map((s) => [s.sessionId, s.turn, s.call, s.projection.budget.budgetTokens])).toEqual([
        ["small", 1, 0, 5_000],
        ["plain", 1, 0, 16_000],
        ["small-2", 1, 0, 1_000]
      ])
    }).pipe(Effect.provide(environment(() => [ScriptedModel.text("ok")]))))

  it.effect("an agent config's projection reaches the turn through the built agent", () =>
    Effect.gen(function*() {
      yield* seed(ferries)
      const config = yield* StablePrefix.decodeConfig({
        persona: "You are a companion.",
        projection: { budgetTokens: 700 }
      })
      const built = yield* StablePrefix.buildAgent(config)
      const composed = yield* Turn.compose({ ...built, mode: "external" }, yield* request("configured"))
      expect(composed.projection.budget.budgetTokens).toBe(700)
    }).pipe(Effect.provide(Layer.merge(environment(() => [ScriptedModel.text("ok")]), RoutingSpecs.layerPresets))))

  it.effect("record: false composes without observing (previews, replay)", () =>
    Effect.gen(function*() {
      const preview = yield* Turn.compose(turnAgent(), { ...(yield* request("preview")), record: false })
      expect(preview.request.prompt.content.length).toBeGreaterThan(0)
      expect(yield* PromptObserver.captured).toEqual([])
    }).pipe(Effect.provide(environment(() => [ScriptedModel.text("ok")]))))
})
