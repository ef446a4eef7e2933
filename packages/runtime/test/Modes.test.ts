/**
 * The mode table, one test per cell, through the runtimes that ship (not only `project()`): what
 * reaches the model's prefix and projection, which tools it is offered, and what it may write.
 *
 * Every test runs on the same store: a promoted profile (composed into the prefix), an always-on
 * standing instruction, a retrievable fact, an `on_demand` fact and a prior session's summary —
 * all matching the turn's question.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  MemoryStore,
  type PromptFragment,
  RoutingPresets,
  RoutingSpecs,
  SessionStore
} from "@engram/core"
import { ContextAssembler, NativeRuntime, Promotion, StablePrefix, Subagent } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { environment, injections, memory, projectionText } from "./agentFixtures.js"

const QUESTION = "Which staging database and vault code should Doug use?"

/** Saves a note when offered memory_save, then answers. */
const script: ScriptedModel.Script = (request) =>
  ScriptedModel.pendingToolResults(request).length > 0 || !request.tools.includes("memory_save")
    ? [ScriptedModel.text("Done.")]
    : [ScriptedModel.toolCall("memory_save", { kind: "note", content: "Doug asked about the staging database" })]

const world = Layer.merge(environment(script), RoutingSpecs.layerPresets)

const companion: StablePrefix.AgentConfigInput = {
  persona: "You are a companion.",
  spec: "user-background",
  background: { sections: RoutingPresets.userBackgroundSections.sections }
}
const config = StablePrefix.decodeConfig(companion)

/** The store every cell starts from; returns the ids. */
const seedStore = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  const [name, standing, fact, vault, summary] = yield* store.write([
    { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" },
    {
      content: "Doug wants answers about staging kept short",
      kind: "standing",
      deliveryPolicy: "always",
      sourceType: "operator"
    },
    { content: "The staging database is db-2", kind: "fact", sourceType: "operator" },
    { content: "The staging vault code is 4711", kind: "fact", deliveryPolicy: "on_demand", sourceType: "operator" },
    ContextProjection.summaryInput("s-0", "Doug planned the staging database migration")
  ])
  yield* Promotion.promoteNew([name!], {
    background: RoutingPresets.userBackgroundSections,
    spec: RoutingPresets.userBackground
  })
  return { name: name!.id, standing: standing!.id, fact: fact!.id, vault: vault!.id, summary: summary!.id }
})

const memoryIds = (prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>) =>
  prefix.flatMap((section) => section.fragments.flatMap((f) => (f.source === "memory" ? f.memoryIds : [])))

const runIn = (mode: NativeRuntime.NativeMode) =>
  Effect.gen(function*() {
    const ids = yield* seedStore
    const agent = yield* NativeRuntime.fromConfig(companion, { mode })
    const before = (yield* Effect.flatMap(MemoryStore.MemoryStore, (s) => s.list({}))).records.length
    const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: QUESTION })
    const [request] = yield* ScriptedModel.requests
    const after = (yield* Effect.flatMap(MemoryStore.MemoryStore, (s) => s.list({}))).records.length
    return {
      ids,
      agent,
      result,
      request: request!,
      system: ScriptedModel.systemText(request!),
      projection: projectionText(request!).join("\n"),
      written: after - before,
      rows: yield* injections("s-1")
    }
  })

