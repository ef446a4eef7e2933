/**
 * `Agent.inMode` and `Agent.planTurn`: what an agent sends in each mode (the incognito rule) and
 * the one mapping of a turn to its projection request, which every runtime calls.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  type ContextProjection,
  type MemoryOverlay,
  type ProjectionLayout,
  type PromptFragment,
  Routing,
  RoutingPresets
} from "@engram/core"
import { Agent } from "@engram/runtime"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"

const section = (
  name: string,
  fragments: PromptFragment.AgentPromptSectionData["fragments"]
): PromptFragment.AgentPromptSectionData => ({ name, source: "instance", fragments })

const composed = section("Context", [
  { source: "authored", text: "### About the User" },
  { source: "memory", text: "- **name**: Doug", memoryIds: ["m-name"] }
])
const authored = section("Context", [{ source: "authored", text: "### About the User" }])
const identity: ContextProjection.IdentitySource = {
  spec: RoutingPresets.userBackground,
  scope: "global",
  context: Routing.routingContext(RoutingPresets.userBackgroundSections),
  heldAddresses: [`["about_user","name"]`]
}
const report: MemoryOverlay.OverlayReport = {
  specKey: "user-background",
  specVersion: "1",
  budget: { totalChars: 3000, sectionChars: 1500, perSection: {} },
  outcomes: []
}
const built: Agent.Agent = { prefix: [composed], authoredPrefix: [authored], composedIds: ["m-name"], identity, report }

const turn = (mode: ProjectionLayout.ProjectionMode, fields: Partial<Agent.Turn> = {}): Agent.Turn => ({
  sessionId: "s-1",
  turn: 3,
  query: "who am I?",
  mode,
  scopes: ["global", "project:x"],
  ...fields
})

describe("Agent.planTurn", () => {
  it("native: the composed prefix, its ids withheld, the identity source, the turn's own fields", () => {
    const plan = Either.getOrThrow(
      Agent.planTurn(built, turn("native", { workingState: "goal: x", skills: [{ name: "a", description: "b" }] }))
    )
    expect(plan.prefix).toEqual([composed])
    expect(plan.report).toBe(report)
    expect(plan.request).toEqual({
      sessionId: "s-1",
      turn: 3,
      query: "who am I?",
      scopes: ["global", "project:x"],
      mode: "native",
      inPrefix: ["m-name"],
      identity,
      workingState: "goal: x",
      skills: [{ name: "a", description: "b" }]
    })
  })

  it("incognito: the authored prefix, nothing withheld or reported; the record flag as given", () => {
    const plan = Either.getOrThrow(Agent.planTurn(built, turn("incognito", { record: false })))
    expect(plan.prefix).toEqual([authored])
    expect(plan.composedIds).toEqual([])
    expect(plan.report).toBeUndefined()
    expect(plan.request).toMatchObject({ mode: "incognito", inPrefix: [], record: false })
  })

  it("incognito refuses a prefix holding memory when there is no authored one to send", () => {
    const { authoredPrefix: _, ...withoutAuthored } = built
    const refused = Agent.planTurn(withoutAuthored, turn("incognito"))
    expect(Either.isLeft(refused) && refused.left).toBeInstanceOf(Agent.IncognitoPrefixHoldsMemory)
    expect(Either.isLeft(refused) && refused.left.memoryIds).toEqual(["m-name"])
    // Any other mode sends that prefix.
    expect(Either.isRight(Agent.planTurn(withoutAuthored, turn("external")))).toBe(true)
  })

  it("an agent with nothing built sends no prefix and withholds nothing", () => {
    const plan = Either.getOrThrow(Agent.planTurn({}, turn("external")))
    expect(plan.prefix).toEqual([])
    expect(plan.request).toEqual({
      sessionId: "s-1",
      turn: 3,
      query: "who am I?",
      scopes: ["global", "project:x"],
      mode: "external",
      inPrefix: []
    })
  })

  it("property: no memory reaches an incognito prefix, and the request always mirrors the turn and what is sent", () => {
    const fragment = fc.oneof(
      fc.string({ maxLength: 8 }).map((text): PromptFragment.PromptFragment => ({ source: "authored", text })),
      fc.array(fc.constantFrom("m1", "m2", "m3"), { minLength: 1, maxLength: 2 }).map((
        [first, ...rest]
      ): PromptFragment.PromptFragment => ({ source: "memory", text: "- x", memoryIds: [first!, ...rest] }))
    )
    const prefix = fc.array(
      fc.array(fragment, { minLength: 1, maxLength: 3 }).map(([first, ...rest]) => section("S", [first!, ...rest])),
      { maxLength: 3 }
    )
    const agentArb = fc.record({
      prefix: fc.option(prefix, { nil: undefined }),
      authoredPrefix: fc.option(
        fc.array(fc.constant(authored), { maxLength: 2 }),
        { nil: undefined }
      ),
      composedIds: fc.option(fc.array(fc.constantFrom("m1", "m2"), { maxLength: 2 }), { nil: undefined }),
      identity: fc.option(fc.constant(identity), { nil: undefined })
    })
    const modeArb = fc.constantFrom<ProjectionLayout.ProjectionMode>(
      "native",
      "external",
      "autonomous",
      "incognito",
      "subagent"
    )
    fc.assert(
      fc.property(agentArb, modeArb, fc.option(fc.boolean(), { nil: undefined }), (agent, mode, record) => {
        const planned = Agent.planTurn(agent, turn(mode, { record }))
        const memoryOf = (sections: ReadonlyArray<PromptFragment.AgentPromptSectionData>) =>
          sections.flatMap((s) => s.fragments.flatMap((f) => (f.source === "memory" ? f.memoryIds : [])))
        const incognito = mode === "incognito"
        if (Either.isLeft(planned)) {
          return incognito && agent.authoredPrefix === undefined && memoryOf(agent.prefix ?? []).length > 0
        }
        const plan = planned.right
        return (!incognito || memoryOf(plan.prefix).length === 0) &&
          plan.request.mode === mode && plan.request.sessionId === "s-1" && plan.request.turn === 3 &&
          plan.request.identity === agent.identity && plan.request.record === record &&
          JSON.stringify(plan.request.inPrefix) === JSON.stringify(incognito ? [] : agent.composedIds ?? []) &&
          JSON.stringify(plan.composedIds) === JSON.stringify(plan.request.inPrefix)
      })
    )
  })
})
