/**
 * Prompt attribution: every byte of a prompt belongs to exactly one fragment, and every fragment
 * says whether its bytes were written by an author or came from the memory store (and then from
 * which records).
 *
 * A prompt section produces fragments through one method, {@link PromptSection.renderFragments};
 * the prompt text is the join of the fragments and is never stored a second time, so the text
 * and its attribution cannot disagree.
 *
 * @example
 * import { PromptFragment } from "@engram/core"
 *
 * const identity = PromptFragment.fromText("Identity", "You are a helpful companion.")
 * const sections = PromptFragment.renderSections([{ section: identity, source: "role" }])
 * PromptFragment.joinPrompt(sections) // "You are a helpful companion."
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { MemoryId, type Scope } from "./MemoryRecord.js"

const FragmentText = Schema.String.pipe(
  Schema.minLength(1, { message: () => "a prompt fragment's text must not be empty" })
)

/**
 * Bytes an author wrote: role and instance configuration, headings and other structural text.
 *
 * @since 0.1.0
 * @category models
 */
export const AuthoredFragment = Schema.Struct({
  source: Schema.Literal("authored"),
  text: FragmentText
}).annotations({ identifier: "AuthoredFragment" })
/** @since 0.1.0 @category models */
export type AuthoredFragment = typeof AuthoredFragment.Type

/**
 * Bytes that came from the memory store, with the ids of the records they were built from
 * (never empty).
 *
 * @since 0.1.0
 * @category models
 */
export const MemoryFragment = Schema.Struct({
  source: Schema.Literal("memory"),
  text: FragmentText,
  memoryIds: Schema.NonEmptyArray(MemoryId)
}).annotations({ identifier: "MemoryFragment" })
/** @since 0.1.0 @category models */
export type MemoryFragment = typeof MemoryFragment.Type

/**
 * One attributed slice of prompt text: `authored`, or `memory` with the record ids it came from.
 * The union makes "memoryIds is non-empty if and only if the source is memory" true by
 * construction.
 *
 * @since 0.1.0
 * @category models
 */
export const PromptFragment = Schema.Union(AuthoredFragment, MemoryFragment).annotations({
  identifier: "PromptFragment"
})
/** @since 0.1.0 @category models */
export type PromptFragment = typeof PromptFragment.Type

/**
 * What a section may read while rendering. Everything is optional; a section rendered without a
 * context renders its context-free form.
 *
 * @since 0.1.0
 * @category models
 */
export interface RenderContext {
  /** The scope the prompt is being rendered for. */
  readonly scope?: Scope | undefined
}

/**
 * A named part of a prompt. It has one producing method: `renderFragments`. Returning `[]` means
 * "nothing to say", and the section is left out of the prompt entirely.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptSection {
  readonly name: string
  renderFragments(ctx?: RenderContext): ReadonlyArray<PromptFragment>
}

/**
 * Who configured a section of an agent's prompt: its role (shared by every agent of the role) or
 * the instance.
 *
 * @since 0.1.0
 * @category models
 */
export const SectionSource = Schema.Literal("role", "instance")
/** @since 0.1.0 @category models */
export type SectionSource = typeof SectionSource.Type

/**
 * One rendered section of an agent's prompt, as tooling and the wire see it. There is no `text`
 * field: the text is {@link joinFragments} of `fragments` (never empty).
 *
 * @since 0.1.0
 * @category models
 */
export const AgentPromptSectionData = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1)),
  source: SectionSource,
  fragments: Schema.NonEmptyArray(PromptFragment)
}).annotations({ identifier: "AgentPromptSectionData" })
/** @since 0.1.0 @category models */
export type AgentPromptSectionData = typeof AgentPromptSectionData.Type

/**
 * An authored fragment. `text` must not be empty (see {@link compact} to drop empty ones).
 *
 * @since 0.1.0
 * @category constructors
 */
export const authored = (text: string): AuthoredFragment => ({ source: "authored", text })

/**
 * A memory fragment built from the records `memoryIds`. `text` must not be empty.
 *
 * @since 0.1.0
 * @category constructors
 */
export const memory = (text: string, memoryIds: readonly [string, ...Array<string>]): MemoryFragment => ({
  source: "memory",
  text,
  memoryIds
})

/**
 * A section that renders one authored text, or nothing when the text is empty — the shape of
 * every section whose bytes all come from configuration.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromText = (name: string, text: string): PromptSection => ({
  name,
  renderFragments: () => (text === "" ? [] : [authored(text)])
})

/**
 * Drops fragments with empty text and joins neighbouring authored fragments into one. The joined
 * text is unchanged; only the slicing gets coarser where it carried no attribution.
 *
 * @since 0.1.0
 * @category combinators
 */
export const compact = (fragments: ReadonlyArray<PromptFragment>): ReadonlyArray<PromptFragment> => {
  const out: Array<PromptFragment> = []
  for (const fragment of fragments) {
    if (fragment.text === "") continue
    const last = out[out.length - 1]
    if (fragment.source === "authored" && last !== undefined && last.source === "authored") {
      out[out.length - 1] = authored(last.text + fragment.text)
    } else {
      out.push(fragment)
    }
  }
  return out
}

/**
 * The text of a run of fragments: their texts concatenated, with no separator. Separators live
 * inside the fragments themselves.
 *
 * @since 0.1.0
 * @category rendering
 */
export const joinFragments = (fragments: ReadonlyArray<PromptFragment>): string => {
  let text = ""
  for (const fragment of fragments) text += fragment.text
  return text
}

/**
 * The prompt text of rendered sections: each section's fragments joined, sections separated by
 * one blank line.
 *
 * @since 0.1.0
 * @category rendering
 */
export const joinPrompt = (sections: ReadonlyArray<{ readonly fragments: ReadonlyArray<PromptFragment> }>): string =>
  sections.map((section) => joinFragments(section.fragments)).join("\n\n")

/**
 * Renders sections in order into {@link AgentPromptSectionData}, dropping every section that has
 * nothing to say (no fragments, or only empty ones).
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderSections = (
  sections: ReadonlyArray<{ readonly section: PromptSection; readonly source: SectionSource }>,
  ctx?: RenderContext
): ReadonlyArray<AgentPromptSectionData> => {
  const out: Array<AgentPromptSectionData> = []
  for (const { section, source } of sections) {
    const fragments = (ctx === undefined ? section.renderFragments() : section.renderFragments(ctx)).filter(
      (fragment) => fragment.text !== ""
    )
    const [first, ...rest] = fragments
    if (first !== undefined) out.push({ name: section.name, source, fragments: [first, ...rest] })
  }
  return out
}

/**
 * The distinct memory ids the fragments were built from, in first-seen order.
 *
 * @since 0.1.0
 * @category attribution
 */
export const memoryIdsOf = (fragments: ReadonlyArray<PromptFragment>): ReadonlyArray<string> => {
  const ids = new Set<string>()
  for (const fragment of fragments) {
    if (fragment.source === "memory") { for (const id of fragment.memoryIds) ids.add(id) }
  }
  return [...ids]
}
