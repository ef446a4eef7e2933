/**
 * Two opt-in routing presets, each a section vocabulary plus the spec that routes into it. An
 * agent gets neither unless its author declares the sections (merge the preset's Background into
 * the agent's) and names the spec.
 *
 * Both key a record by its slugified label, or by its content when it has no label.
 *
 * - {@link userBackground} — for companions: who the user is and how they like things.
 *   `profile` records go to `about_user` (auto); `standing` records, and `profile` records tagged
 *   `preference`/`preferences`, go to `preferences` (guarded).
 * - {@link project} — for agents working on a project: `decision` records go to
 *   `project_state` (auto); `standing` records, and `fact`/`note` records tagged
 *   `convention`/`conventions`, go to `conventions` (guarded). It never places a `profile`
 *   record or anything tagged as a preference, so user facts stay out of project sections.
 *
 * @since 0.1.0
 */
import * as Background from "./Background.js"
import type { MemoryKind } from "./MemoryRecord.js"
import {
  background,
  finalizeOldestFirst,
  type MemoryRoutingSpec,
  type Placement,
  type RoutableRecord,
  recordKey,
  slugify
} from "./Routing.js"

const taggedAs = (record: RoutableRecord, names: ReadonlyArray<string>): boolean =>
  record.tags.some((tag) => names.includes(slugify(tag)))

const placeAt = (section: string, record: RoutableRecord): Placement => background(section, recordKey(record).key)

const preferenceTags = ["preference", "preferences"]
const conventionTags = ["convention", "conventions"]

/**
 * The user-background vocabulary: `about_user` ("About the User", `auto`) and `preferences`
 * ("Preferences", `guarded`), both empty.
 *
 * @since 0.1.0
 * @category presets
 */
export const userBackgroundSections: Background.Background = Background.unsafeMake({
  sections: [
    { id: "about_user", title: "About the User", promotion: "auto" },
    { id: "preferences", title: "Preferences", promotion: "guarded" }
  ]
})

/**
 * Routes what a companion learns about its user: `standing` records and `profile` records tagged
 * `preference`/`preferences` to `preferences`; other `profile` records to `about_user`; every
 * other kind declined.
 *
 * @since 0.1.0
 * @category presets
 */
export const userBackground: MemoryRoutingSpec = {
  key: "user-background",
  version: "1",
  route: (record) => {
    if (record.kind === "standing" || (record.kind === "profile" && taggedAs(record, preferenceTags))) {
      return placeAt("preferences", record)
    }
    return record.kind === "profile" ? placeAt("about_user", record) : null
  },
  finalize: finalizeOldestFirst
}

/**
 * The project vocabulary: `project_state` ("Project State", `auto`) and `conventions`
 * ("Conventions", `guarded`), both empty.
 *
 * @since 0.1.0
 * @category presets
 */
export const projectSections: Background.Background = Background.unsafeMake({
  sections: [
    { id: "project_state", title: "Project State", promotion: "auto" },
    { id: "conventions", title: "Conventions", promotion: "guarded" }
  ]
})

const conventionKinds: ReadonlyArray<MemoryKind> = ["fact", "note"]

/**
 * Routes what an agent learns about a project: `decision` records to `project_state`;
 * `standing` records and `fact`/`note` records tagged `convention`/`conventions` to
 * `conventions`; `profile` records and anything tagged `preference`/`preferences` declined, as is
 * every other kind.
 *
 * @since 0.1.0
 * @category presets
 */
export const project: MemoryRoutingSpec = {
  key: "project",
  version: "1",
  route: (record) => {
    if (record.kind === "profile" || taggedAs(record, preferenceTags)) return null
    if (record.kind === "decision") return placeAt("project_state", record)
    if (record.kind === "standing" || (conventionKinds.includes(record.kind) && taggedAs(record, conventionTags))) {
      return placeAt("conventions", record)
    }
    return null
  },
  finalize: finalizeOldestFirst
}

/**
 * Every preset spec, by key.
 *
 * @since 0.1.0
 * @category presets
 */
export const presets: Readonly<Record<string, MemoryRoutingSpec>> = {
  [userBackground.key]: userBackground,
  [project.key]: project
}