describe("the mode table through NativeRuntime", () => {
  it.effect("native: full prefix; projection with always-on, digest and recall; both memory tools; writes land", () =>
    Effect.gen(function*() {
      const run = yield* runIn("native")
      // Stable prefix: the promoted profile is composed into it.
      expect(run.system).toContain("The user's name is Doug")
      expect(run.agent.composedIds).toEqual([run.ids.name])
      // Projection: always-on, digest and recall — and not what the prefix already carries (inPrefix).
      expect(run.projection).toContain("<always_on_memory>")
      expect(run.projection).toContain("<prior_sessions>")
      expect(run.projection).toContain("The staging database is db-2")
      expect(run.projection).not.toContain("The user's name is Doug")
      expect(run.result.projection.budget.withheld).toContainEqual(
        expect.objectContaining({ ref: run.ids.name, reason: "in-prefix" })
      )
      // on_demand: never projected.
      expect(run.projection).not.toContain("4711")
      expect(run.request.tools).toEqual(["memory_save", "memory_recall"])
      expect(run.written).toBe(1)
      expect(run.rows[0]).toMatchObject({ mode: "native" })
    }).pipe(Effect.provide(world)))

  it.effect("autonomous: same prefix; digest suppressed, always-on and recall kept; all write paths", () =>
    Effect.gen(function*() {
      const run = yield* runIn("autonomous")
      expect(run.system).toContain("The user's name is Doug")
      expect(run.projection).not.toContain("<prior_sessions>")
      expect(run.projection).not.toContain("Doug planned the staging database migration")
      expect(run.projection).toContain("<always_on_memory>")
      expect(run.projection).toContain("The staging database is db-2")
      expect(run.projection).not.toContain("The user's name is Doug")
      expect(run.request.tools).toEqual(["memory_save", "memory_recall"])
      expect(run.written).toBe(1)
      expect(run.rows[0]).toMatchObject({ mode: "autonomous" })
      expect(run.rows[0]!.sectionLabels).not.toContain("prior_sessions")
    }).pipe(Effect.provide(world)))

  it.effect("incognito: authored prefix only; working state and skills only; no memory read or written; truthful row", () =>
    Effect.gen(function*() {
      const run = yield* runIn("incognito")
      expect(run.system).toContain("You are a companion.")
      expect(run.system).not.toContain("Doug")
      expect(memoryIds(run.agent.prefix)).toEqual([])
      expect(run.projection).not.toContain("Doug")
      expect(run.projection).not.toContain("db-2")
      expect(run.request.tools).toEqual([])
      expect(run.written).toBe(0)
      // The row says no memory was delivered — and none was, in the projection or the prefix.
      expect(run.rows[0]).toMatchObject({ mode: "incognito", memoryIds: [] })
    }).pipe(Effect.provide(world)))

  it.effect("incognito refuses a prefix that holds memory when no authored prefix is given", () =>
    Effect.gen(function*() {
      yield* seedStore
      const built = yield* StablePrefix.buildAgent(yield* config)
      const { authoredPrefix: _, ...withoutAuthored } = built
      const error = yield* Effect.flip(NativeRuntime.make({ ...withoutAuthored, memory, mode: "incognito" }))
      expect(error._tag).toBe("IncognitoPrefixHoldsMemory")
      expect(error.message).toContain("authoredPrefix")
    }).pipe(Effect.provide(world)))
})

