/**
 * The identity tier on the path that ships: `NativeRuntime.fromConfig` → `NativeRuntime.runTurn` →
 * the request the model receives (`PromptObserver`). Memory reaches the prompt through the prefix or
 * the projection's envelope, once, and the value that won is the only one delivered.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, RoutingPresets, RoutingSpecs } from "@engram/core"
import { NativeRuntime, Promotion, PromptObserver, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { environment, seed } from "./agentFixtures.js"

const answer: ScriptedModel.Script = () => [ScriptedModel.text("ok")]
const env = (settings = {}) => Layer.merge(environment(answer, settings), RoutingSpecs.layerPresets)

const user = RoutingPresets.userBackgroundSections.sections
const companion = { sections: [...user] }
const guarded = { sections: user.map((section) => ({ ...section, promotion: "guarded" as const })) }
const optOut = { sections: [{ id: "assistant", title: "Assistant", entries: [{ key: "role", value: "helper" }] }] }

/** Saves as a model would (agent-derived, pending), promoted under the preset at once. */
const save = (input: { readonly content: string; readonly kind: "profile" | "fact"; readonly label?: string }) =>
  Effect.gen(function*() {
    const [record] = yield* Effect.flatMap(
      MemoryStore.MemoryStore,
      (store) => store.write([{ ...input, scope: "global", sourceType: "conversation" }])
    )
    yield* Promotion.promoteNew([record!], {
      background: RoutingPresets.userBackgroundSections,
      spec: RoutingPresets.userBackground
    })
    return record!
  })

/** One fresh session with an agent built from `config`: the text of the one request it sent. */
const ask = (config: StablePrefix.AgentConfigInput, question: string, sessionId: string) =>
  Effect.gen(function*() {
    const agent = yield* NativeRuntime.fromConfig({
      spec: "user-background",
      persona: "You are a companion.",
      ...config
    })
    yield* NativeRuntime.runTurn({ agent, sessionId, input: question })
    const [snapshot] = (yield* PromptObserver.captured).filter((s) => s.sessionId === sessionId)
    return {
      agent,
      snapshot: snapshot!,
      text: snapshot!.request.fragments.map((fragment) => fragment.text).join("")
    }
  })

const count = (text: string, needle: string) => text.split(needle).length - 1

describe("the identity tier, through buildAgent and the native loop", () => {
  it.effect("an agent that declares no user sections still gets the name, once, inside the envelope", () =>
    Effect.gen(function*() {
      const name = yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      const { agent, snapshot, text } = yield* ask({ background: optOut }, "who am I?", "s-1")
      expect(agent.composedIds).toEqual([])
      expect(snapshot.projection.section("identity_memory")?.memoryIds).toEqual([name.id])
      expect(count(text, "My name is Doug")).toBe(1)
      expect(text.indexOf("My name is Doug")).toBeGreaterThan(text.indexOf("<identity_memory>"))
    }).pipe(Effect.provide(env())))

  it.effect("a guarded section's pending record is delivered by the identity tier, marked unconfirmed", () =>
    Effect.gen(function*() {
      const name = yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      const { agent, text } = yield* ask({ background: guarded }, "what should my name tag say?", "s-1")
      expect(agent.report!.outcomes.map((o) => (o.status === "composed" ? o.status : o.reason))).toEqual([
        "review-required"
      ])
      expect(text).toContain(`- [${name.id} · profile · name · unconfirmed] My name is Doug`)
    }).pipe(Effect.provide(env())))

  it.effect("an entry the overlay budget spilled is delivered by the identity tier", () =>
    Effect.gen(function*() {
      yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      const { agent, text } = yield* ask(
        { background: companion, overlayBudget: { sectionChars: 5 } },
        "sign this letter for me",
        "s-1"
      )
      expect(agent.composedIds).toEqual([])
      expect(count(text, "My name is Doug")).toBe(1)
    }).pipe(Effect.provide(env())))

  it.effect("a composed name is delivered by the prefix alone: no duplicate and no stray record rides along", () =>
    Effect.gen(function*() {
      // A record written without promotion (an import, a CLI write) holding the same address.
      yield* seed([{ content: "My name is Doug", kind: "profile", label: "name" }])
      yield* TestClock.adjust("1 second")
      const douglas = yield* save({ content: "My name is Douglas", kind: "profile", label: "name" })
      const { agent, snapshot, text } = yield* ask({ background: companion }, "is my name Doug?", "s-1")
      expect(agent.composedIds).toEqual([douglas.id])
      expect(count(text, "My name is Douglas")).toBe(1)
      expect(text).not.toContain("My name is Doug\n")
      expect(text).not.toMatch(/My name is Doug(?!las)/)
      expect(snapshot.projection.budget.withheld.map((w) => w.reason)).toContain("in-prefix")
    }).pipe(Effect.provide(env())))

  it.effect("with the identity tier off (identityLimit 0) the opt-out agent loses the name: the tier is what delivers it", () =>
    Effect.gen(function*() {
      yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      const { text } = yield* ask({ background: optOut }, "who am I?", "s-1")
      expect(text).not.toContain("My name is Doug")
    }).pipe(Effect.provide(env({ identityLimit: 0 }))))

  it.effect("incognito turns deliver no identity line", () =>
    Effect.gen(function*() {
      yield* save({ content: "My name is Doug", kind: "profile", label: "name" })
      const agent = yield* NativeRuntime.fromConfig({ spec: "user-background", background: optOut }, {
        mode: "incognito"
      })
      const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-2", input: "who am I?" })
      expect(result.projection.text).not.toContain("Doug")
    }).pipe(Effect.provide(env())))
})
