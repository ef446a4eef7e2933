/**
 * The `## Context` prompt section: the Background's sections and the awareness text, each as a
 * `###` child. `## Context` is the only level-two heading inside it — the Background renders
 * `###` headings, and awareness text has any `#` or `##` heading lowered to `###`.
 *
 * @example
 * import { Background, ContextSection, PromptFragment } from "@engram/core"
 *
 * const context = ContextSection.make({
 *   background: Background.unsafeMake({ sections: [{ id: "team", title: "Team", entries: [{ key: "lead", value: "Ana" }] }] }),
 *   awareness: "### Available Information Sources\n- the wiki"
 * })
 * PromptFragment.joinFragments(context.renderFragments())
 * // "## Context\n\n### Team\n- **lead**: Ana\n\n### Available Information Sources\n- the wiki"
 *
 * @since 0.1.0
 */
import { type Background, renderBackgroundFragments } from "./Background.js"
import { authored, type PromptFragment, type PromptSection } from "./PromptFragment.js"

/**
 * The section's name in {@link PromptFragment.AgentPromptSectionData}.
 *
 * @since 0.1.0
 * @category constants
 */
export const sectionName = "Context"

/**
 * The heading the section opens with.
 *
 * @since 0.1.0
 * @category constants
 */
export const heading = "## Context"

/**
 * What the Context section holds: the Background (default none) and authored awareness text
 * (default none; `###` headings or deeper).
 *
 * @since 0.1.0
 * @category models
 */
export interface ContextInput {
  readonly background?: Background | undefined
  readonly awareness?: string | undefined
}

const fence = /^ {0,3}(`{3,}|~{3,})/
const shallowHeading = /^( {0,3})#{1,2}(?=[ \t]|$)/

/**
 * Lowers every `#` and `##` ATX heading outside fenced code blocks to `###`, so text placed under
 * `## Context` cannot open a heading at Context's own level or above. Other lines are unchanged.
 * (Setext headings — a line underlined with `===` or `---` — are not recognised.)
 *
 * @since 0.1.0
 * @category rendering
 */
export const lowerHeadings = (text: string): string => {
  let open: string | undefined
  return text
    .split("\n")
    .map((line) => {
      const marker = fence.exec(line)?.[1]
      if (marker !== undefined) {
        if (open === undefined) open = marker
        else if (marker[0] === open[0] && marker.length >= open.length) open = undefined
        return line
      }
      return open === undefined ? line.replace(shallowHeading, "$1###") : line
    })
    .join("\n")
}

/**
 * The Context section as attributed fragments: an authored `## Context` heading, the
 * Background's fragments, then the awareness text as one authored fragment. `[]` when both the
 * Background renders nothing and the awareness text is blank.
 *
 * @since 0.1.0
 * @category rendering
 */
export const contextFragments = (input: ContextInput): ReadonlyArray<PromptFragment> => {
  const background = input.background === undefined ? [] : renderBackgroundFragments(input.background)
  const awareness = input.awareness === undefined ? "" : lowerHeadings(input.awareness.trim())
  if (background.length === 0 && awareness === "") return []
  const fragments: Array<PromptFragment> = [authored(`${heading}\n\n`), ...background]
  if (awareness !== "") fragments.push(authored(background.length > 0 ? `\n\n${awareness}` : awareness))
  return fragments
}

/**
 * The Context prompt section over fixed content. It renders the same fragments for every
 * context, and nothing at all when it has nothing to hold.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (input: ContextInput): PromptSection => {
  const fragments = contextFragments(input)
  return { name: sectionName, renderFragments: () => fragments }
}
