import { describe, expect, it } from "@effect/vitest"
import { ProjectionLayout } from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { agent, environment, projectionText, seed, stored, storedTexts } from "./agentFixtures.js"

const TURNS = 20

/** Every turn: save a note about the project, then answer. */
const script: ScriptedModel.Script = (request) => {
  const input = ScriptedModel.lastUserText(request)
  const k = /turn (\d+)/.exec(input)?.[1] ?? "0"
  if (ScriptedModel.pendingToolResults(request).length > 0) return [ScriptedModel.text(`Noted for turn ${k}.`)]
  return [
    ScriptedModel.toolCall("memory_save", {
      kind: "note",
      content: `In turn ${k} the project milestone ${k} was reviewed and signed off`,
      label: `milestone ${k}`
    })
  ]
}

// Long records that every query matches: recall alone would overflow the budget.
const filler = (i: number) =>
  `Project log ${i}: ` + Array.from({ length: 40 }, (_, w) => `entry${i}x${w} about the project schedule`).join(", ")

describe("a 20-turn session", () => {
  it.effect("stores no projected context and never projects more than the budget", () =>
    Effect.gen(function*() {
      yield* seed(Array.from({ length: 40 }, (_, i) => ({ content: filler(i), kind: "fact" as const })))
      yield* seed([{ content: "Keep answers short", kind: "standing", deliveryPolicy: "always" }])
      const long = yield* agent({ workingState: "goal: review the project milestones" })
      for (let k = 1; k <= TURNS; k++) {
        const input = `project status, turn ${k}`
        const result = yield* NativeRuntime.runTurn({ agent: long, sessionId: "s-20", input })
        expect(result).toMatchObject({ _tag: "Completed", turn: k })
        yield* TestClock.adjust("1 minute")
      }

      // Nothing projected was stored.
      const messages = yield* stored("s-20")
      expect(messages).toHaveLength(TURNS * 4)
      for (const message of messages) {
        for (const text of storedTexts(message)) {
          expect(ProjectionLayout.containsProjection(text)).toBe(false)
          expect(text).not.toContain(ProjectionLayout.UNTRUSTED_FRAMING)
        }
      }

      // Every call carried exactly one projection, within the budget.
      const snapshots = yield* PromptObserver.captured
      expect(snapshots).toHaveLength(TURNS * 2)
      const requests = yield* ScriptedModel.requests
      for (const request of requests) expect(projectionText(request)).toHaveLength(1)
      const budget = snapshots[0]!.projection.budget.budgetTokens!
      expect(budget).toBe(4_000)
      for (const { projection } of snapshots) {
        expect(projection.budget.usedTokens).toBeLessThanOrEqual(budget)
        // Held by the default estimator's (o200k_base's) count of the whole text.
        expect(projection.budget.usedTokens).toBe(countTokens(projection.text, { disallowedSpecial: new Set() }))
        expect(projection.text.length).toBe(projection.budget.usedChars)
      }
      // The budget was under pressure (recall was shed in most turns), so the bound above was tested, not idle.
      expect(snapshots.filter(({ projection }) => projection.budget.shed.length > 0).length).toBeGreaterThan(TURNS / 2)
      // The protected sections survive every turn.
      for (const { projection } of snapshots) {
        expect(projection.section("working_state")?.status).toBe("included")
        expect(projection.section("always_on_memory")?.status).toBe("included")
      }
    }).pipe(Effect.provide(environment(script, { budgetTokens: 4_000 }))))
})
