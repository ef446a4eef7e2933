import { describe, expect, it } from "@effect/vitest"
import { Background, ContextSection, PromptFragment } from "@engram/core"
import * as fc from "fast-check"

const background = Background.unsafeMake({
  sections: [
    { id: "team", title: "Team", entries: [{ key: "lead", value: "Ana" }] },
    {
      id: "about_user",
      title: "About the User",
      promotion: "auto",
      entries: [{ key: "name", value: "Doug", memoryIds: ["m1"] }]
    }
  ]
})

const shallowHeading = /^ {0,3}#{1,2}(\s|$)/

describe("ContextSection", () => {
  it("renders ## Context with the Background and awareness as ### children", () => {
    const section = ContextSection.make({
      background,
      awareness: "## Available Information Sources\n- the wiki\n- the tracker"
    })
    const [data] = PromptFragment.renderSections([{ section, source: "instance" }])
    expect(data!.name).toBe("Context")
    expect(PromptFragment.joinPrompt([data!])).toBe(
      "## Context\n\n### Team\n- **lead**: Ana\n\n### About the User\n- **name**: Doug\n\n" +
        "### Available Information Sources\n- the wiki\n- the tracker"
    )
    expect(data!.fragments.filter((f) => f.source === "memory")).toEqual([
      { source: "memory", text: "- **name**: Doug", memoryIds: ["m1"] }
    ])
    expect(data!.fragments[0]).toEqual({ source: "authored", text: "## Context\n\n" })
  })

  it("holds awareness alone, background alone, or nothing", () => {
    expect(PromptFragment.joinFragments(ContextSection.contextFragments({ awareness: "### Sources\n- wiki" }))).toBe(
      "## Context\n\n### Sources\n- wiki"
    )
    expect(PromptFragment.joinFragments(ContextSection.contextFragments({ background }))).toBe(
      "## Context\n\n### Team\n- **lead**: Ana\n\n### About the User\n- **name**: Doug"
    )
    const empty = ContextSection.make({
      background: Background.unsafeMake({ sections: [{ id: "a", title: "A" }] }),
      awareness: "  \n"
    })
    expect(empty.renderFragments()).toEqual([])
    expect(PromptFragment.renderSections([{ section: empty, source: "instance" }])).toEqual([])
  })

  it("lowers # and ## headings to ###, leaving deeper headings, hashtags and fenced code alone", () => {
    expect(ContextSection.lowerHeadings("# Top\n## Sources\n### Kept\n#### Deeper\n#hashtag\n  ## Indented\n##")).toBe(
      "### Top\n### Sources\n### Kept\n#### Deeper\n#hashtag\n  ### Indented\n###"
    )
    expect(ContextSection.lowerHeadings("```md\n## inside a fence\n```\n## after")).toBe(
      "```md\n## inside a fence\n```\n### after"
    )
  })

  it("property: ## Context is the only heading above ### in the section", () => {
    const line = fc.constantFrom("# a", "## b", "### c", "text", "   ## d", "#tag", "- item", "")
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }).map((lines) => lines.join("\n")), (awareness) => {
        const text = PromptFragment.joinFragments(ContextSection.contextFragments({ background, awareness }))
        const shallow = text.split("\n").filter((l) => shallowHeading.test(l))
        expect(shallow).toEqual(["## Context"])
        return true
      })
    )
  })
})
