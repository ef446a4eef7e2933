import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, ProjectionLayout, SessionStore } from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import { agent, environment, injections, projectionText, seed, stored, storedTexts } from "./agentFixtures.js"

/**
 * Saves the user's name when introduced (if offered memory_save; `rogue` calls it regardless),
 * then answers; answers everything else directly.
 */
const script = (options: { readonly rogue: boolean }): ScriptedModel.Script => (request) => {
  const input = ScriptedModel.lastUserText(request)
  const name = /I'm (\w+)/.exec(input)?.[1]
  if (ScriptedModel.pendingToolResults(request).length > 0) return [ScriptedModel.text("Nice to meet you!")]
  if (name !== undefined && (options.rogue || request.tools.includes("memory_save"))) {
    const content = `The user's name is ${name}`
    return [ScriptedModel.toolCall("memory_save", { kind: "profile", content, label: "name" })]
  }
  return [ScriptedModel.text(`You said: ${input}`)]
}
const companionScript = script({ rogue: false })

const everything = Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({ includeSuperseded: true }))

describe("a turn", () => {
  it.effect("loops until the model stops calling tools and stores only operator, assistant and tool messages", () =>
    Effect.gen(function*() {
      const doug = yield* agent()
      const result = yield* NativeRuntime.runTurn({ agent: doug, sessionId: "s-1", input: "Hi, I'm Doug" })
      expect(result).toMatchObject({ _tag: "Completed", turn: 1, text: "Nice to meet you!", calls: 2 })

      const messages = yield* stored("s-1")
      expect(messages.map((m) => m._tag)).toEqual([
        "OperatorMessage",
        "AssistantMessage",
        "ToolMessage",
        "AssistantMessage"
      ])
      const [, call, tool] = messages
      expect(call).toMatchObject({ toolCalls: [{ name: "memory_save", params: { kind: "profile", label: "name" } }] })
      expect(tool).toMatchObject({ results: [{ name: "memory_save", isFailure: false, result: { status: "saved" } }] })
      expect((yield* everything).records.map((r) => r.content)).toEqual(["The user's name is Doug"])
      for (const message of messages) {
        for (const text of storedTexts(message)) expect(ProjectionLayout.containsProjection(text)).toBe(false)
      }
    }).pipe(Effect.provide(environment(companionScript))))

  it.effect("sends prefix, history, input, projection, then the turn's rounds: one projection per request", () =>
    Effect.gen(function*() {
      yield* seed([{ content: "Doug's favourite colour is teal", kind: "fact" }])
      const doug = yield* agent()
      yield* NativeRuntime.runTurn({ agent: doug, sessionId: "s-1", input: "Hi, I'm Doug" })
      yield* NativeRuntime.runTurn({ agent: doug, sessionId: "s-1", input: "what colour do I like?" })
      const requests = yield* ScriptedModel.requests
      expect(requests).toHaveLength(3)

      // Turn 1, call 1: system, input, projection (recall found the seeded fact through "Doug").
      const roles = (r: ScriptedModel.ScriptedRequest) => r.prompt.content.map((m) => m.role)
      expect(roles(requests[0]!)).toEqual(["system", "user", "user"])
      expect(ScriptedModel.systemText(requests[0]!)).toBe("You are a companion.")
      expect(ScriptedModel.userTexts(requests[0]!)[0]).toBe("Hi, I'm Doug")
      expect(projectionText(requests[0]!)[0]).toContain("Doug's favourite colour is teal")
      // Call 2 of the same turn: the same projection, in the same place, then the tool round.
      expect(roles(requests[1]!)).toEqual(["system", "user", "user", "assistant", "tool"])
      expect(projectionText(requests[1]!)).toEqual(projectionText(requests[0]!))
      // Turn 2: turn 1's history without its projection, the new input, the new projection.
      expect(roles(requests[2]!)).toEqual(["system", "user", "assistant", "tool", "assistant", "user", "user"])
      const turn2 = projectionText(requests[2]!)
      expect(turn2).toHaveLength(1)
      expect(turn2[0]).toContain("colour")
      expect(ScriptedModel.userTexts(requests[2]!).slice(-2)[0]).toBe("what colour do I like?")

      // What the observer saw is what the model got, fragment by fragment.
      const snapshots = yield* PromptObserver.captured
      expect(snapshots.map((s) => [s.turn, s.call])).toEqual([[1, 0], [1, 1], [2, 0]])
      snapshots.forEach((snapshot, i) => {
        expect(ScriptedModel.promptJson(snapshot.request.prompt)).toBe(ScriptedModel.promptJson(requests[i]!.prompt))
      })
      expect(snapshots[2]!.request.fragments.filter((f) => f.source === "projection").map((f) => f.text).join(""))
        .toBe(turn2[0])

      // One injection row per turn.
      expect((yield* injections("s-1")).map((row) => row.turn)).toEqual([1, 2])
    }).pipe(Effect.provide(environment(companionScript))))

  it.effect("keeps a stored legacy context frame but never shows it to the model", () =>
    Effect.gen(function*() {
      const frame = "<injected_memory>\nstale recall from an older design\n</injected_memory>"
      const at = DateTime.unsafeMake(0)
      yield* Effect.flatMap(SessionStore.SessionStore, (store) =>
        store.append("s-1", [
          new SessionStore.OperatorMessage({ text: "earlier question", at }),
          new SessionStore.OperatorMessage({ text: frame, at, legacyContextFrame: true }),
          new SessionStore.AssistantMessage({ text: "earlier answer", toolCalls: [], at })
        ]))
      const doug = yield* agent()
      const result = yield* NativeRuntime.runTurn({ agent: doug, sessionId: "s-1", input: "hello again" })
      // The frame does not count as an operator input either.
      expect(result.turn).toBe(2)

      const [request] = yield* ScriptedModel.requests
      const sent = ScriptedModel.promptJson(request!.prompt)
      expect(sent).not.toContain("stale recall")
      expect(ScriptedModel.userTexts(request!)).toEqual(["earlier question", "hello again"])
      const [snapshot] = yield* PromptObserver.captured
      expect(snapshot!.request.strippedFrames).toBe(1)
      const kept = yield* stored("s-1")
      expect(kept.filter(SessionStore.isLegacyContextFrame).map((m) => (m as SessionStore.OperatorMessage).text))
        .toEqual([frame])
    }).pipe(Effect.provide(environment(companionScript))))

  it.effect("fails with CallLimitReached when the model never stops calling tools", () =>
    Effect.gen(function*() {
      const looping = yield* agent({ maxCalls: 3 })
      const exit = yield* Effect.exit(NativeRuntime.runTurn({ agent: looping, sessionId: "s-1", input: "loop" }))
      expect(exit).toEqual(Exit.fail(new NativeRuntime.CallLimitReached({ sessionId: "s-1", turn: 1, calls: 3 })))
      expect(yield* ScriptedModel.requests).toHaveLength(3)
    }).pipe(Effect.provide(environment(() => [ScriptedModel.toolCall("memory_recall", { query: "anything" })]))))

  it.effect("refuses an invalid session id before anything runs", () =>
    Effect.gen(function*() {
      const doug = yield* agent()
      const exit = yield* Effect.exit(NativeRuntime.runTurn({ agent: doug, sessionId: "has space", input: "hi" }))
      expect(Exit.isFailure(exit) && Exit.causeOption(exit).pipe(Option.isSome)).toBe(true)
      expect(yield* ScriptedModel.requests).toHaveLength(0)
    }).pipe(Effect.provide(environment(companionScript))))
})

