/**
 * The stable prefix: the part of every model request that is fixed when an agent is built. It is
 * composed from declared sections, each with a named provider, in authority order — what comes
 * first wins over what follows:
 *
 * | # | section | provider (in {@link AgentConfig}) |
 * | --- | --- | --- |
 * | 1 | `Identity` | `persona`: the operator's persona text, verbatim |
 * | 2 | `Operating Model` | `operatingModel`: how the agent works (its loop) |
 * | 3 | `Delegation Roster` | `roster`: the agents it may delegate to, and when |
 * | 4 | `Tool Guidance` | `toolGuidance`: per-tool usage notes |
 * | 5 | `Guidelines` | `guidelines`: the operator's behavioural rules |
 * | 6 | `Context` | `background` (with promoted memories folded in) and `awareness` |
 *
 * Plugins add sections by name, each placed `before` or `after` another section (built-in or
 * another plugin's). An anchor that names no section, a name used twice, or anchors that chase
 * each other round in a cycle are typed errors when the agent is built — never a silently
 * misplaced section.
 *
 * {@link buildAgent} composes the Background from the stores (promotion rows joined with their
 * records, folded by the overlay) and returns the prefix as attributed sections together with the
 * overlay report, so tooling can show which entry came from which memory, the composed ids, which
 * the projection must not deliver a second time, and the agent's `identity` source: what the
 * projection's identity tier needs to deliver the addresses the prefix did not compose.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { StablePrefix } from "@engram/runtime"
 *
 * const program = Effect.gen(function*() {
 *   const config = yield* StablePrefix.decodeConfig({
 *     persona: "You are Ada, a careful release engineer.",
 *     guidelines: ["Never deploy on Fridays"],
 *     spec: "user-background",
 *     background: { sections: [{ id: "about_user", title: "About the User", promotion: "auto" }] },
 *     plugins: [
 *       { name: "Safety", text: "## Safety\n\nAsk before deleting anything.", position: { after: "Identity" } }
 *     ]
 *   })
 *   const agent = yield* StablePrefix.buildAgent(config)
 *   return agent.text // the system prompt
 * })
 * ```
 *
 * @since 0.1.0
 */
import { ErrorClass } from "@engram/core"
import {
  Background,
  ContextProjection,
  type MemoryOverlay,
  MemoryRecord,
  type MemoryStore,
  type MemoryStoreError,
  MemoryWrite,
  type PromotionStore,
  PromptFragment,
  type RoutingSpecs
} from "@engram/core"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as internal from "./internal/stablePrefix.js"
import type * as MemoryTools from "./MemoryTools.js"
import type { DuplicateSection, SectionOrderCycle, UnknownSectionAnchor } from "./StablePrefixError.js"

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

/**
 * The built-in sections, by name.
 *
 * @since 0.1.0
 * @category models
 */
export const BuiltinSection = Schema.Literal(...internal.AUTHORITY_ORDER)
/** @since 0.1.0 @category models */
export type BuiltinSection = typeof BuiltinSection.Type

/**
 * The built-in sections in authority order (first wins).
 *
 * @since 0.1.0
 * @category constants
 */
export const AUTHORITY_ORDER: ReadonlyArray<BuiltinSection> = internal.AUTHORITY_ORDER

/**
 * An agent the roster offers for delegation. Rendered `- **name**: description`, on one line.
 *
 * @since 0.1.0
 * @category models
 */
export const RosterEntry = Schema.Struct({
  name: Schema.NonEmptyString,
  description: Schema.String
}).annotations({ identifier: "RosterEntry" })
/** @since 0.1.0 @category models */
export type RosterEntry = typeof RosterEntry.Type

/**
 * Usage notes for one tool. Rendered under `### {tool}`.
 *
 * @since 0.1.0
 * @category models
 */
export const ToolGuidance = Schema.Struct({
  tool: Schema.NonEmptyString,
  guidance: Schema.String
}).annotations({ identifier: "ToolGuidance" })
/** @since 0.1.0 @category models */
export type ToolGuidance = typeof ToolGuidance.Type

/**
 * Where a plugin section goes: right `before` or right `after` the named section. Several
 * sections anchored at the same place keep their declaration order.
 *
 * @since 0.1.0
 * @category models
 */
export const SectionPosition = Schema.Union(
  Schema.Struct({ before: Schema.NonEmptyString }),
  Schema.Struct({ after: Schema.NonEmptyString })
).annotations({ identifier: "SectionPosition" })
/** @since 0.1.0 @category models */
export type SectionPosition = typeof SectionPosition.Type