describe("the mode table through Subagent.delegate", () => {
  const researcher: Subagent.SubagentConfig = { name: "researcher", prompt: "You find facts. Answer in one line." }

  /** Recalls the question's keywords when offered recall, saves when offered save, then answers. */
  const child: ScriptedModel.Script = (request) => {
    const pending = ScriptedModel.pendingToolResults(request)
    if (pending.length > 0) return [ScriptedModel.text(`Found: ${JSON.stringify(pending.map((p) => p.result))}`)]
    return [
      ...(request.tools.includes("memory_recall")
        ? [ScriptedModel.toolCall("memory_recall", { query: "staging database" })]
        : []),
      ...(request.tools.includes("memory_save")
        ? [
          ScriptedModel.toolCall("memory_save", { kind: "fact", content: "The staging runbook lives in the ops wiki" })
        ]
        : [])
    ]
  }
  const childWorld = Layer.merge(environment(child), RoutingSpecs.layerPresets)

  it.effect("subagent: own prompt, own thread linked to the parent, no projection, allow-listed recall of the parent's store", () =>
    Effect.gen(function*() {
      const ids = yield* seedStore
      const parent = yield* NativeRuntime.fromConfig(companion)
      const outcome = yield* Subagent.delegate({ parent, sessionId: "s-1", subagent: researcher, task: QUESTION })
      const requests = yield* ScriptedModel.requests
      // Its own prompt, verbatim: no identity, no Background of the parent.
      expect(ScriptedModel.systemText(requests[0]!)).toBe("You find facts. Answer in one line.")
      // No projection: system and the task, nothing else.
      expect(requests[0]!.prompt.content.map((m) => m.role)).toEqual(["system", "user"])
      expect(projectionText(requests[0]!)).toEqual([])
      expect(yield* injections(outcome.sessionId)).toEqual([])
      // Allow-listed recall only; it reads the parent's store (and on_demand memory comes this way).
      expect(requests[0]!.tools).toEqual(["memory_recall"])
      expect(outcome.result).toMatchObject({ _tag: "Completed" })
      expect((outcome.result as NativeRuntime.TurnCompleted).text).toContain(ids.fact)
      // Its own thread, named after the parent's.
      expect(outcome).toMatchObject({ parentSessionId: "s-1", sessionId: "s-1/researcher" })
      const thread = yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.load("s-1/researcher"))
      expect(thread.messages[0]).toMatchObject({ _tag: "OperatorMessage", text: QUESTION })
      expect((yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.load("s-1"))).messages).toEqual([])
    }).pipe(Effect.provide(childWorld)))

  it.effect("an agent built in subagent mode directly is offered memory_recall alone, and projects nothing", () =>
    Effect.gen(function*() {
      yield* seedStore
      const agent = yield* NativeRuntime.make({ prefix: [], memory, mode: "subagent" })
      expect(agent.offered).toEqual(["memory_recall"])
      const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-sub", input: QUESTION })
      expect(result.projection.isEmpty).toBe(true)
      expect(yield* injections("s-sub")).toEqual([])
    }).pipe(Effect.provide(childWorld)))

  it.effect("subagent writes land in the parent's store, tagged with the subagent's name, only when allowed", () =>
    Effect.gen(function*() {
      yield* seedStore
      const parent = yield* NativeRuntime.fromConfig(companion)
      const writer = { ...researcher, allow: ["memory_recall", "memory_save"] as const }
      yield* Subagent.delegate({ parent, sessionId: "s-1", subagent: writer, task: QUESTION })
      const saved = (yield* Effect.flatMap(MemoryStore.MemoryStore, (s) => s.list({}))).records.filter((r) =>
        r.content === "The staging runbook lives in the ops wiki"
      )
      expect(saved.map((r) => [r.scope, r.tags])).toEqual([[memory.scope, ["subagent:researcher"]]])
    }).pipe(Effect.provide(childWorld)))
})