describe("modes", () => {
  it.effect("incognito offers no memory tool and projects no memory", () =>
    Effect.gen(function*() {
      yield* seed([{ content: "Doug likes teal", kind: "fact", deliveryPolicy: "always" }])
      const hidden = yield* agent({ mode: "incognito", workingState: "step 1 of 2" })
      yield* NativeRuntime.runTurn({ agent: hidden, sessionId: "s-1", input: "Hi, I'm Doug" })
      const [request] = yield* ScriptedModel.requests
      expect(request!.tools).toEqual([])
      expect(projectionText(request!)[0]).toBe("<working_state>\nstep 1 of 2\n</working_state>")
      expect((yield* everything).records).toHaveLength(1)
      expect((yield* injections("s-1"))[0]!.memoryIds).toEqual([])
    }).pipe(Effect.provide(environment(companionScript))))

  it.effect("a subagent is offered only memory_recall and gets no projection", () =>
    Effect.gen(function*() {
      yield* seed([{ content: "Doug likes teal", kind: "fact", deliveryPolicy: "always" }])
      const sub = yield* agent({ mode: "subagent" })
      yield* NativeRuntime.runTurn({ agent: sub, sessionId: "s-1", input: "Hi, I'm Doug" })
      const [request] = yield* ScriptedModel.requests
      expect(request!.tools).toEqual(["memory_recall"])
      expect(request!.prompt.content.map((m) => m.role)).toEqual(["system", "user"])
      // The model called memory_save anyway: refused as unavailable, nothing written.
      const tool = (yield* stored("s-1"))[2] as SessionStore.ToolMessage
      expect(tool.results[0]).toMatchObject({ name: "memory_save", isFailure: true })
      expect((yield* everything).records).toHaveLength(1)
    }).pipe(Effect.provide(environment(script({ rogue: true })))))
})

