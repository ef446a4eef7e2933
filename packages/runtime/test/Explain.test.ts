/**
 * `Explain` on the path that ships: an agent built by `StablePrefix.buildAgent`, turns run by
 * `NativeRuntime.runTurn` with the telemetry-backed `PromptObserver`, then `Explain.explain` reads
 * the stored snapshot, its projection and overlay blobs and the injection log. One test per
 * outcome.
 */
import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, MemoryStore, RoutingPresets, RoutingSpecs } from "@engram/core"
import { Explain, NativeRuntime, Promotion, PromptObserver, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { memoryStores } from "./agentFixtures.js"

const answer: ScriptedModel.Script = () => [ScriptedModel.text("ok")]

const env = (settings: Partial<ContextProjection.ProjectionSettings> = {}) =>
  Layer.mergeAll(
    Layer.effect(ContextProjection.ContextProjection, ContextProjection.make(settings)),
    ScriptedModel.layer(answer),
    PromptObserver.layerTelemetry(),
    RoutingSpecs.layerPresets
  ).pipe(Layer.provideMerge(memoryStores))

const user = RoutingPresets.userBackgroundSections.sections
const companion = { sections: [...user] }
const guarded = { sections: user.map((section) => ({ ...section, promotion: "guarded" as const })) }

/** Saves as a model would (agent-derived, pending) and promotes under the preset, as memory_save does. */
const save = (input: {
  readonly content: string
  readonly kind: "profile" | "fact" | "note" | "episode"
  readonly label?: string
  readonly scope?: string
  readonly deliveryPolicy?: "always" | "retrieved" | "on_demand"
  readonly position?: { readonly thread: string; readonly turn: number }
}) =>
  Effect.gen(function*() {
    const [record] = yield* Effect.flatMap(MemoryStore.MemoryStore, (store) =>
      store.write([{ scope: "global", sourceType: "conversation", ...input }]))
    yield* Promotion.promoteNew([record!], {
      background: RoutingPresets.userBackgroundSections,
      spec: RoutingPresets.userBackground
    })
    yield* TestClock.adjust("1 second")
    return record!
  })

/** Builds an agent from `config`, runs one turn with `question` in `sessionId`. */
const turn = (
  question: string,
  sessionId: string,
  config: StablePrefix.AgentConfigInput = { background: companion },
  mode?: NativeRuntime.NativeMode
) =>
  Effect.gen(function*() {
    const agent = yield* NativeRuntime.fromConfig(
      { spec: "user-background", persona: "You are a companion.", ...config },
      mode !== undefined ? { mode } : {}
    )
    yield* NativeRuntime.runTurn({ agent, sessionId, input: question })
  })

const explainOne = (memoryId: string, sessionId: string) =>
  Effect.map(Explain.explain({ memoryId, sessionId }), (e) => {
    expect(e.calls).toHaveLength(1)
    return { explanation: e, call: e.calls[0]! }
  })

describe("Explain", () => {
  it.effect("composed: a promoted memory in the prefix, with its routing (spec, version, key source)", () =>
    Effect.gen(function*() {
      const name = yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      yield* turn("hello there", "s-1")
      const { call, explanation } = yield* explainOne(name.id, "s-1")
      expect(call.verdict).toBe("composed")
      expect(call.reached).toBe(true)
      expect(call.prefix?.section).toBeDefined()
      expect(call.overlayStored).toBe(true)
      expect(call.overlay?.status).toBe("composed")
      expect(call.reason).toContain("the label is the key's canonical name")
      expect(explanation.promoted).toBe(true)
      expect(explanation.routing).toEqual([expect.objectContaining({
        specKey: RoutingPresets.userBackground.key,
        specVersion: RoutingPresets.userBackground.version,
        promoted: true,
        keySource: "canonical"
      })])
    }).pipe(Effect.provide(env())))

  it.effect("delivered: recalled at its rank, with the query tokens it matched, and the injection log agrees", () =>
    Effect.gen(function*() {
      yield* save({ content: "The staging database is db-2 on the east cluster", kind: "fact" })
      const second = yield* save({ content: "The staging database backups run nightly", kind: "fact" })
      yield* turn("where do staging database backups run?", "s-1")
      const { call, explanation } = yield* explainOne(second.id, "s-1")
      expect(call.verdict).toBe("delivered")
      expect(call.projection).toEqual({ section: "recalled_memory", position: 1 })
      expect(call.queryTokens).toEqual(["staging", "database", "backups", "run"])
      expect(call.injectionLogged).toBe(true)
      expect(call.reason).toContain("rank 1 of 2")
      expect(explanation.promoted).toBe(false)
    }).pipe(Effect.provide(env())))

  it.effect("delivered as a neighbour: a turn beside a recall hit names the hit it was delivered with", () =>
    Effect.gen(function*() {
      const at = (turn: number) => ({ thread: "conversation-1", turn })
      const before = yield* save({ content: "We spent the morning on the rollout plan", kind: "note", position: at(1) })
      const hit = yield* save({ content: "The staging database backups run nightly", kind: "note", position: at(2) })
      yield* turn("where do staging database backups run?", "s-1")
      const { call } = yield* explainOne(before.id, "s-1")
      expect(call.verdict).toBe("delivered")
      expect(call.projection).toEqual({ section: "recalled_memory", position: 1, neighbourOf: hit.id })
      expect(call.reason).toContain(`delivered as a conversation neighbour of hit ${hit.id}`)
      expect(call.reason).toContain("a turn next to it in the same thread")
      expect(call.injectionLogged).toBe(true)
      const explainedHit = (yield* explainOne(hit.id, "s-1")).call
      expect(explainedHit.projection).toEqual({ section: "recalled_memory", position: 1 })
    }).pipe(Effect.provide(env())))

  it.effect("delivered by write order: an episode written without a position beside a hit written next to it", () =>
    Effect.gen(function*() {
      const before = yield* save({ content: "We spent the morning on the rollout plan", kind: "episode" })
      const hit = yield* save({ content: "The staging database backups run nightly", kind: "episode" })
      yield* turn("where do staging database backups run?", "s-1")
      const { call } = yield* explainOne(before.id, "s-1")
      expect(call.verdict).toBe("delivered")
      expect(call.projection).toEqual({ section: "recalled_memory", position: 1, neighbourOf: hit.id })
      expect(call.reason).toContain(`delivered as a conversation neighbour of hit ${hit.id}`)
      expect(call.reason).toContain("in its scope's write order")
    }).pipe(Effect.provide(env())))

  it.effect("shed: a recall hit the projection budget shed", () =>
    Effect.gen(function*() {
      const filler = " and the runbook explains each step of the rollout in detail".repeat(50)
      const records: Array<string> = []
      for (let i = 0; i < 8; i++) {
        records.push((yield* save({ content: `Deploy window ${i}${filler}`, kind: "fact" })).id)
      }
      yield* turn("when is the deploy window?", "s-1")
      const explained = yield* Effect.forEach(records, (id) => explainOne(id, "s-1"))
      const shed = explained.filter(({ call }) => call.verdict === "shed")
      expect(shed.length).toBeGreaterThan(0)
      expect(explained.some(({ call }) => call.verdict === "delivered")).toBe(true)
      const { call } = shed[0]!
      expect(call.reached).toBe(false)
      expect(call.shed?.section).toBe("recalled_memory")
      expect(call.injectionLogged).toBe(false)
      expect(call.reason).toContain("for budget")
      // The budget in its unit.
      expect(call.reason).toContain("budget 4000 tokens)")
    }).pipe(Effect.provide(env({ budgetTokens: 4_000 }))))

  it.effect("withheld: an always-on older value at an address the prefix holds is withheld in-prefix", () =>
    Effect.gen(function*() {
      const old = yield* save({ content: "My name is Doug", kind: "profile", label: "name", deliveryPolicy: "always" })
      const current = yield* save({ content: "My name is Douglas", kind: "profile", label: "name" })
      yield* turn("is Doug my name?", "s-1")
      const { call } = yield* explainOne(old.id, "s-1")
      expect(call.verdict).toBe("withheld")
      expect(call.withheld).toEqual({ section: "always_on_memory", ref: old.id, reason: "in-prefix" })
      expect(call.overlay).toEqual(
        expect.objectContaining({ status: "declined", reason: "shadowed", heldBy: current.id })
      )
      expect((yield* explainOne(current.id, "s-1")).call.verdict).toBe("composed")
    }).pipe(Effect.provide(env())))

  it.effect("declined: the overlay's reason when no projection section delivered it", () =>
    Effect.gen(function*() {
      const name = yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      yield* turn("tell me a joke", "s-1", { background: guarded })
      const { call } = yield* explainOne(name.id, "s-1")
      expect(call.verdict).toBe("declined")
      expect(call.overlay).toEqual(expect.objectContaining({ status: "declined", reason: "review-required" }))
      expect(call.reason).toContain("review-required")
    }).pipe(Effect.provide(env({ identityLimit: 0 }))))

  it.effect("excluded by mode: an incognito call composes no memory", () =>
    Effect.gen(function*() {
      const name = yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      yield* turn("what is my name?", "s-1", { background: companion }, "incognito")
      const { call } = yield* explainOne(name.id, "s-1")
      expect(call.verdict).toBe("excluded-by-mode")
      expect(call.mode).toBe("incognito")
      expect(call.suppressed).toContain("recalled_memory")
      expect(call.overlayStored).toBe(false)
    }).pipe(Effect.provide(env())))

  it.effect("excluded by scope: a record of a scope the call did not read", () =>
    Effect.gen(function*() {
      const other = yield* save({ content: "The staging database is db-9", kind: "fact", scope: "project:b" })
      yield* turn("which staging database?", "s-1")
      const { call } = yield* explainOne(other.id, "s-1")
      expect(call.verdict).toBe("excluded-by-scope")
      expect(call.inScope).toBe(false)
      expect(call.reason).toContain("project:b")
      // The tokens matched: scope, not wording, kept it out.
      expect(call.queryTokens).toEqual(["staging", "database"])
    }).pipe(Effect.provide(env())))

  it.effect("not recalled: a query that shares no token with the record", () =>
    Effect.gen(function*() {
      const fact = yield* save({ content: "The staging database is db-2", kind: "fact" })
      yield* turn("tell me a joke", "s-1")
      const { call, explanation } = yield* explainOne(fact.id, "s-1")
      expect(call.verdict).toBe("not-recalled")
      expect(call.queryTokens).toEqual([])
      expect(call.reason).toContain("shares no search token")
      expect(explanation.record?.scope).toBe("global")
    }).pipe(Effect.provide(env())))

  it.effect("without a session: the sessions whose injection log names the memory", () =>
    Effect.gen(function*() {
      const fact = yield* save({ content: "The staging database is db-2", kind: "fact" })
      yield* turn("which staging database?", "s-1")
      yield* turn("tell me a joke", "s-2")
      yield* turn("the staging database again?", "s-3")
      const explanation = yield* Explain.explain({ memoryId: fact.id })
      expect(explanation.sessions).toEqual([{ sessionId: "s-1", turns: [1] }, { sessionId: "s-3", turns: [1] }])
      expect(Explain.isUnknown(explanation)).toBe(false)
      expect(Explain.isUnknown(yield* Explain.explain({ memoryId: "mem-nothing" }))).toBe(true)
      const invalid = yield* Effect.flip(Explain.explain({ memoryId: "not an id" }))
      expect(invalid._tag).toBe("InvalidMemoryId")
    }).pipe(Effect.provide(env())))

  it.effect("a forgotten memory is still explained from the stored call, with its tombstone and no text", () =>
    Effect.gen(function*() {
      const name = yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      yield* turn("hello there", "s-1")
      yield* Effect.flatMap(
        MemoryStore.MemoryStore,
        (store) => store.forget({ ids: [name.id] }, { by: "operator:test" })
      )
      const { call, explanation } = yield* explainOne(name.id, "s-1")
      expect(call.verdict).toBe("composed")
      expect(call.queryTokens).toBeNull()
      expect(explanation.record).toBeNull()
      expect(explanation.tombstone).toEqual({ forgottenAt: expect.any(String), forgottenBy: "operator:test" })
      expect(explanation.routing).toEqual([])
      expect(Explain.isUnknown(explanation)).toBe(false)
    }).pipe(Effect.provide(env())))
})
