/**
 * Identity under real use (issue 20, items 1–5), each failure reproduced as a user would meet it:
 * `NativeRuntime.fromConfig` (`StablePrefix.buildAgent`) + `NativeRuntime.runTurn` over SQLite,
 * a scripted model that saves what it is told through `memory_save`, and the bytes of the next
 * session's first request as `PromptObserver` captured them. Every question runs in a fresh
 * session with an agent built from the store as it is then.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  type MemoryRecord,
  MemoryStore,
  RoutingPresets,
  RoutingSpecs
} from "@engram/core"
import { Explain, type MemoryTools, NativeRuntime, PromptObserver, type StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import {
  SqliteDatabase,
  SqliteEngram,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as TestClock from "effect/TestClock"

type Save = { readonly kind: MemoryRecord.MemoryKind; readonly content: string; readonly label?: string }

/** What the model does: for an input it knows, the saves it makes (all in one response). */
type Lessons = Readonly<Record<string, ReadonlyArray<Save>>>

/**
 * A model that makes the saves its lessons list for the operator's input; answered with a
 * conflict, it makes the call the envelope's `retry` gives (once per conflict); otherwise it
 * answers in text.
 */
const model =
  (lessons: Lessons, answers: Ref.Ref<ReadonlyArray<MemoryTools.SaveResult>>): ScriptedModel.Script => (request) => {
    const saves = lessons[ScriptedModel.lastUserText(request)] ?? []
    const pending = ScriptedModel.pendingToolResults(request).map((p) => p.result as MemoryTools.SaveResult)
    if (pending.length === 0) {
      return saves.length === 0
        ? [ScriptedModel.text("Hello!")]
        : saves.map((save) => ScriptedModel.toolCall("memory_save", save))
    }
    // The first round answers the saves themselves; a later one answers the retries.
    const first = pending.length === saves.length
    Effect.runSync(Ref.update(answers, (all) => [...all, ...(first ? pending : pending.slice(saves.length))]))
    const retries = first
      ? pending.flatMap((r) => (r.status === "conflict" && r.retry !== undefined ? [r.retry] : []))
      : []
    return retries.length > 0
      ? retries.map((retry) => ScriptedModel.toolCall("memory_save", retry.arguments))
      : [ScriptedModel.text("Noted.")]
  }

const stores = Layer.mergeAll(
  SqlitePromotionStore.layer,
  SqliteSessionStore.layer,
  SqliteTelemetryStore.layer
).pipe(
  Layer.provideMerge(
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
  )
)

const environment = (lessons: Lessons, answers: Ref.Ref<ReadonlyArray<MemoryTools.SaveResult>>) =>
  Layer.mergeAll(
    ContextProjection.layer,
    ScriptedModel.layer(model(lessons, answers)),
    PromptObserver.layerCapture,
    RoutingSpecs.layerPresets,
    IdGenerator.sequential("mem")
  ).pipe(Layer.provideMerge(stores))

const assistant = { sections: [{ id: "assistant", title: "Assistant", entries: [{ key: "role", value: "helper" }] }] }
const companion = { sections: [...assistant.sections, ...RoutingPresets.userBackgroundSections.sections] }

let sessions = 0

/** One fresh session: an agent built from the store now, one turn; the first request's text. */
const turn = (input: string, config: StablePrefix.AgentConfigInput = { background: companion }) =>
  Effect.gen(function*() {
    const sessionId = `s-${++sessions}`
    const agent = yield* NativeRuntime.fromConfig({
      spec: "user-background",
      persona: "You are a companion.",
      ...config
    })
    const result = yield* NativeRuntime.runTurn({ agent, sessionId, input })
    const [first] = (yield* PromptObserver.captured).filter((s) => s.sessionId === sessionId)
    yield* TestClock.adjust("1 minute")
    return { agent, result, sessionId, snapshot: first!, text: PromptObserver.requestText(first!.request) }
  })

const word = (text: string, value: string) =>
  new RegExp(`(^|[^\\p{L}\\p{N}])${value}($|[^\\p{L}\\p{N}])`, "u").test(text)

const run = <A, E>(
  lessons: Lessons,
  body: (answers: Ref.Ref<ReadonlyArray<MemoryTools.SaveResult>>) => Effect.Effect<A, E, any>
) =>
  Effect.gen(function*() {
    const answers = yield* Ref.make<ReadonlyArray<MemoryTools.SaveResult>>([])
    return yield* Effect.provide(body(answers), environment(lessons, answers))
  })

const nameDoug: Save = { kind: "profile", content: "The user's name is Doug", label: "name" }