/**
 * A section a plugin contributes: its name (unique among all sections; other plugins may anchor
 * on it), its authored text (rendered as given, trimmed; blank renders nothing), its position,
 * and who configured it (default `role`).
 *
 * @since 0.1.0
 * @category models
 */
export const PluginSection = Schema.Struct({
  name: Schema.NonEmptyString,
  text: Schema.String,
  position: SectionPosition,
  source: Schema.optionalWith(PromptFragment.SectionSource, { default: () => "role" as const, exact: true })
}).annotations({ identifier: "PluginSection" })
/** @since 0.1.0 @category models */
export type PluginSection = typeof PluginSection.Type

const Chars = Schema.Number.pipe(
  Schema.nonNegative({ message: () => "a budget is a number of characters, 0 or more" })
)

/**
 * The overlay's character budgets (see `MemoryOverlay.OverlayBudget`).
 *
 * @since 0.1.0
 * @category models
 */
export const OverlayBudget = Schema.Struct({
  totalChars: Schema.optional(Chars),
  sectionChars: Schema.optional(Chars),
  perSection: Schema.optional(Schema.Record({ key: Schema.String, value: Chars }))
}).annotations({ identifier: "OverlayBudget" })

/**
 * Everything a stable prefix is built from, as plain, serializable data (routing specs are code,
 * so the config names one and `RoutingSpecs` resolves it).
 *
 * - `persona`, `operatingModel`, `roster`, `toolGuidance`, `guidelines`: the first five sections.
 * - `background`: the declared Background; `spec` names the routing spec whose promotion rows
 *   fill it (without one, the Background is rendered as authored); `scope` is where those
 *   memories live (default `global`); `overlayBudget` caps the memory entries.
 * - `awareness`: authored text rendered under the Background, inside `## Context`.
 * - `scopes`: the memory scopes the agent's projection reads (default `[scope]`).
 * - `projection`: the agent's own projection settings (`ContextProjection.ProjectionOverrides`:
 *   its budget, window, recall, digest…) over the projection layer's defaults; decoded here, so a
 *   bad value fails when the agent is built, naming the field (decision 0165).
 * - `plugins`: extra sections, placed by name.
 *
 * @since 0.1.0
 * @category models
 */
export const AgentConfig = Schema.Struct({
  name: Schema.optional(Schema.NonEmptyString),
  persona: Schema.optionalWith(Schema.String, { default: () => "", exact: true }),
  operatingModel: Schema.optionalWith(Schema.String, { default: () => "", exact: true }),
  roster: Schema.optionalWith(Schema.Array(RosterEntry), { default: () => [], exact: true }),
  toolGuidance: Schema.optionalWith(Schema.Array(ToolGuidance), { default: () => [], exact: true }),
  guidelines: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [], exact: true }),
  background: Schema.optionalWith(Background.Background, { default: () => Background.empty, exact: true }),
  awareness: Schema.optionalWith(Schema.String, { default: () => "", exact: true }),
  spec: Schema.optional(Schema.NonEmptyString),
  scope: Schema.optionalWith(MemoryRecord.Scope, { default: () => "global", exact: true }),
  scopes: Schema.optional(Schema.Array(MemoryRecord.Scope)),
  overlayBudget: Schema.optional(OverlayBudget),
  projection: Schema.optional(ContextProjection.ProjectionOverrides),
  plugins: Schema.optionalWith(Schema.Array(PluginSection), { default: () => [], exact: true })
}).annotations({ identifier: "AgentConfig" })
/** @since 0.1.0 @category models */
export type AgentConfig = typeof AgentConfig.Type
/**
 * What authors write: every field may be omitted.
 *
 * @since 0.1.0
 * @category models
 */
export type AgentConfigInput = typeof AgentConfig.Encoded

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/**
 * The configuration did not decode; `problem` names the field.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidAgentConfig extends ErrorClass.TaggedError<InvalidAgentConfig>()("InvalidAgentConfig", {
  problem: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) => `invalid agent config: ${self.problem}`
}) {}

export {
  /** @since 0.1.0 @category errors */
  DuplicateSection,
  /** @since 0.1.0 @category errors */
  SectionOrderCycle,
  /** @since 0.1.0 @category errors */
  UnknownSectionAnchor
} from "./StablePrefixError.js"

/**
 * Why sections could not be ordered.
 *
 * @since 0.1.0
 * @category errors
 */
