/**
 * A correction wins, on the path that ships: the model saves through `NativeRuntime.runTurn`, the
 * save gate compares canonical keys, the conflict envelope carries the holder's value and the exact
 * retry, and the next session's request (as `PromptObserver` captured it) shows the corrected name
 * and not the old one.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, RoutingPresets, RoutingSpecs } from "@engram/core"
import { type MemoryTools, NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { environment } from "./agentFixtures.js"

type Behaviour = "retry" | "give-up"

/**
 * A model that saves what the user tells it under `label`, and — when the save is a conflict —
 * either makes the call the envelope's `retry` gives or gives up.
 */
const model = (label: string, behaviour: Behaviour): ScriptedModel.Script => (request) => {
  const pending = ScriptedModel.pendingToolResults(request)
  const result = pending[pending.length - 1]
  if (result !== undefined) {
    const answered = result.result as MemoryTools.SaveResult
    if (answered.status === "conflict" && behaviour === "retry" && answered.retry !== undefined) {
      return [ScriptedModel.toolCall("memory_save", answered.retry.arguments)]
    }
    return [ScriptedModel.text("Noted.")]
  }
  const said = ScriptedModel.lastUserText(request)
  const name = /my name is (\w+)/i.exec(said)?.[1]
  return name === undefined
    ? [ScriptedModel.text("Hello!")]
    : [ScriptedModel.toolCall("memory_save", { kind: "profile", content: `The user's name is ${name}`, label })]
}

const env = (script: ScriptedModel.Script) => Layer.merge(environment(script), RoutingSpecs.layerPresets)

/** One turn in a fresh session of an agent built from the store: the request text it sent first. */
const turn = (sessionId: string, input: string) =>
  Effect.gen(function*() {
    const agent = yield* NativeRuntime.fromConfig({
      spec: "user-background",
      persona: "You are a companion.",
      background: RoutingPresets.userBackgroundSections
    })
    yield* NativeRuntime.runTurn({ agent, sessionId, input })
    const snapshots = (yield* PromptObserver.captured).filter((s) => s.sessionId === sessionId)
    return {
      snapshots,
      text: snapshots[0]!.request.fragments.map((fragment) => fragment.text).join("\n")
    }
  })

const mentions = (text: string, name: string) => new RegExp(`\\b${name}\\b`).test(text)

describe("a correction, through the native loop", () => {
  const run = (labels: { readonly first: string; readonly correction: string }, behaviour: Behaviour) =>
    Effect.gen(function*() {
      const script: ScriptedModel.Script = (request) =>
        model(/Actually/.test(ScriptedModel.lastUserText(request)) ? labels.correction : labels.first, behaviour)(
          request
        )
      return yield* Effect.gen(function*() {
        yield* turn("s-1", "Hi! My name is Doug.")
        yield* TestClock.adjust("1 minute")
        const fix = yield* turn("s-2", "Actually my name is Douglas.")
        yield* TestClock.adjust("1 minute")
        const next = yield* turn("s-3", "What's my name?")
        const requests = yield* ScriptedModel.requests
        return { fix, next, requests }
      }).pipe(Effect.provide(env(script)))
    })

  it.effect("retried with supersedes after the conflict (same label): the next prompt shows Douglas, not Doug", () =>
    Effect.gen(function*() {
      const { fix, next, requests } = yield* run({ first: "name", correction: "name" }, "retry")
      // The first save of the correction was refused; the envelope carried the holder's value and the retry.
      const conflict = fix.snapshots[1]!.request.prompt.content.flatMap((m) => m.role === "tool" ? m.content : [])
      const answered = conflict[conflict.length - 1]!.result as MemoryTools.SaveResult
      expect(answered).toMatchObject({
        status: "conflict",
        holder: { key: "name", content: "The user's name is Doug" },
        retry: {
          tool: "memory_save",
          arguments: { kind: "profile", content: "The user's name is Douglas", label: "name", supersedes: "mem-000001" }
        }
      })
      expect(mentions(next.text, "Douglas")).toBe(true)
      expect(mentions(next.text, "Doug")).toBe(false)
      // The model was shown the agent's keys in memory_save's description.
      expect(requests[0]!.toolDescriptions?.memory_save).toContain("- About the User: name (the user's name)")
    }))

  for (const alias of ["first_name", "Full Name", "user_name", "my name", "called"]) {
    it.effect(`saved under the alias "${alias}" of the same key: conflict, retry, and only Douglas remains`, () =>
      Effect.gen(function*() {
        const { next } = yield* run({ first: "name", correction: alias }, "retry")
        expect(mentions(next.text, "Douglas")).toBe(true)
        expect(mentions(next.text, "Doug")).toBe(false)
      }))
  }

  it.effect("a model that gives up after the conflict leaves the old name, alone: never both", () =>
    Effect.gen(function*() {
      const { next } = yield* run({ first: "name", correction: "first_name" }, "give-up")
      expect(mentions(next.text, "Doug")).toBe(true)
      expect(mentions(next.text, "Douglas")).toBe(false)
    }))

  it.effect("a model's restatement in a later session writes nothing and counts on the holder with that session", () =>
    Effect.gen(function*() {
      yield* turn("s-1", "Hi! My name is Doug.")
      yield* TestClock.adjust("1 minute")
      yield* turn("s-2", "As I said, my name is Doug.")
      const store = yield* MemoryStore.MemoryStore
      const { records } = yield* store.list({ includeSuperseded: true })
      expect(records.map((r) => [r.content, r.corroboration?.count, r.corroboration?.sessions])).toEqual([
        ["The user's name is Doug", 1, ["s-2"]]
      ])
    }).pipe(Effect.provide(env(model("name", "retry")))))
})
