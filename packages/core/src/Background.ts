/**
 * The Background: an agent's declared sections, each holding its own entries, rendered inside
 * `## Context`. Authors declare the sections; entries are written by authors or composed from
 * promoted memories by `MemoryOverlay.applyMemoryOverlay`.
 *
 * Rendering is structural: a section renders `### {title}`, an entry renders one line
 * `- **{key}**: {value}`, and every interpolated slot goes through {@link collapse}, so no key,
 * title or value — authored or memory-derived — can begin a line of its own.
 *
 * @example
 * import { Background } from "@engram/core"
 *
 * const background = Background.unsafeMake({
 *   sections: [{ id: "about_user", title: "About the User", promotion: "auto", entries: [{ key: "name", value: "Doug" }] }]
 * })
 * Background.renderBackground(background) // "### About the User\n- **name**: Doug"
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"
import { CONTENT_KEY } from "./internal/contentKey.js"
import { deepFreeze } from "./internal/deepFreeze.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import { MemoryId } from "./MemoryRecord.js"
import { describeParseError } from "./MemoryWrite.js"
import { authored, memory, type PromptFragment } from "./PromptFragment.js"
import { safeLine } from "./TextSafety.js"

/**
 * How a section treats memory: `locked` takes none (the default), `guarded` composes confirmed
 * records only, `auto` composes confirmed and pending records, `earned` is declared but inert in
 * this version.
 *
 * @since 0.1.0
 * @category models
 */
export const PromotionTier = Schema.Literal("locked", "guarded", "earned", "auto")
/** @since 0.1.0 @category models */
export type PromotionTier = typeof PromotionTier.Type

/**
 * A section id: lower-case letters, digits, `_` and `-`, starting with a letter or digit. Ids are
 * persisted in placements, so renaming one strands the memories placed under it.
 *
 * @since 0.1.0
 * @category models
 */
export const SectionId = Schema.String.pipe(
  Schema.pattern(/^[a-z0-9][a-z0-9_-]*$/, {
    message: () => "a section id is lower-case letters, digits, '_' or '-', starting with a letter or digit"
  }),
  Schema.annotations({ identifier: "SectionId" })
)

/**
 * One entry: a key, a scalar value, and the ids of the memories it was composed from (empty for
 * authored entries).
 *
 * @since 0.1.0
 * @category models
 */
export const BackgroundEntry = Schema.Struct({
  key: Schema.String.pipe(Schema.minLength(1, { message: () => "an entry key must not be empty" })),
  value: Schema.Union(Schema.String, Schema.Finite, Schema.Boolean),
  memoryIds: Schema.optionalWith(Schema.Array(MemoryId), { default: () => [], exact: true })
}).annotations({ identifier: "BackgroundEntry" })
/** @since 0.1.0 @category models */
export type BackgroundEntry = typeof BackgroundEntry.Type

/**
 * A declared section: id, title, promotion tier (default `locked`) and entries (default none).
 * Entry keys are unique within the section; a duplicate fails decoding and names the key.
 *
 * @since 0.1.0
 * @category models
 */
export const BackgroundSection = Schema.Struct({
  id: SectionId,
  title: Schema.String.pipe(Schema.minLength(1, { message: () => "a section title must not be empty" })),
  promotion: Schema.optionalWith(PromotionTier, { default: () => "locked" as const, exact: true }),
  entries: Schema.optionalWith(Schema.Array(BackgroundEntry), { default: () => [], exact: true })
}).pipe(
  Schema.filter((section) => {
    const seen = new Set<string>()
    for (let i = 0; i < section.entries.length; i++) {
      const key = section.entries[i]!.key
      if (seen.has(key)) {
        return {
          path: ["entries", i, "key"],
          message: `duplicate entry key ${JSON.stringify(key)} in section "${section.id}"`
        }
      }
      seen.add(key)
    }
    return undefined
  }),
  Schema.annotations({ identifier: "BackgroundSection" })
)
/** @since 0.1.0 @category models */
export type BackgroundSection = typeof BackgroundSection.Type