describe("1. a correction is caught whatever its label", () => {
  for (const label of ["moniker", "what_to_call_them", undefined]) {
    it.effect(`"Actually my name is Douglas" saved ${label === undefined ? "with no label" : `as "${label}"`}`, () =>
      run({
        "Hi, I'm Doug.": [nameDoug],
        "Actually my name is Douglas.": [
          { kind: "profile", content: "Actually my name is Douglas", ...(label !== undefined ? { label } : {}) }
        ]
      }, (answers) =>
        Effect.gen(function*() {
          yield* turn("Hi, I'm Doug.")
          yield* turn("Actually my name is Douglas.")
          const said = yield* Ref.get(answers)
          // The first save of the correction met the name it corrects: a conflict, with the retry.
          expect(said[1]).toMatchObject({
            status: "conflict",
            holder: { key: "name", content: "The user's name is Doug" },
            retry: { tool: "memory_save", arguments: { supersedes: "mem-000001" } }
          })
          expect(said[2]).toMatchObject({ status: "saved", key: "name", superseded: "mem-000001" })
          const { text } = yield* turn("What's my name?")
          expect(word(text, "Douglas")).toBe(true)
          expect(word(text, "Doug")).toBe(false)
        })))
  }

  it.effect("a second, distinct fact that mentions a name still lands beside the user's name", () =>
    run({
      "Hi, I'm Doug.": [nameDoug],
      "My dog is Rex.": [
        { kind: "profile", content: "My dog's name is Rex" },
        { kind: "profile", content: "The user's wife's name is Anna", label: "family_note" }
      ]
    }, (answers) =>
      Effect.gen(function*() {
        yield* turn("Hi, I'm Doug.")
        yield* turn("My dog is Rex.")
        expect((yield* Ref.get(answers)).map((a) => a.status)).toEqual(["saved", "saved", "saved"])
        const { text } = yield* turn("Tell me about me.")
        for (const value of ["The user's name is Doug", "My dog's name is Rex", "The user's wife's name is Anna"]) {
          expect(text.split(value).length - 1).toBe(1)
        }
      })))
})

describe("2. identity is delivered whatever the kind and label", () => {
  for (
    const [what, config] of [["a companion", { background: companion }], ["an opt-out agent", {
      background: assistant
    }]] as const
  ) {
    it.effect(`a name saved as a fact under a label the vocabulary lacks reaches ${what}'s prompt, once`, () =>
      run(
        { "I'm Doug.": [{ kind: "fact", content: "The user's name is Doug", label: "moniker" }] },
        () =>
          Effect.gen(function*() {
            yield* turn("I'm Doug.", config)
            for (const question of ["who am I?", "Write me a birthday card.", "sign this letter for me"]) {
              const { agent, text } = yield* turn(question, config)
              expect([question, text.split("The user's name is Doug").length - 1]).toEqual([question, 1])
              const outcome = agent.report!.outcomes.find((o) => o.recordId === "mem-000001")!
              // The overlay report says where it went and why: the content states the declared key.
              expect(outcome.address).toMatchObject({ key: "name", keySource: "statement" })
            }
          })
      ))
  }

  it.effect("explain names the statement that placed it", () =>
    Effect.gen(function*() {
      const answers = yield* Ref.make<ReadonlyArray<MemoryTools.SaveResult>>([])
      const lessons: Lessons = { "I'm Doug.": [{ kind: "note", content: "My name is Doug" }] }
      const telemetry = Layer.mergeAll(
        ContextProjection.layer,
        ScriptedModel.layer(model(lessons, answers)),
        PromptObserver.layerTelemetry(),
        RoutingSpecs.layerPresets,
        IdGenerator.sequential("mem")
      ).pipe(Layer.provideMerge(stores))
      yield* Effect.gen(function*() {
        for (const [sessionId, input] of [["e-1", "I'm Doug."], ["e-2", "who am I?"]] as const) {
          const agent = yield* NativeRuntime.fromConfig({ spec: "user-background", background: assistant })
          yield* NativeRuntime.runTurn({ agent, sessionId, input })
        }
        const explanation = yield* Explain.explain({ memoryId: "mem-000001", sessionId: "e-2" })
        if (Explain.isUnknown(explanation)) throw new Error("explain knows nothing of the record")
        expect(explanation.routing[0]).toMatchObject({ key: "name", keySource: "statement" })
        expect(explanation.calls[0]!.verdict).toBe("delivered")
        expect(explanation.calls[0]!.reason).toContain("identity_memory")
        expect(explanation.calls[0]!.reason).toContain("the content states this declared key")
      }).pipe(Effect.provide(telemetry))
    }))
})

