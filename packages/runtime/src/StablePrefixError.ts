/**
 * The errors of `StablePrefix`: the section order a plugin asked for cannot be built. Both the
 * public module (which re-exports them) and its body import them from here.
 *
 * @since 0.1.0
 */
import { ErrorClass } from "@engram/core"
import * as Schema from "effect/Schema"

/**
 * A plugin section is placed relative to a section that does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class UnknownSectionAnchor extends ErrorClass.TaggedError<UnknownSectionAnchor>()("UnknownSectionAnchor", {
  section: Schema.String,
  anchor: Schema.String,
  known: Schema.Array(Schema.String)
}, {
  errorClass: "Misconfigured",
  message: (self) =>
    `section "${self.section}" is placed relative to "${self.anchor}", which is not a section ` +
    `(known: ${self.known.map((name) => `"${name}"`).join(", ")})`
}) {}

/**
 * Plugin sections are anchored on each other in a cycle, so none of them has a place. `cycle`
 * lists the sections in anchor order, the first repeated at the end.
 *
 * @since 0.1.0
 * @category errors
 */
export class SectionOrderCycle extends ErrorClass.TaggedError<SectionOrderCycle>()("SectionOrderCycle", {
  cycle: Schema.Array(Schema.String)
}, {
  errorClass: "Misconfigured",
  message: (self) =>
    `plugin sections are anchored in a cycle: ${self.cycle.map((name) => `"${name}"`).join(" → ")}; ` +
    `anchor one of them on a built-in section`
}) {}

/**
 * Two sections share a name (a plugin reusing a built-in name, or two plugins).
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicateSection extends ErrorClass.TaggedError<DuplicateSection>()("DuplicateSection", {
  name: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) => `two sections are named "${self.name}"; section names must be unique`
}) {}