describe("approval", () => {
  it.effect("suspends on a tool needing approval; resume projects afresh and writes its own injection row", () =>
    Effect.gen(function*() {
      const careful = yield* agent({ approval: ["memory_save"] })
      const first = yield* NativeRuntime.runTurn({ agent: careful, sessionId: "s-1", input: "Hi, I'm Doug" })
      expect(first).toMatchObject({ _tag: "Suspended", turn: 1, pending: [{ name: "memory_save" }], calls: 1 })
      // Nothing of the round ran; the interrupt is stored.
      expect((yield* everything).records).toHaveLength(0)
      const interrupt = yield* Effect.flatMap(SessionStore.SessionStore, (s) => s.getInterrupt("s-1"))
      expect(Option.map(interrupt, (i) => i.toolCalls.map((c) => c.name))).toEqual(Option.some(["memory_save"]))

      // A new turn must wait.
      const blocked = yield* Effect.exit(NativeRuntime.runTurn({ agent: careful, sessionId: "s-1", input: "hello?" }))
      expect(blocked).toEqual(
        Exit.fail(new NativeRuntime.SessionAwaitingApproval({ sessionId: "s-1", turn: 1, tools: ["memory_save"] }))
      )

      // Memory changes while the turn waits; the resumed turn sees it (projected again, same query).
      yield* seed([{ content: "Doug is a pilot", kind: "fact" }])
      const decision = NativeRuntime.approveAll
      const resumed = yield* NativeRuntime.resume({ agent: careful, sessionId: "s-1", decision })
      expect(resumed).toMatchObject({ _tag: "Completed", turn: 1, text: "Nice to meet you!", calls: 2 })
      expect((yield* everything).records.map((r) => r.content).sort()).toEqual([
        "Doug is a pilot",
        "The user's name is Doug"
      ])

      const requests = yield* ScriptedModel.requests
      expect(projectionText(requests[0]!)[0] ?? "").not.toContain("pilot")
      expect(projectionText(requests[1]!)[0]).toContain("Doug is a pilot")
      const rows = yield* injections("s-1")
      expect(rows.map((row) => row.turn)).toEqual([1, 1])
      expect(rows[1]!.memoryIds).toContain(resumed.projection.injection.memoryIds[0])
      expect(yield* Effect.flatMap(SessionStore.SessionStore, (s) => s.getInterrupt("s-1"))).toEqual(Option.none())

      // The session reads as one turn: input, the call, its result, the answer.
      expect((yield* stored("s-1")).map((m) => m._tag)).toEqual([
        "OperatorMessage",
        "AssistantMessage",
        "ToolMessage",
        "AssistantMessage"
      ])
      const snapshots = yield* PromptObserver.captured
      expect(snapshots.map((s) => [s.turn, s.call])).toEqual([[1, 0], [1, 1]])
    }).pipe(Effect.provide(environment(companionScript))))

  it.effect("a denied call is reported to the model as a failure and nothing is written", () =>
    Effect.gen(function*() {
      const careful = yield* agent({ approval: (call) => call.name === "memory_save" })
      yield* NativeRuntime.runTurn({ agent: careful, sessionId: "s-1", input: "Hi, I'm Doug" })
      const resumed = yield* NativeRuntime.resume({
        agent: careful,
        sessionId: "s-1",
        decision: NativeRuntime.denyAll("not today")
      })
      expect(resumed._tag).toBe("Completed")
      expect((yield* everything).records).toHaveLength(0)
      const [result] = ScriptedModel.pendingToolResults((yield* ScriptedModel.requests)[1]!)
      expect(result).toMatchObject({ name: "memory_save", isFailure: true })
      expect(JSON.stringify(result!.result)).toContain("not today")
    }).pipe(Effect.provide(environment(companionScript))))

  it.effect("resume without a waiting turn fails with NothingToResume", () =>
    Effect.gen(function*() {
      const careful = yield* agent({ approval: ["memory_save"] })
      const exit = yield* Effect.exit(
        NativeRuntime.resume({ agent: careful, sessionId: "s-1", decision: NativeRuntime.approveAll })
      )
      expect(exit).toEqual(
        Exit.fail(
          new NativeRuntime.NothingToResume({ sessionId: "s-1", problem: "it has no turn waiting for approval" })
        )
      )
    }).pipe(Effect.provide(environment(companionScript))))
})