describe("3. importance, not recency, decides what survives a budget", () => {
  const facts: ReadonlyArray<Save> = Array.from({ length: 100 }, (_, i) => ({
    kind: "profile",
    content: `The user enjoys hobby number ${i + 1}, which they took up recently`,
    label: `hobby ${i + 1}`
  }))
  const fullName: Save = {
    kind: "profile",
    content: "The user's full name is Douglas Alexander Fairweather-Smith of Little Wobbling",
    label: "name"
  }

  for (
    const [what, config] of [["a companion", { background: companion }], ["an opt-out agent", {
      background: assistant
    }]] as const
  ) {
    it.effect(`the name, the oldest of 101 facts, is still in ${what}'s prompt`, () =>
      run({ "Hi, I'm Doug.": [fullName], "Let me tell you my hobbies.": facts }, () =>
        Effect.gen(function*() {
          yield* turn("Hi, I'm Doug.", config)
          yield* turn("Let me tell you my hobbies.", config)
          expect((yield* MemoryStore.MemoryStore.pipe(Effect.flatMap((s) => s.list({ limit: 500 })))).records.length)
            .toBe(101)
          const { agent, snapshot, text } = yield* turn("who am I?", config)
          expect(text.split(fullName.content).length - 1).toBe(1)
          // A companion's About the User keeps the name when newer hobbies spill.
          if (config.background === companion) expect(agent.composedIds).toContain("mem-000001")
          // Something was left out — the budget bit — and the name was not.
          const identity = snapshot.projection.section("identity_memory")
          expect((identity?.memoryIds.length ?? 0) + agent.composedIds.length).toBeLessThan(101)
        })))
  }
})

describe("4. one value per identity slot across every scope the request reads", () => {
  const bob = { content: "The user's name is Bob", kind: "profile", label: "name", scope: "global" } as const

  for (const promoted of [true, false]) {
    for (const [what, background] of [["a companion", companion], ["an opt-out agent", assistant]] as const) {
      it.effect(`another user's global name (${promoted ? "promoted" : "written without promotion"}) never rides along for ${what}`, () =>
        run(
          { "Hi, I'm Doug.": [nameDoug], "Hi, I'm Bob.": [{ kind: "profile", content: bob.content, label: "name" }] },
          () =>
            Effect.gen(function*() {
              const config = { background, scope: "project:doug", scopes: ["project:doug", "global"] }
              if (promoted) {
                // Another user of a global agent told it their name; memory_save promoted it in global.
                yield* turn("Hi, I'm Bob.", { background, scope: "global", scopes: ["global"] })
              } else {
                yield* Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write([{ ...bob, sourceType: "operator" }]))
              }
              yield* turn("Hi, I'm Doug.", config)
              for (const question of ["who am I?", "what's my name?", "Do you remember my name, Bob?"]) {
                const { text } = yield* turn(question, config)
                expect([question, word(text, "Doug"), text.includes("The user's name is Bob")]).toEqual([
                  question,
                  true,
                  false
                ])
              }
            })
        ))
    }
  }

  it.effect("with no name in the agent's own scope, the identity tier delivers the global one, once", () =>
    run({ "Hi, I'm Bob.": [{ kind: "profile", content: bob.content, label: "name" }] }, () =>
      Effect.gen(function*() {
        yield* turn("Hi, I'm Bob.", { background: assistant, scope: "global", scopes: ["global"] })
        for (const background of [assistant, companion]) {
          const { snapshot, text } = yield* turn("who am I?", {
            background,
            scope: "project:doug",
            scopes: ["project:doug", "global"]
          })
          expect(text.split("The user's name is Bob").length - 1).toBe(1)
          expect(snapshot.projection.section("identity_memory")?.memoryIds).toEqual(["mem-000001"])
        }
      })))

  it.effect("a more specific scope's value wins even where it reaches the request after the global one", () =>
    run({ "Hi, I'm Bob.": [{ kind: "profile", content: bob.content, label: "name" }] }, () =>
      Effect.gen(function*() {
        // Bob's name is promoted in global (the identity tier delivers it first); Doug's, in the
        // agent's own project, was imported without promotion and is always-on.
        yield* turn("Hi, I'm Bob.", { background: assistant, scope: "global", scopes: ["global"] })
        yield* Effect.flatMap(MemoryStore.MemoryStore, (s) =>
          s.write([{
            content: "The user's name is Doug",
            kind: "profile",
            label: "name",
            scope: "project:doug",
            sourceType: "operator",
            deliveryPolicy: "always"
          }]))
        const { snapshot, text } = yield* turn("who am I?", {
          background: assistant,
          scope: "project:doug",
          scopes: ["project:doug", "global"]
        })
        expect(text).toContain("The user's name is Doug")
        expect(text).not.toContain("The user's name is Bob")
        expect(snapshot.projection.budget.withheld).toContainEqual({
          section: "identity_memory",
          ref: "mem-000001",
          reason: "scope-shadowed"
        })
      })))
})

