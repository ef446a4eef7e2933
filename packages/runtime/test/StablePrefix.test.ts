import { describe, expect, it } from "@effect/vitest"
import {
  Background,
  ContextSection,
  IdGenerator,
  MemoryOverlay,
  MemoryStore,
  PromotionStore,
  PromptFragment,
  RoutingPresets,
  RoutingSpecs
} from "@engram/core"
import { Promotion, StablePrefix } from "@engram/runtime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

const stores = Layer.mergeAll(
  MemoryStore.layerMemory,
  PromotionStore.layerMemory,
  RoutingSpecs.layerPresets,
  IdGenerator.sequential("mem")
)

const full: StablePrefix.AgentConfigInput = {
  name: "ada",
  persona: "You are Ada, a careful release engineer.",
  operatingModel: "Work in small steps. Check each result before the next step.",
  roster: [{ name: "researcher", description: "finds sources\nand cites them" }, { name: "scribe", description: "" }],
  toolGuidance: [{ tool: "memory_save", guidance: "Save what the user tells you about themselves." }, {
    tool: "unused",
    guidance: "  "
  }],
  guidelines: ["Never deploy on Fridays", "  ", "Ask before deleting anything"],
  background: {
    sections: [
      { id: "assistant", title: "Assistant", entries: [{ key: "tone", value: "warm" }] },
      { id: "about_user", title: "About the User", promotion: "auto" }
    ]
  },
  awareness: "## Sources\n- the wiki",
  spec: "user-background"
}

const config = (input: StablePrefix.AgentConfigInput) => StablePrefix.decodeConfig(input)

const names = (prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>) => prefix.map((s) => s.name)

const plugin = (name: string, position: StablePrefix.SectionPosition) => ({ name, text: `## ${name}`, position })

describe("StablePrefix.buildAgent", () => {
  it.effect("renders the sections in authority order, then Context with the Background and awareness", () =>
    Effect.gen(function*() {
      const agent = yield* StablePrefix.buildAgent(yield* config(full))
      expect(names(agent.prefix)).toEqual([
        "Identity",
        "Operating Model",
        "Delegation Roster",
        "Tool Guidance",
        "Guidelines",
        "Context"
      ])
      expect(agent.text).toBe(
        [
          "You are Ada, a careful release engineer.",
          "## Operating Model\n\nWork in small steps. Check each result before the next step.",
          "## Delegation Roster\n\n- **researcher**: finds sources and cites them\n- **scribe**",
          "## Tool Guidance\n\n### memory_save\nSave what the user tells you about themselves.",
          "## Guidelines\n\n- Never deploy on Fridays\n- Ask before deleting anything",
          "## Context\n\n### Assistant\n- **tone**: warm\n\n### Sources\n- the wiki"
        ].join("\n\n")
      )
      expect(agent.text).toBe(PromptFragment.joinPrompt(agent.prefix))
      expect(agent.prefix.map((s) => s.source)).toEqual(["role", "role", "role", "role", "role", "instance"])
      expect(agent.report.outcomes).toEqual([])
      expect(agent.composedIds).toEqual([])
      expect(agent.scopes).toEqual(["global"])
    }).pipe(Effect.provide(stores)))

  it.effect("leaves out sections with nothing to say", () =>
    Effect.gen(function*() {
      const agent = yield* StablePrefix.buildAgent(yield* config({ persona: "You are terse.", guidelines: [" "] }))
      expect(names(agent.prefix)).toEqual(["Identity"])
      expect(agent.text).toBe("You are terse.")
    }).pipe(Effect.provide(stores)))

  it.effect("folds promoted memories into the Background; fragments attribute each entry to its record ids", () =>
    Effect.gen(function*() {
      const built = yield* config(full)
      const memories = yield* MemoryStore.MemoryStore
      const records = yield* memories.write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "Lives in Oslo", kind: "profile", label: "city" },
        { content: "Answer briefly", kind: "standing", label: "length" }
      ])
      yield* Promotion.promoteNew(records, { background: built.background, spec: RoutingPresets.userBackground })
      const agent = yield* StablePrefix.buildAgent(built)
      const context = agent.prefix.find((s) => s.name === "Context")!
      expect(PromptFragment.joinFragments(context.fragments)).toBe(
        "## Context\n\n### Assistant\n- **tone**: warm\n\n### About the User\n- **name**: My name is Doug\n" +
          "- **location**: Lives in Oslo\n\n### Sources\n- the wiki"
      )
      const memoryFragments = context.fragments.filter((f) => f.source === "memory")
      expect(memoryFragments.map((f) => [f.text, f.source === "memory" ? f.memoryIds : []])).toEqual([
        ["- **name**: My name is Doug\n", ["mem-000001"]],
        ["- **location**: Lives in Oslo", ["mem-000002"]]
      ])
      expect(PromptFragment.memoryIdsOf(agent.prefix.flatMap((s) => s.fragments))).toEqual(["mem-000001", "mem-000002"])
      expect(agent.composedIds).toEqual(["mem-000001", "mem-000002"])
      expect(agent.report.specKey).toBe("user-background")
      // the standing record has no declared section here: reported, not composed
      expect(MemoryOverlay.declined(agent.report).map((o) => [o.recordId, o.reason])).toEqual([
        ["mem-000003", "undeclared-section"]
      ])
      expect(agent.text).toBe(PromptFragment.joinPrompt(agent.prefix))
    }).pipe(Effect.provide(stores)))

  it.effect("an unknown routing spec is a typed error naming the known specs", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(StablePrefix.buildAgent(yield* config({ spec: "nope" })))
      expect(error._tag).toBe("RoutingSpecNotFound")
      expect(error.message).toContain("project, user-background")
    }).pipe(Effect.provide(stores)))

  it.effect("a bad plugin layout fails before any store is read", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(
        StablePrefix.buildAgent(
          yield* config({ spec: "user-background", plugins: [plugin("X", { after: "Nowhere" })] })
        )
      )
      expect(error._tag).toBe("UnknownSectionAnchor")
    }).pipe(
      Effect.provide(Layer.merge(RoutingSpecs.layerPresets, IdGenerator.sequential("mem"))),
      Effect.provide(
        Layer.succeed(MemoryStore.MemoryStore, {} as MemoryStore.Service)
      ),
      Effect.provide(Layer.succeed(PromotionStore.PromotionStore, {} as PromotionStore.Service))
    ))
})

