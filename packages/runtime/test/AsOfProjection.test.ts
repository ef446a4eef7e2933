/**
 * A projection as of an instant (decision 0175): `asOf` travels with the call like every other
 * projection setting, and every memory tier delivers the values valid then.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore } from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { agent, environment, projectionText, seed } from "./agentFixtures.js"

const answer: ScriptedModel.Script = () => [ScriptedModel.text("ok")]
const at = (iso: string) => DateTime.unsafeMake(iso)

/**
 * The user's address over time, written now (2026-01-15): Elm Street from 2024-01, Oak Avenue from
 * 2025-03 (said later, about March); an always-on office hours fact that held only in 2024; a
 * trip that starts next month.
 */
const history = Effect.gen(function*() {
  yield* TestClock.setTime(Date.parse("2026-01-10T00:00:00Z"))
  yield* seed([
    { id: "elm", content: "The user's address is Elm Street", kind: "fact", validFrom: at("2024-01-01T00:00:00Z") },
    {
      id: "hours",
      content: "Office hours are 8 to 4",
      kind: "fact",
      deliveryPolicy: "always",
      validFrom: at("2024-01-01T00:00:00Z"),
      validTo: at("2025-01-01T00:00:00Z")
    },
    { id: "trip", content: "The user's trip address is Lisbon", kind: "fact", validFrom: at("2026-02-01T00:00:00Z") }
  ])
  yield* TestClock.setTime(Date.parse("2026-01-15T00:00:00Z"))
  const store = yield* MemoryStore.MemoryStore
  yield* store.supersede("elm", {
    id: "oak",
    content: "The user's address is Oak Avenue",
    kind: "fact",
    sourceType: "operator",
    validFrom: at("2025-03-01T00:00:00Z")
  })
})

describe("a projection as of an instant (decision 0175)", () => {
  it.effect("delivers the values valid then, through the native loop; without asOf, the values valid now", () =>
    Effect.gen(function*() {
      yield* history
      const companion = yield* agent()
      const ask = (sessionId: string, asOf?: string) =>
        NativeRuntime.runTurn({
          agent: companion,
          sessionId,
          input: "what is my address?",
          ...(asOf !== undefined ? { settings: { asOf: at(asOf) } } : {})
        })
      yield* ask("now")
      yield* ask("spring-2024", "2024-05-01T00:00:00Z")
      yield* ask("spring-2025", "2025-04-15T00:00:00Z")
      yield* ask("next-month", "2026-02-15T00:00:00Z")
      const texts = (yield* ScriptedModel.requests).map((request) => projectionText(request).join("\n"))
      const shown = (text: string) =>
        ["Elm Street", "Oak Avenue", "Lisbon", "Office hours"].filter((value) => text.includes(value))
      expect(texts.map(shown)).toEqual([
        ["Oak Avenue"],
        ["Elm Street", "Office hours"],
        ["Oak Avenue"],
        ["Oak Avenue", "Lisbon"]
      ])
      const ids = (yield* PromptObserver.captured).map((s) => [...s.projection.injection.memoryIds].sort())
      expect(ids).toEqual([["oak"], ["elm", "hours"], ["oak"], ["oak", "trip"]])
    }).pipe(Effect.provide(environment(answer))))

  it.effect("an agent's own asOf applies to each of its calls, and a call's asOf wins over it", () =>
    Effect.gen(function*() {
      yield* history
      const pinned = yield* agent({ projection: { asOf: at("2024-05-01T00:00:00Z") } })
      yield* NativeRuntime.runTurn({ agent: pinned, sessionId: "a", input: "what is my address?" })
      yield* NativeRuntime.runTurn({
        agent: pinned,
        sessionId: "b",
        input: "what is my address?",
        settings: { asOf: at("2025-04-15T00:00:00Z") }
      })
      const ids = (yield* PromptObserver.captured).map((s) =>
        s.projection.injection.memoryIds.filter((id) => id !== "hours")
      )
      expect(ids).toEqual([["elm"], ["oak"]])
    }).pipe(Effect.provide(environment(answer))))

  it.effect("an asOf that is no instant fails the call, naming the field", () =>
    Effect.gen(function*() {
      const companion = yield* agent()
      const result = yield* Effect.either(NativeRuntime.runTurn({
        agent: companion,
        sessionId: "s-1",
        input: "address?",
        settings: { asOf: "last spring" as unknown as DateTime.Utc }
      }))
      expect(result._tag).toBe("Left")
      expect(result._tag === "Left" && result.left.message).toContain("asOf")
    }).pipe(Effect.provide(environment(answer))))
})
