/**
 * Cache hints (D1) through `NativeRuntime`, read off the requests a capturing model received: a
 * breakpoint at the end of the stable prefix and one at the turn's input (the rolling boundary),
 * never on the projection or anything after it.
 */
import type * as Prompt from "@effect/ai/Prompt"
import { describe, expect, it } from "@effect/vitest"
import { ProjectionLayout } from "@engram/core"
import { ModelRequest, NativeRuntime } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import { agent, environment, seed } from "./agentFixtures.js"

/** Recalls once per turn, then answers. */
const script: ScriptedModel.Script = (request) =>
  ScriptedModel.pendingToolResults(request).length > 0
    ? [ScriptedModel.text("ok")]
    : [ScriptedModel.toolCall("memory_recall", { query: "teal" })]

const textOf = (message: Prompt.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part ? part.text : part.type)).join("")

/** Each message of a request: its role, the start of its text, and whether it carries the hint. */
const marks = (request: ScriptedModel.ScriptedRequest) =>
  request.prompt.content.map((message) => ({
    role: message.role,
    text: textOf(message).slice(0, 16),
    hinted: JSON.stringify(message.options) === JSON.stringify(ModelRequest.CACHE_HINTS),
    projection: message.role === "user" && ProjectionLayout.containsProjection(textOf(message))
  }))

describe("cache hints", () => {
  it.effect("mark the end of the prefix and the turn's input; never the projection; the boundary rolls", () =>
    Effect.gen(function*() {
      yield* seed([{ content: "Doug likes teal", kind: "fact" }])
      const doug = yield* agent()
      yield* NativeRuntime.runTurn({ agent: doug, sessionId: "s-1", input: "teal?" })
      yield* NativeRuntime.runTurn({ agent: doug, sessionId: "s-1", input: "teal again?" })
      const requests = yield* ScriptedModel.requests
      expect(requests).toHaveLength(4)
      for (const request of requests) {
        const m = marks(request)
        const projection = m.findIndex((message) => message.projection)
        expect(projection).toBeGreaterThan(0)
        // Exactly two breakpoints: the system message, and the message right before the projection.
        expect(m.flatMap((message, i) => (message.hinted ? [i] : []))).toEqual([0, projection - 1])
        expect(m[0]!.role).toBe("system")
        expect(m[projection - 1]!.role).toBe("user")
      }
      // Turn 2: the boundary moved to the new input; turn 1's input is plain history now.
      const second = marks(requests[2]!)
      expect(second.filter((message) => message.hinted).map((message) => message.text)).toEqual([
        "You are a compan",
        "teal again?"
      ])
      expect(second.find((message) => message.text === "teal?")?.hinted).toBe(false)
    }).pipe(Effect.provide(environment(script))))

  it.effect("can be turned off, or replaced with another provider's options", () =>
    Effect.gen(function*() {
      const plain = yield* agent({ cacheHints: false })
      yield* NativeRuntime.runTurn({ agent: plain, sessionId: "s-1", input: "hello" })
      const openrouter = { openrouter: { cacheControl: { type: "ephemeral" } } }
      const other = yield* agent({ cacheHints: openrouter })
      yield* NativeRuntime.runTurn({ agent: other, sessionId: "s-2", input: "hello" })
      const [off, , on] = yield* ScriptedModel.requests
      expect(off!.prompt.content.every((message) => Object.keys(message.options).length === 0)).toBe(true)
      expect(on!.prompt.content[0]!.options).toEqual(openrouter)
    }).pipe(Effect.provide(environment(script))))
})