const Sections = Schema.Array(BackgroundSection).pipe(
  Schema.filter((sections) => {
    const seen = new Set<string>()
    for (let i = 0; i < sections.length; i++) {
      const id = sections[i]!.id
      if (seen.has(id)) return { path: [i, "id"], message: `duplicate section id "${id}"` }
      seen.add(id)
    }
    return undefined
  })
)

const BackgroundStruct = Schema.Struct({
  sections: Schema.optionalWith(Sections, { default: () => [], exact: true })
})

/**
 * The declared sections of a Background, in declaration order (default none). Section ids are
 * unique; a duplicate fails decoding and names the id. Decoded values are deeply frozen, and the
 * schema's type side accepts only frozen values (so `Schema.is(Background)` is false for a
 * hand-built object): to check a hand-built value, pass it through {@link decode}.
 *
 * @since 0.1.0
 * @category models
 */
export const Background = Schema.transform(
  BackgroundStruct,
  Schema.declare(
    (u: unknown): u is typeof BackgroundStruct.Type => typeof u === "object" && u !== null && Object.isFrozen(u),
    { identifier: "Background", description: "a decoded, frozen Background" }
  ),
  { strict: true, decode: (background) => deepFreeze(background), encode: (background) => background }
)
/** @since 0.1.0 @category models */
export type Background = typeof Background.Type
/**
 * What authors write: `promotion`, `entries`, `memoryIds` and `sections` may be omitted.
 *
 * @since 0.1.0
 * @category models
 */
export type BackgroundInput = typeof Background.Encoded

/**
 * A Background that failed to decode; `problem` names the field and the duplicate, if any.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidBackground extends ErrorClass.TaggedError<InvalidBackground>()("InvalidBackground", {
  problem: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) => `invalid background: ${self.problem}`
}) {}

const decodeEither = onFirstCall(() => Schema.decodeUnknownEither(Background))

/**
 * Decodes authored input (config, JSON) into a frozen Background.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decode = (input: unknown): Either.Either<Background, InvalidBackground> =>
  Either.mapLeft(decodeEither(input), (error) => new InvalidBackground({ problem: describeParseError(error) }))

/**
 * Decodes authored input, throwing {@link InvalidBackground} when it is invalid. For literals in
 * code, where an invalid value is a programming error; use {@link decode} for anything read at
 * run time.
 *
 * @since 0.1.0
 * @category constructors
 */
export const unsafeMake = (input: BackgroundInput): Background => Either.getOrThrow(decode(input))

/**
 * The Background with no sections.
 *
 * @since 0.1.0
 * @category constructors
 */
export const empty: Background = deepFreeze({ sections: [] })

/**
 * Makes text safe to interpolate into one line of the prompt: `TextSafety.safeLine` — controls and
 * line breaks with the whitespace around them become one space, invisible characters (bidi,
 * zero-width, tag characters) are removed, look-alikes of the projection's tags are defused.
 *
 * @since 0.1.0
 * @category rendering
 */
export const collapse = (text: string): string => safeLine(text)

/**
 * The one line an entry renders as: `- **{key}**: {value}`, both slots collapsed. An entry keyed
 * by content (`Routing.contentKey`, `c-` and 16 hex digits) has no name worth showing — its key is
 * a hash — so it renders as `- {value}`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderEntryLine = (entry: { readonly key: string; readonly value: string | number | boolean }): string =>
  CONTENT_KEY.test(entry.key)
    ? `- ${collapse(String(entry.value))}`
    : `- **${collapse(entry.key)}**: ${collapse(String(entry.value))}`

/**
 * The heading line a section renders under: `### {title}`, collapsed.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderHeading = (title: string): string => `### ${collapse(title)}`

/**
 * True when an entry was composed from memories (its `memoryIds` is non-empty).
 *
 * @since 0.1.0
 * @category attribution
 */
export const isMemoryEntry = (entry: BackgroundEntry): boolean => entry.memoryIds.length > 0

