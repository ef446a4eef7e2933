import { describe, expect, it } from "@effect/vitest"
import { SessionStore } from "@engram/core"
import { NativeRuntime, Replay } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import * as TestContext from "effect/TestContext"
import { agent, environment, injections, projectionText, seed } from "./agentFixtures.js"

/** Recalls when asked about something, saves when told a name, otherwise answers. */
const script: ScriptedModel.Script = (request) => {
  const input = ScriptedModel.lastUserText(request)
  if (ScriptedModel.pendingToolResults(request).length > 0) return [ScriptedModel.text(`Done with: ${input}`)]
  const name = /I'm (\w+)/.exec(input)?.[1]
  if (name !== undefined) {
    const content = `The user's name is ${name}`
    return [ScriptedModel.toolCall("memory_save", { kind: "profile", content, label: "name" })]
  }
  if (input.startsWith("recall ")) {
    return [ScriptedModel.toolCall("memory_recall", { query: input.slice("recall ".length) })]
  }
  return [ScriptedModel.text(`You said: ${input}`)]
}

const json = (requests: ReadonlyArray<{ readonly prompt: ScriptedModel.ScriptedRequest["prompt"] }>) =>
  requests.map((r) => ScriptedModel.promptJson(r.prompt))

const seeded = seed([
  { content: "The staging database is db-2", kind: "fact" },
  { content: "Deploys happen on Tuesdays", kind: "decision" },
  { content: "Answer in one short paragraph", kind: "standing", deliveryPolicy: "always" }
])

describe("replay", () => {
  it.effect("rebuilds byte-identical model requests from a stored session against the same store state", () =>
    Effect.gen(function*() {
      yield* seeded
      yield* TestClock.adjust("1 hour")
      const live = yield* agent({ approval: (call) => JSON.stringify(call.params).includes("deploys") })
      const run = (input: string) => NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input })
      yield* run("what about the staging database?")
      yield* run("recall staging database")
      // A frame an older design stored: kept, stripped live and on replay alike.
      yield* Effect.flatMap(SessionStore.SessionStore, (store) =>
        store.append("s-1", [
          new SessionStore.OperatorMessage({
            text: "<injected_memory>\nold frame\n</injected_memory>",
            at: DateTime.unsafeMake(0),
            legacyContextFrame: true
          })
        ]))
      const suspended = yield* run("recall deploys")
      expect(suspended._tag).toBe("Suspended")
      yield* NativeRuntime.resume({ agent: live, sessionId: "s-1", decision: NativeRuntime.approveAll })
      yield* run("thanks")

      const sent = yield* ScriptedModel.requests
      const rows = (yield* injections("s-1")).length
      const replayed = yield* Replay.replaySession({ agent: live, sessionId: "s-1" })

      expect(json(replayed.map((call) => call.request))).toEqual(json(sent))
      expect(replayed.map((call) => [call.turn, call.call])).toEqual([[1, 0], [2, 0], [2, 1], [3, 0], [3, 1], [4, 0]])
      // Replay calls no model and writes no injection row.
      expect(yield* ScriptedModel.requests).toHaveLength(sent.length)
      expect(yield* injections("s-1")).toHaveLength(rows)
    }).pipe(Effect.provide(environment(script))))

  it.effect("recomposes each turn's context from the store as it is now, never from what was sent", () =>
    Effect.gen(function*() {
      yield* seeded
      const live = yield* agent()
      yield* NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input: "what about the staging database?" })
      const [sent] = yield* ScriptedModel.requests
      expect(projectionText(sent!)[0]).not.toContain("db-3")

      yield* seed([{ content: "The staging database moved to db-3", kind: "fact" }])
      const [replayed] = yield* Replay.replaySession({ agent: live, sessionId: "s-1" })
      const now = replayed!.request.prompt.content.map((m) => m.role)
      expect(now).toEqual(sent!.prompt.content.map((m) => m.role))
      expect(projectionText({ index: 0, prompt: replayed!.request.prompt, tools: [] })[0]).toContain("db-3")
    }).pipe(Effect.provide(environment(script))))

  it.effect("the same scripted session on the same starting state sends the same bytes every run", () =>
    Effect.gen(function*() {
      const session = Effect.gen(function*() {
        yield* seeded
        const live = yield* agent()
        const inputs = ["Hi, I'm Doug", "recall name", "what about the staging database?", "I'm Douglas actually"]
        for (const input of inputs) {
          yield* NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input })
          yield* TestClock.adjust("1 minute")
        }
        return json(yield* ScriptedModel.requests)
      })
      // Each run gets fresh stores and a fresh TestClock: the same starting state.
      const fresh = Layer.merge(environment(script), TestContext.TestContext)
      const first = yield* Effect.provide(session, fresh)
      const second = yield* Effect.provide(session, fresh)
      expect(first.length).toBeGreaterThan(4)
      expect(second).toEqual(first)
      // The saved memory's id shows up in later requests: ids are part of what must repeat.
      expect(first.some((request) => request.includes("mem-000004"))).toBe(true)
    }))
})