describe("turn-scoped projection", () => {
  const codeword = (k: number) => `zq${k}codeword`

  // Each turn recalls, then answers; the model yields a different number of times per session so
  // that the turns' calls interleave.
  const interleaving: ScriptedModel.Script = (request) => {
    const input = ScriptedModel.lastUserText(request)
    const k = Number(/zq(\d+)codeword/.exec(input)?.[1] ?? 0)
    const reply = ScriptedModel.pendingToolResults(request).length === 0
      ? [ScriptedModel.toolCall("memory_recall", { query: input })]
      : [ScriptedModel.text(`done ${k}`)]
    return Effect.as(Effect.repeatN(Effect.yieldNow(), k % 7), reply)
  }

  it.effect("60 concurrent turns on one built agent each see exactly their own projection", () =>
    Effect.gen(function*() {
      const turns = 60
      const records = yield* seed(
        Array.from({ length: turns }, (_, k) => ({ content: `The secret is ${codeword(k)}`, kind: "fact" as const }))
      )
      const shared = yield* agent()
      const results = yield* Effect.forEach(
        Array.from({ length: turns }, (_, k) => k),
        (k) => NativeRuntime.runTurn({ agent: shared, sessionId: `s-${k}`, input: codeword(k) }),
        { concurrency: "unbounded" }
      )
      results.forEach((result, k) => {
        expect(result.projection.injection.memoryIds).toEqual([records[k]!.id])
      })

      const requests = yield* ScriptedModel.requests
      expect(requests).toHaveLength(turns * 2)
      // The calls did interleave: the first turn's second call is not right after its first.
      expect(ScriptedModel.lastUserText(requests[1]!)).not.toBe(ScriptedModel.lastUserText(requests[0]!))
      for (const request of requests) {
        const k = Number(/zq(\d+)codeword/.exec(ScriptedModel.lastUserText(request))![1])
        const [projection, ...more] = projectionText(request)
        expect(more).toHaveLength(0)
        expect(projection).toContain(`[${records[k]!.id} · fact]`)
        for (const other of records) {
          if (other.id !== records[k]!.id) expect(projection).not.toContain(other.id)
        }
      }
      for (let k = 0; k < turns; k++) {
        const rows = yield* injections(`s-${k}`)
        expect(rows.map((row) => row.memoryIds)).toEqual([[records[k]!.id]])
      }
    }).pipe(Effect.provide(environment(interleaving))))
})