/**
 * The Background as attributed fragments. Sections without entries are skipped. The heading of a
 * section (with the blank line before it) is an authored fragment; each entry is one fragment —
 * `memory` with the entry's `memoryIds` when it has any, `authored` otherwise. Every line break is
 * carried at the end of the fragment it follows, so joining the fragments gives exactly
 * {@link renderBackground}.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderBackgroundFragments = (background: Background): ReadonlyArray<PromptFragment> => {
  const fragments: Array<PromptFragment> = []
  const sections = background.sections.filter((section) => section.entries.length > 0)
  sections.forEach((section, s) => {
    fragments.push(authored(`${s > 0 ? "\n" : ""}${renderHeading(section.title)}\n`))
    section.entries.forEach((entry, e) => {
      const last = s === sections.length - 1 && e === section.entries.length - 1
      const text = `${renderEntryLine(entry)}${last ? "" : "\n"}`
      const [first, ...rest] = entry.memoryIds
      fragments.push(first === undefined ? authored(text) : memory(text, [first, ...rest]))
    })
  })
  return fragments
}

/**
 * The Background as markdown: for each section with entries, in declaration order, a
 * `### {title}` line followed by one `- **{key}**: {value}` line per entry; sections separated
 * by one blank line. The empty string when no section has entries.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderBackground = (background: Background): string => {
  let text = ""
  for (const fragment of renderBackgroundFragments(background)) text += fragment.text
  return text
}

const mergeById = <A>(
  left: ReadonlyArray<A>,
  right: ReadonlyArray<A>,
  idOf: (a: A) => string,
  combine: (l: A, r: A) => A
): Array<A> => {
  const rightById = new Map(right.map((r) => [idOf(r), r] as const))
  const leftIds = new Set(left.map(idOf))
  const merged = left.map((l) => {
    const r = rightById.get(idOf(l))
    return r === undefined ? l : combine(l, r)
  })
  for (const r of right) if (!leftIds.has(idOf(r))) merged.push(r)
  return merged
}

/**
 * Merges two authored Backgrounds by identity, with one rule at both levels. Sections are matched
 * by id: sections of `a` keep their position, sections only in `b` are appended in `b`'s order;
 * on a shared id, `b`'s title and promotion win and the entries merge by key the same way — an
 * entry of `b` replaces `a`'s entry with that key wholesale, `memoryIds` included (never a union).
 *
 * This merges configuration. It is not how memories are composed: promoted memories go through
 * `MemoryOverlay.applyMemoryOverlay`, which honours promotion tiers.
 *
 * @since 0.1.0
 * @category combinators
 */
export const mergeBackground = (a: Background, b: Background): Background =>
  deepFreeze({
    sections: mergeById(a.sections, b.sections, (section) => section.id, (left, right) => ({
      id: left.id,
      title: right.title,
      promotion: right.promotion,
      entries: mergeById(left.entries, right.entries, (entry) => entry.key, (_, r) => r)
    }))
  })

/**
 * The section with this id, if declared.
 *
 * @since 0.1.0
 * @category accessors
 */
export const findSection = (background: Background, id: string): BackgroundSection | undefined =>
  background.sections.find((section) => section.id === id)

/**
 * The entry at `(sectionId, key)`, if any.
 *
 * @since 0.1.0
 * @category accessors
 */
export const findEntry = (background: Background, sectionId: string, key: string): BackgroundEntry | undefined =>
  findSection(background, sectionId)?.entries.find((entry) => entry.key === key)

/**
 * Every memory id the Background's entries were composed from, distinct, in render order. The projection
 * uses this to leave out what the prompt already holds.
 *
 * @since 0.1.0
 * @category attribution
 */
export const memoryIdsOf = (background: Background): ReadonlyArray<string> => {
  const ids = new Set<string>()
  for (const section of background.sections) {
    for (const entry of section.entries) for (const id of entry.memoryIds) ids.add(id)
  }
  return [...ids]
}