describe("StablePrefix plugins", () => {
  const order = (plugins: ReadonlyArray<Pick<StablePrefix.PluginSection, "name" | "position">>) =>
    Either.getOrThrow(StablePrefix.orderSections(plugins))

  it("places a plugin right before or right after its anchor", () => {
    expect(order([plugin("Safety", { after: "Identity" }), plugin("Memory Rules", { before: "Context" })])).toEqual([
      "Identity",
      "Safety",
      "Operating Model",
      "Delegation Roster",
      "Tool Guidance",
      "Guidelines",
      "Memory Rules",
      "Context"
    ])
    expect(order([plugin("First", { before: "Identity" }), plugin("Last", { after: "Context" })])).toEqual([
      "First",
      ...StablePrefix.AUTHORITY_ORDER,
      "Last"
    ])
  })

  it("keeps declaration order at one anchor, and a plugin anchored on a plugin travels with it", () => {
    const plugins = [
      plugin("A", { after: "Identity" }),
      plugin("B", { after: "Identity" }),
      plugin("A.1", { after: "A" }),
      plugin("A.0", { before: "A" }),
      plugin("C", { before: "Operating Model" })
    ]
    expect(order(plugins).slice(0, 7)).toEqual(["Identity", "A.0", "A", "A.1", "B", "C", "Operating Model"])
  })

  it("is deterministic and satisfies every constraint, whatever the declarations", () => {
    const anchors = [...StablePrefix.AUTHORITY_ORDER, "P0", "P1", "P2", "P3"]
    // every plugin anchored on a built-in or an earlier plugin: always orderable
    for (let seed = 0; seed < 200; seed++) {
      let s = seed + 1
      const next = (n: number) => (s = (s * 48271) % 2147483647) % n
      const plugins = Array.from({ length: 4 }, (_, i) => {
        const anchor = anchors[next(StablePrefix.AUTHORITY_ORDER.length + i)]!
        return plugin(`P${i}`, next(2) === 0 ? { before: anchor } : { after: anchor })
      })
      const result = order(plugins)
      expect(order(plugins)).toEqual(result)
      expect(result.filter((name) => !name.startsWith("P"))).toEqual(StablePrefix.AUTHORITY_ORDER)
      for (const p of plugins) {
        const at = result.indexOf(p.name)
        if ("before" in p.position) expect(at).toBeLessThan(result.indexOf(p.position.before))
        else expect(at).toBeGreaterThan(result.indexOf(p.position.after))
      }
    }
  })

  it.effect("renders plugin sections at their place, with their source", () =>
    Effect.gen(function*() {
      const agent = yield* StablePrefix.buildAgent(
        yield* config({
          persona: "You are Ada.",
          guidelines: ["Be kind"],
          plugins: [
            { name: "Safety", text: "## Safety\n\nAsk before deleting anything.\n", position: { after: "Identity" } },
            { name: "Empty", text: "   ", position: { before: "Guidelines" } },
            {
              name: "Instance Notes",
              text: "## Notes\n\nDeployed in eu-1.",
              position: { after: "Guidelines" },
              source: "instance"
            }
          ]
        })
      )
      expect(agent.prefix.map((s) => [s.name, s.source])).toEqual([
        ["Identity", "role"],
        ["Safety", "role"],
        ["Guidelines", "role"],
        ["Instance Notes", "instance"]
      ])
      expect(agent.text).toBe(
        "You are Ada.\n\n## Safety\n\nAsk before deleting anything.\n\n## Guidelines\n\n- Be kind\n\n" +
          "## Notes\n\nDeployed in eu-1."
      )
    }).pipe(Effect.provide(stores)))

  it("an unknown anchor is a typed error naming the section, the anchor and the known sections", () => {
    const result = StablePrefix.orderSections([plugin("Safety", { after: "Identiy" })])
    expect(Either.isLeft(result)).toBe(true)
    const error = Either.flip(result).pipe(Either.getOrThrow)
    expect(error).toBeInstanceOf(StablePrefix.UnknownSectionAnchor)
    expect(error.message).toBe(
      `section "Safety" is placed relative to "Identiy", which is not a section (known: "Identity", ` +
        `"Operating Model", "Delegation Roster", "Tool Guidance", "Guidelines", "Context", "Safety")`
    )
  })

  it("a cycle is a typed error that names the cycle", () => {
    const result = StablePrefix.orderSections([
      plugin("Ok", { after: "Identity" }),
      plugin("A", { after: "B" }),
      plugin("B", { before: "C" }),
      plugin("C", { after: "A" })
    ])
    const error = Either.flip(result).pipe(Either.getOrThrow)
    expect(error).toBeInstanceOf(StablePrefix.SectionOrderCycle)
    expect(error._tag === "SectionOrderCycle" && error.cycle).toEqual(["A", "B", "C", "A"])
    expect(error.message).toContain(`"A" → "B" → "C" → "A"`)
    const self = Either.flip(StablePrefix.orderSections([plugin("Me", { after: "Me" })])).pipe(Either.getOrThrow)
    expect(self._tag === "SectionOrderCycle" && self.cycle).toEqual(["Me", "Me"])
  })

  it("a plugin may not reuse a section name", () => {
    const builtin = Either.flip(StablePrefix.orderSections([plugin("Context", { after: "Identity" })]))
    expect(Either.getOrThrow(builtin)).toBeInstanceOf(StablePrefix.DuplicateSection)
    const twice = Either.flip(
      StablePrefix.orderSections([plugin("X", { after: "Identity" }), plugin("X", { before: "Context" })])
    )
    expect(Either.getOrThrow(twice).message).toBe(`two sections are named "X"; section names must be unique`)
  })
})

