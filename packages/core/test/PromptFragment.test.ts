import { describe, expect, it } from "@effect/vitest"
import { PromptFragment } from "@engram/core"
import { Either, Schema } from "effect"
import * as fc from "fast-check"

const decodeFragment = Schema.decodeUnknownEither(PromptFragment.PromptFragment, { onExcessProperty: "error" })
const decodeSection = Schema.decodeUnknownEither(PromptFragment.AgentPromptSectionData)

describe("PromptFragment", () => {
  it("accepts authored text and memory text with ids", () => {
    expect(Either.isRight(decodeFragment({ source: "authored", text: "You are kind." }))).toBe(true)
    expect(Either.isRight(decodeFragment({ source: "memory", text: "- **name**: Doug", memoryIds: ["m1"] }))).toBe(true)
  })

  it("rejects empty text, a memory fragment without ids, and an authored fragment with ids", () => {
    expect(Either.isLeft(decodeFragment({ source: "authored", text: "" }))).toBe(true)
    expect(Either.isLeft(decodeFragment({ source: "memory", text: "x", memoryIds: [] }))).toBe(true)
    expect(Either.isLeft(decodeFragment({ source: "memory", text: "x" }))).toBe(true)
    expect(Either.isLeft(decodeFragment({ source: "authored", text: "x", memoryIds: ["m1"] }))).toBe(true)
    expect(Either.isLeft(decodeFragment({ source: "role", text: "x" }))).toBe(true)
  })

  it("section data needs a name, a role or instance source, and at least one fragment", () => {
    expect(
      Either.isRight(
        decodeSection({ name: "Identity", source: "role", fragments: [{ source: "authored", text: "x" }] })
      )
    )
      .toBe(true)
    expect(Either.isLeft(decodeSection({ name: "Identity", source: "role", fragments: [] }))).toBe(true)
    expect(
      Either.isLeft(
        decodeSection({ name: "Identity", source: "memory", fragments: [{ source: "authored", text: "x" }] })
      )
    )
      .toBe(true)
  })
})

describe("renderSections and joinPrompt", () => {
  const identity = PromptFragment.fromText("Identity", "You are Ada, a companion.")
  const silent = PromptFragment.fromText("Guidelines", "")
  const facts: PromptFragment.PromptSection = {
    name: "Facts",
    renderFragments: (ctx) => [
      PromptFragment.authored("Facts:\n"),
      PromptFragment.memory(`- lives in Oslo (${ctx?.scope ?? "no scope"})`, ["m7"]),
      PromptFragment.authored("")
    ]
  }

  it("leaves out sections with nothing to say and joins the rest with one blank line", () => {
    const sections = PromptFragment.renderSections([
      { section: identity, source: "role" },
      { section: silent, source: "role" },
      { section: facts, source: "instance" }
    ], { scope: "global" })
    expect(sections.map((section) => [section.name, section.source])).toEqual([["Identity", "role"], [
      "Facts",
      "instance"
    ]])
    expect(PromptFragment.joinPrompt(sections)).toBe("You are Ada, a companion.\n\nFacts:\n- lives in Oslo (global)")
    expect(sections[1]!.fragments).toHaveLength(2)
    expect(PromptFragment.memoryIdsOf(sections.flatMap((section) => section.fragments))).toEqual(["m7"])
  })

  it("renders without a context when none is given", () => {
    const sections = PromptFragment.renderSections([{ section: facts, source: "instance" }])
    expect(PromptFragment.joinPrompt(sections)).toBe("Facts:\n- lives in Oslo (no scope)")
  })

  it("compact merges neighbouring authored fragments and drops empty ones without changing the text", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.string().map((text) => PromptFragment.authored(text)),
            fc.string({ minLength: 1 }).map((text) => PromptFragment.memory(text, ["m1"]))
          )
        ),
        (fragments) => {
          const compacted = PromptFragment.compact(fragments)
          expect(PromptFragment.joinFragments(compacted)).toBe(PromptFragment.joinFragments(fragments))
          for (let i = 0; i < compacted.length; i++) {
            expect(compacted[i]!.text).not.toBe("")
            if (i > 0) {
              expect(compacted[i]!.source === "authored" && compacted[i - 1]!.source === "authored").toBe(false)
            }
          }
          expect(compacted.filter((f) => f.source === "memory")).toEqual(fragments.filter((f) => f.source === "memory"))
          return true
        }
      )
    )
  })
})