export type SectionOrderError = UnknownSectionAnchor | SectionOrderCycle | DuplicateSection

// ---------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------

/**
 * Decodes an agent configuration (JSON, a config file), filling in defaults. Unknown fields are
 * refused, so a misspelt field is an error rather than silently ignored.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeConfig = (input: unknown): Effect.Effect<AgentConfig, InvalidAgentConfig> =>
  Effect.mapError(
    Schema.decodeUnknown(AgentConfig)(input, { onExcessProperty: "error" }),
    (error) => new InvalidAgentConfig({ problem: MemoryWrite.describeParseError(error) })
  )

/**
 * The order of every section, built-ins and plugins, by name. Built-ins keep authority order;
 * each plugin goes right before or after its anchor, several at one place in declaration order,
 * and a plugin anchored on a plugin travels with it. Deterministic: it depends only on the
 * declarations, and every `before`/`after` constraint holds in the result.
 *
 * @since 0.1.0
 * @category ordering
 */
export const orderSections: (
  plugins: ReadonlyArray<Pick<PluginSection, "name" | "position">>
) => Either.Either<ReadonlyArray<string>, SectionOrderError> = internal.orderSections

/**
 * Renders the prefix from a config and its (already composed) Background: the sections in
 * {@link orderSections} order, each as attributed fragments; sections with nothing to say are
 * left out. Pure.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderPrefix: (
  config: AgentConfig,
  background: Background.Background
) => Either.Either<ReadonlyArray<PromptFragment.AgentPromptSectionData>, SectionOrderError> = internal.renderPrefix

/**
 * A built agent's prefix.
 *
 * - `prefix`: the sections, attributed (memory entries carry their record ids).
 * - `text`: the system prompt, `PromptFragment.joinPrompt(prefix)`.
 * - `authoredPrefix`: the same sections with the Background as authored (no memory), which an
 *   incognito agent sends instead of `prefix`.
 * - `report`: the overlay report (one outcome per placed record, never content).
 * - `composedIds`: the records composed into the prefix; pass them to the projection as
 *   `inPrefix` so no memory reaches the model twice.
 * - `background`: the composed Background.
 * - `scopes`: the memory scopes the agent reads.
 * - `projection`: the agent's own projection settings (its config's `projection`), sent with every
 *   turn (`Agent.planTurn`).
 * - `identity`: with a routing spec, where the projection's identity tier reads from (the spec,
 *   its scope, the declared sections, and every address the prefix holds); pass it to the
 *   projection. `undefined` without a spec.
 * - `memory`: with a routing spec, the agent's memory settings — its scope, declared Background
 *   and resolved spec, what the Background was composed with and what the memory tools gate,
 *   save and promote with (`NativeRuntime.fromConfig` hands them to the memory tools).
 *   `undefined` without a spec.
 * - `skipped`, `missing`: promotion rows or records that could not be read or joined.
 *
 * @since 0.1.0
 * @category models
 */
export interface BuiltAgent {
  readonly prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly text: string
  /** The same prefix with the Background as authored — no memory: what an incognito agent sends. */
  readonly authoredPrefix: ReadonlyArray<PromptFragment.AgentPromptSectionData>
  readonly report: MemoryOverlay.OverlayReport
  readonly composedIds: ReadonlyArray<string>
  readonly background: Background.Background
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly projection: ContextProjection.ProjectionOverrides | undefined
  readonly identity: ContextProjection.IdentitySource | undefined
  readonly memory: MemoryTools.MemoryToolsConfig | undefined
  readonly missing: ReadonlyArray<string>
  readonly skipped: { readonly promotionRows: number; readonly records: number }
}

/**
 * Builds an agent's stable prefix. The section order is checked first (a bad plugin anchor fails
 * before any store is read). With a `spec`, the Background is composed from the scope's promotion
 * rows and their records by `AgentBackground.composeAgentBackground`; without one, it is rendered
 * as authored and the report has no outcomes.
 *
 * @since 0.1.0
 * @category constructors
 */
export const buildAgent: (
  config: AgentConfig
) => Effect.Effect<
  BuiltAgent,
  | SectionOrderError
  | RoutingSpecs.RoutingSpecNotFound
  | PromotionStore.PromotionStoreFailure
  | MemoryStoreError.MemoryStoreFailure,
  RoutingSpecs.RoutingSpecs | PromotionStore.PromotionStore | MemoryStore.MemoryStore
> = internal.buildAgent