describe("4b. a narrower scope's value wins over the stable prefix's (decision 0075)", () => {
  const project = { scope: "project:doug", scopes: ["project:doug"] } as const
  const reads = { scope: "project:doug", scopes: ["session:work", "project:doug", "global"] } as const
  const lessons: Lessons = {
    "Hi, I'm Doug.": [nameDoug],
    "At work, call me Douglas.": [{ kind: "profile", content: "The user's name is Douglas", label: "name" }]
  }

  for (const [what, background] of [["a companion", companion], ["an opt-out agent", assistant]] as const) {
    it.effect(`a session's name replaces the project's in the prompt, once, for ${what}`, () =>
      run(lessons, () =>
        Effect.gen(function*() {
          // The project's name is promoted (and composed into a companion's prefix); the session's
          // own scope holds another value for the same slot.
          yield* turn("Hi, I'm Doug.", { background: companion, ...project })
          yield* turn("At work, call me Douglas.", {
            background: companion,
            scope: "session:work",
            scopes: ["session:work"]
          })
          for (const question of ["who am I?", "what's my name?"]) {
            const { agent, snapshot, text } = yield* turn(question, { background, ...reads })
            expect([question, text.split("The user's name is Douglas").length - 1, word(text, "Doug")]).toEqual([
              question,
              1,
              false
            ])
            expect(agent.composedIds).not.toContain("mem-000001")
            expect(snapshot.projection.section("identity_memory")?.memoryIds).toEqual(["mem-000002"])
            if (background === companion) {
              expect(agent.report?.outcomes).toContainEqual(
                expect.objectContaining({
                  recordId: "mem-000001",
                  status: "declined",
                  reason: "scope-overridden",
                  heldBy: "mem-000002"
                })
              )
            }
          }
          // An agent that does not read the session keeps the project's name, in its prefix.
          const { agent, text } = yield* turn("who am I?", { background, ...project })
          expect([word(text, "Doug"), text.includes("Douglas")]).toEqual([true, false])
          if (background === companion) expect(agent.composedIds).toEqual(["mem-000001"])
        })))
  }

  it.effect("a narrower scope that holds nothing for the slot leaves the prefix byte for byte as it was", () =>
    run(lessons, () =>
      Effect.gen(function*() {
        yield* turn("Hi, I'm Doug.", { background: companion, ...project })
        const own = yield* turn("who am I?", { background: companion, ...project })
        const wider = yield* turn("who am I?", { background: companion, ...reads })
        expect(wider.agent.prefix).toEqual(own.agent.prefix)
        expect(wider.agent.prefix.length).toBeGreaterThan(0)
        expect(wider.agent.composedIds).toEqual(["mem-000001"])
      })))
})

describe("5. the sanitiser does not damage names", () => {
  const names = [
    "\u0645\u0647\u0631\u200C\u0646\u0627\u0632", // مهر‌ناز (Mehrnaz), with its ZWNJ
    "\u0915\u094D\u200D\u0937\u093F\u0924\u093F", // क्‍षिति, a Devanagari half form
    "Sam \u{1F469}\u200D\u{1F4BB}" // an emoji ZWJ sequence
  ]
  for (const name of names) {
    it.effect(`${JSON.stringify(name)} reaches the next prompt byte for byte, in the prefix and the tier`, () =>
      run(
        { "Remember my name.": [{ kind: "profile", content: `My name is ${name}`, label: "name" }] },
        () =>
          Effect.gen(function*() {
            yield* turn("Remember my name.")
            for (const config of [{ background: companion }, { background: assistant }]) {
              const { text } = yield* turn("who am I?", config)
              expect(text).toContain(`My name is ${name}`)
            }
          })
      ))
  }

  it.effect("a joiner that joins nothing is still removed on the way to the model", () =>
    run(
      { "Remember my name.": [{ kind: "profile", content: "My name is Do\u200Cug\u200D", label: "name" }] },
      () =>
        Effect.gen(function*() {
          yield* turn("Remember my name.")
          const { text } = yield* turn("who am I?")
          expect(text).toContain("My name is Doug")
          expect(text).not.toMatch(/[\u200C\u200D]/u)
        })
    ))
})