describe("what the prefix holds, and the digest's rules, through NativeRuntime", () => {
  it.effect("inPrefix: an agent given composedIds and no identity source never recalls what its prefix composed", () =>
    Effect.gen(function*() {
      const ids = yield* seedStore
      const built = yield* StablePrefix.buildAgent(yield* config)
      // Without `identity` there is no address-level deduplication: composedIds → inPrefix is the only guard.
      const agent = yield* NativeRuntime.make({ prefix: built.prefix, composedIds: built.composedIds, memory })
      const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: "What is the user's name, Doug?" })
      const [request] = yield* ScriptedModel.requests
      expect(ScriptedModel.systemText(request!)).toContain("The user's name is Doug")
      expect(projectionText(request!).join("\n")).not.toContain("The user's name is Doug")
      expect(result.projection.budget.withheld).toContainEqual(
        expect.objectContaining({ ref: ids.name, reason: "in-prefix" })
      )
    }).pipe(Effect.provide(world)))

  it.effect("with room for one recall hit, it goes to a record the projection may deliver (on_demand is not searched)", () =>
    Effect.gen(function*() {
      yield* seedStore
      const agent = yield* NativeRuntime.make({ prefix: [], memory })
      // The on_demand vault code matches the question best; recall must not spend its one hit on it.
      const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: "staging vault code" })
      expect(result.projection.text).toContain("The staging database is db-2")
      expect(result.projection.text).not.toContain("4711")
    }).pipe(
      Effect.provide(
        Layer.merge(environment(() => [ScriptedModel.text("ok")], { recallLimit: 1 }), RoutingSpecs.layerPresets)
      )
    ))

  it.effect("native, relevant digest: the request's scopes only, no stopword overlap, each session's newest summary", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      for (
        const input of [
          ContextProjection.summaryInput("s-a1", "Planned the Kubernetes upgrade"),
          ContextProjection.summaryInput("s-a1", "Cooked a risotto"),
          ContextProjection.summaryInput("s-a2", "Reviewed the Kubernetes dashboards"),
          ContextProjection.summaryInput("s-a3", "Went over the garden"),
          ContextProjection.summaryInput("s-b1", "Kubernetes upgrade in project b", { scope: "project:b" })
        ]
      ) {
        yield* store.write([input])
        yield* TestClock.adjust("1 second")
      }
      const agent = yield* NativeRuntime.make({ prefix: [], memory })
      const result = yield* NativeRuntime.runTurn({
        agent,
        sessionId: "s-now",
        input: "What is the state of the Kubernetes upgrade?"
      })
      // s-a1's newest summary (the risotto) does not match, so its older one does not speak for it;
      // s-a3 shares only "the"; s-b1 is another project's.
      expect(result.projection.injection.priorSessionIds).toEqual(["s-a2"])
      const [request] = yield* ScriptedModel.requests
      const projected = projectionText(request!).join("\n")
      expect(projected).toContain("Reviewed the Kubernetes dashboards")
      expect(projected).not.toContain("Planned the Kubernetes upgrade")
      expect(projected).not.toContain("project b")
    }).pipe(Effect.provide(Layer.merge(environment(script, { digest: "relevant" }), RoutingSpecs.layerPresets))))
})