describe("StablePrefix.decodeConfig", () => {
  it.effect("fills defaults, freezes the Background, and refuses unknown fields", () =>
    Effect.gen(function*() {
      const decoded = yield* config({})
      expect(decoded).toMatchObject({ persona: "", roster: [], plugins: [], scope: "global" })
      expect(decoded.background).toEqual(Background.empty)
      const misspelt = yield* Effect.flip(StablePrefix.decodeConfig({ persna: "x" }))
      expect(misspelt.message).toContain("persna")
      const badPosition = yield* Effect.flip(
        StablePrefix.decodeConfig({ plugins: [{ name: "X", text: "x", position: { beside: "Identity" } }] })
      )
      expect(badPosition._tag).toBe("InvalidAgentConfig")
    }))

  it.effect("decodes the agent's own projection settings, and refuses a bad one naming the field", () =>
    Effect.gen(function*() {
      const decoded = yield* config({ projection: { budgetTokens: 2_000, digest: "off" } })
      expect(decoded.projection).toEqual({ budgetTokens: 2_000, digest: "off" })
      const tooSmall = yield* Effect.flip(StablePrefix.decodeConfig({ projection: { budgetTokens: 10 } }))
      expect(tooSmall._tag).toBe("InvalidAgentConfig")
      expect(tooSmall.message).toContain("projection")
      expect(tooSmall.message).toContain("budgetTokens")
      const unknown = yield* Effect.flip(StablePrefix.decodeConfig({ projection: { budget: 2_000 } }))
      expect(unknown.message).toContain("budget")
    }))

  it("the Context section name matches core's ContextSection", () => {
    expect(StablePrefix.AUTHORITY_ORDER.at(-1)).toBe(ContextSection.sectionName)
  })
})
