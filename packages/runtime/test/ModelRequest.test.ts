import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord, ProjectionLayout, PromptFragment, SessionStore } from "@engram/core"
import { ModelRequest } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as fc from "fast-check"

const now = DateTime.unsafeMake(Date.UTC(2025, 0, 2))
const at = now

const record = (id: string, content: string, kind: MemoryRecord.MemoryKind = "fact") =>
  MemoryRecord.fromWriteInput({ content, kind, sourceType: "operator", scope: "global" }, { id, now })

const prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData> = [
  { name: "Identity", source: "role", fragments: [PromptFragment.authored("You are Ada.")] },
  {
    name: "Context",
    source: "role",
    fragments: [
      PromptFragment.authored("## Context\n\n### About\n"),
      PromptFragment.memory("- **name**: Doug", ["m-1"])
    ]
  }
]

const input = new SessionStore.OperatorMessage({ text: "who am I?", at })

describe("ModelRequest.compose", () => {
  it("puts the projection right after the turn's input, and attributes every byte", () => {
    const projection = ProjectionLayout.composeProjectedContext({
      now,
      workingState: "step 1",
      recall: [{ record: record("m-2", "Doug likes teal"), score: 1 }]
    }, { budget: ProjectionLayout.tokens(16_000) })
    const history = [
      new SessionStore.OperatorMessage({ text: "hi", at }),
      new SessionStore.AssistantMessage({
        text: "",
        toolCalls: [{ id: "c1", name: "memory_recall", params: { query: "hi" } }],
        at
      }),
      new SessionStore.ToolMessage({
        results: [{ id: "c1", name: "memory_recall", isFailure: false, result: { memories: [] } }],
        at
      }),
      new SessionStore.AssistantMessage({ text: "hello", toolCalls: [], at })
    ]
    const request = ModelRequest.compose({ prefix, history, input, rounds: [], projection })
    expect(request.prompt.content.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "assistant",
      "user",
      "user"
    ])
    const system = request.prompt.content[0]!
    expect(system.role === "system" && system.content).toBe(PromptFragment.joinPrompt(prefix))
    // The system fragments join back to the system text, memory fragments keep their ids.
    const systemFragments = request.fragments.filter((f) => f.message === 0)
    expect(systemFragments.map((f) => f.text).join("")).toBe(PromptFragment.joinPrompt(prefix))
    expect(systemFragments.find((f) => f.text.includes("Doug"))).toMatchObject({ source: "prefix", memoryIds: ["m-1"] })
    // The projection message is the projection's text, sliced by section.
    const last = request.prompt.content[6]!
    expect(last.role === "user" && last.content[0]!.type === "text" && last.content[0]!.text).toBe(projection.text)
    const slices = request.fragments.filter((f) => f.source === "projection")
    expect(slices.map((f) => f.label)).toEqual(["working_state", "envelope", "recalled_memory", "envelope"])
    expect(slices.find((f) => f.label === "recalled_memory")?.memoryIds).toEqual(["m-2"])
    expect(ModelRequest.memoryIdsOf(request)).toEqual(["m-1", "m-2"])
  })

  it("leaves an empty projection out and strips legacy frames", () => {
    const projection = ProjectionLayout.composeProjectedContext({ now }, { budget: ProjectionLayout.tokens(16_000) })
    const frame = new SessionStore.OperatorMessage({
      text: "<working_state>\nold\n</working_state>",
      at,
      legacyContextFrame: true
    })
    const request = ModelRequest.compose({ prefix: [], history: [frame], input, rounds: [], projection })
    expect(request.prompt.content.map((m) => m.role)).toEqual(["user"])
    expect(request.strippedFrames).toBe(1)
    expect(ScriptedModel.promptJson(request.prompt)).not.toContain("old")
  })
})

describe("ModelRequest.sliceProjection", () => {
  const text = fc.string({ maxLength: 40 })
  const adversarial = fc.constantFrom(
    "</recalled_memory>",
    "<injected_memory>",
    "\n<working_state>\n",
    "</ always_on_memory >",
    "plain"
  )
  const content = fc.oneof(text, adversarial, fc.tuple(text, adversarial, text).map((parts) => parts.join("")))
    .filter((s) => s.trim() !== "")

  it("slices join back to the text, and each memory section carries its report's ids", () => {
    fc.assert(
      fc.property(
        fc.option(content, { nil: undefined }),
        fc.array(content, { maxLength: 4 }),
        fc.array(content, { maxLength: 4 }),
        fc.array(fc.record({ name: content, description: text }), { maxLength: 3 }),
        (workingState, alwaysOn, recalled, skills) => {
          const projection = ProjectionLayout.composeProjectedContext({
            now,
            ...(workingState !== undefined ? { workingState } : {}),
            alwaysOn: alwaysOn.map((c, i) => record(`a-${i}`, c, "standing")),
            recall: recalled.map((c, i) => ({ record: record(`r-${i}`, c), score: 1 })),
            skills
          }, { budget: ProjectionLayout.tokens(16_000) })
          const slices = ModelRequest.sliceProjection(projection)
          expect(slices.map((s) => s.text).join("")).toBe(projection.text)
          for (const section of projection.sections) {
            if (section.status === "dropped") continue
            const slice = slices.find((s) => s.label === section.label)
            expect(slice?.memoryIds).toEqual(section.memoryIds)
            expect(slice?.text.startsWith(`<${section.label}>\n`)).toBe(true)
          }
        }
      ),
      { numRuns: 200 }
    )
  })
})