describe("the identity tier across the mode table", () => {
  /** An agent that declares no user section: promoted profile memories reach it through the identity tier. */
  const optOutInput: StablePrefix.AgentConfigInput = {
    persona: "You are a companion.",
    spec: "user-background",
    background: { sections: [{ id: "assistant", title: "Assistant", entries: [{ key: "role", value: "helper" }] }] }
  }
  const optOut = StablePrefix.decodeConfig(optOutInput)
  const ASK = "Who am I, and what is my locker code?"
  const answer = Layer.merge(environment(() => [ScriptedModel.text("ok")]), RoutingSpecs.layerPresets)

  /** A promoted name; a promoted on_demand locker code; another project's promoted name. */
  const seedIdentity = Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const [name, locker, other] = yield* store.write([
      { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" },
      {
        content: "The user's locker code is 4711",
        kind: "profile",
        label: "locker",
        deliveryPolicy: "on_demand",
        sourceType: "operator"
      },
      {
        content: "The user's name is Dagmar",
        kind: "profile",
        label: "name",
        scope: "project:other",
        sourceType: "operator"
      }
    ])
    yield* Promotion.promoteNew([name!, locker!, other!], {
      background: RoutingPresets.userBackgroundSections,
      spec: RoutingPresets.userBackground
    })
    return { name: name!.id, locker: locker!.id, other: other!.id }
  })

  const turnIn = (mode: NativeRuntime.NativeMode) =>
    Effect.gen(function*() {
      const ids = yield* seedIdentity
      const agent = yield* NativeRuntime.fromConfig(optOutInput, { mode })
      const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: ASK })
      const [request] = yield* ScriptedModel.requests
      const text = ScriptedModel.systemText(request!) + "\n" + ScriptedModel.userTexts(request!).join("\n")
      return { ids, agent, result, text, projection: projectionText(request!).join("\n") }
    })

  it.effect("native: the name through the identity tier, once; never the on_demand code, never another project's", () =>
    Effect.gen(function*() {
      const run = yield* turnIn("native")
      expect(run.agent.composedIds).toEqual([])
      expect(run.result.projection.section("identity_memory")?.memoryIds).toEqual([run.ids.name])
      expect(run.text.split("The user's name is Doug")).toHaveLength(2)
      expect(run.text).not.toContain("4711")
      expect(run.text).not.toContain("Dagmar")
      expect(run.result.projection.budget.withheld).toContainEqual(
        expect.objectContaining({ ref: run.ids.locker, reason: "on-demand" })
      )
    }).pipe(Effect.provide(answer)))

  it.effect("autonomous: the identity tier holds as native", () =>
    Effect.gen(function*() {
      const run = yield* turnIn("autonomous")
      expect(run.result.projection.section("identity_memory")?.memoryIds).toEqual([run.ids.name])
      expect(run.text).not.toContain("4711")
      expect(run.text).not.toContain("Dagmar")
    }).pipe(Effect.provide(answer)))

  it.effect("incognito: no identity line, no memory anywhere in the request", () =>
    Effect.gen(function*() {
      const run = yield* turnIn("incognito")
      expect(run.result.projection.section("identity_memory")).toBeUndefined()
      expect(run.text).not.toContain("Doug")
      expect(run.text).not.toContain("4711")
    }).pipe(Effect.provide(answer)))

  it.effect("external (ContextAssembler): the same identity tier, byte for byte the native projection", () =>
    Effect.gen(function*() {
      const run = yield* turnIn("native")
      const assembler = yield* ContextAssembler.make({
        scopes: ["global"],
        agent: StablePrefix.buildAgent(yield* optOut)
      })
      const external = yield* assembler.assemble("s-ext", ASK)
      expect(external.text).toBe(run.projection)
      expect(external.section("identity_memory")?.memoryIds).toEqual([run.ids.name])
      const incognito = yield* assembler.compose("s-ext-2", ASK, { mode: "incognito" })
      expect(JSON.stringify(incognito.request.prompt)).not.toContain("Doug")
    }).pipe(Effect.provide(answer)))

  it.effect("a declared section never composes the on_demand record: not in the prefix, not in the projection", () =>
    Effect.gen(function*() {
      const ids = yield* seedIdentity
      const agent = yield* NativeRuntime.fromConfig(companion)
      expect(agent.composedIds).toEqual([ids.name])
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: ASK })
      const [request] = yield* ScriptedModel.requests
      expect(ScriptedModel.systemText(request!)).toContain("The user's name is Doug")
      expect(JSON.stringify(request!.prompt)).not.toContain("4711")
    }).pipe(Effect.provide(answer)))

  it.effect("with room for one identity line, it goes to an address the prefix does not hold", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const [home] = yield* store.write([
        { content: "The user lives in Lisbon", kind: "profile", label: "home", sourceType: "operator" }
      ])
      yield* TestClock.adjust("1 second")
      const [name] = yield* store.write([
        { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([home!, name!], {
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      })
      // The overlay budget holds one entry: the newer name is composed, home spills.
      const agent = yield* NativeRuntime.fromConfig({
        spec: "user-background",
        background: { sections: RoutingPresets.userBackgroundSections.sections },
        overlayBudget: { totalChars: 45 }
      })
      expect(agent.composedIds).toEqual([name!.id])
      const result = yield* NativeRuntime.runTurn({ agent, sessionId: "s-1", input: "hello" })
      expect(result.projection.section("identity_memory")?.memoryIds).toEqual([home!.id])
    }).pipe(
      Effect.provide(
        Layer.merge(environment(() => [ScriptedModel.text("ok")], { identityLimit: 1 }), RoutingSpecs.layerPresets)
      )
    ))

  it.effect("subagent: no identity tier (nothing projected)", () =>
    Effect.gen(function*() {
      yield* seedIdentity
      const parent = yield* NativeRuntime.fromConfig(optOutInput)
      yield* Subagent.delegate({ parent, sessionId: "s-1", subagent: { name: "r", prompt: "You help." }, task: ASK })
      const [request] = yield* ScriptedModel.requests
      expect(JSON.stringify(request!.prompt)).not.toContain("Doug")
    }).pipe(Effect.provide(answer)))
})
