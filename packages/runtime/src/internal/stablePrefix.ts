/**
 * The body of `StablePrefix`: section ordering (a deterministic topological sort of the plugin
 * anchors over the built-in authority order), rendering, and building over the stores.
 *
 * It imports only types from the public module; the authority order, which both need, is defined
 * here and re-exported there; the ordering errors are in `StablePrefixError.ts`.
 */
import {
  Background,
  ContextProjection,
  ContextSection,
  MemoryOverlay,
  PromptFragment,
  Routing,
  RoutingSpecs
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import { composeAgentBackground } from "../AgentBackground.js"
import type { AgentConfig, BuiltAgent, PluginSection, SectionOrderError, SectionPosition } from "../StablePrefix.js"
import { DuplicateSection, SectionOrderCycle, UnknownSectionAnchor } from "../StablePrefixError.js"

/** The built-in sections in authority order (first wins); `StablePrefix.BuiltinSection` is built from it. */
export const AUTHORITY_ORDER = [
  "Identity",
  "Operating Model",
  "Delegation Roster",
  "Tool Guidance",
  "Guidelines",
  "Context"
] as const

const anchorOf = (position: SectionPosition): { readonly anchor: string; readonly side: -1 | 1 } =>
  "before" in position ? { anchor: position.before, side: -1 } : { anchor: position.after, side: 1 }

/** Lexicographic order of position paths (numbers compared as numbers). */
const comparePaths = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return a[i]! - b[i]!
  }
  return a.length - b.length
}

/**
 * Orders the sections. Every plugin has exactly one anchor, so the anchors form a forest rooted
 * at the built-ins (once unknown anchors and cycles are refused). Each section gets a position
 * path: built-in `i` is `[i, 0]`; a plugin declared `d`-th, anchored on a section at `[...p, 0]`,
 * is `[...p, -1, d, 0]` (before) or `[...p, 1, d, 0]` (after). Sorting the paths places every
 * plugin between its anchor and the anchor's neighbour, keeps a plugin's own dependants next to
 * it, breaks ties by declaration order, and satisfies every before/after edge: a topological
 * order of the constraint graph that depends only on the declarations.
 */
export const orderSections = (
  plugins: ReadonlyArray<Pick<PluginSection, "name" | "position">>
): Either.Either<ReadonlyArray<string>, SectionOrderError> => {
  const builtins: ReadonlyArray<string> = AUTHORITY_ORDER
  const names = new Set<string>(builtins)
  const byName = new Map<string, { readonly index: number; readonly anchor: string; readonly side: -1 | 1 }>()
  for (const [index, plugin] of plugins.entries()) {
    if (names.has(plugin.name)) return Either.left(new DuplicateSection({ name: plugin.name }))
    names.add(plugin.name)
    byName.set(plugin.name, { index, ...anchorOf(plugin.position) })
  }
  for (const plugin of plugins) {
    const { anchor } = byName.get(plugin.name)!
    if (!names.has(anchor)) {
      return Either.left(new UnknownSectionAnchor({ section: plugin.name, anchor, known: [...names] }))
    }
  }
  // Follow each plugin's anchors until a built-in; coming back to a section on the way is a cycle.
  for (const plugin of plugins) {
    const chain = [plugin.name]
    let current = byName.get(plugin.name)!.anchor
    while (byName.has(current)) {
      const seen = chain.indexOf(current)
      if (seen >= 0) return Either.left(new SectionOrderCycle({ cycle: [...chain.slice(seen), current] }))
      chain.push(current)
      current = byName.get(current)!.anchor
    }
  }
  const paths = new Map<string, ReadonlyArray<number>>(builtins.map((name, i) => [name, [i, 0]]))
  const pathOf = (name: string): ReadonlyArray<number> => {
    const known = paths.get(name)
    if (known !== undefined) return known
    const { anchor, index, side } = byName.get(name)!
    const path = [...pathOf(anchor).slice(0, -1), side, index, 0]
    paths.set(name, path)
    return path
  }
  return Either.right([...names].sort((a, b) => comparePaths(pathOf(a), pathOf(b))))
}

const authoredSection = (name: string, text: string): PromptFragment.PromptSection =>
  PromptFragment.fromText(name, text)

const headed = (heading: string, body: string): string => (body === "" ? "" : `## ${heading}\n\n${body}`)

const nonBlank = (texts: ReadonlyArray<string>): ReadonlyArray<string> =>
  texts.map((text) => text.trim()).filter((text) => text !== "")

interface Provided {
  readonly section: PromptFragment.PromptSection
  readonly source: PromptFragment.SectionSource
}

const builtinSections = (config: AgentConfig, background: Background.Background): ReadonlyMap<string, Provided> => {
  const roster = config.roster.map((entry) =>
    entry.description.trim() === ""
      ? `- **${Background.collapse(entry.name)}**`
      : Background.renderEntryLine({ key: entry.name, value: entry.description.trim() })
  )
  const tools = config.toolGuidance.flatMap((entry) => {
    const guidance = entry.guidance.trim()
    return guidance === "" ? [] : [`### ${Background.collapse(entry.tool)}\n${guidance}`]
  })
  const guidelines = nonBlank(config.guidelines).map((rule) => `- ${Background.collapse(rule)}`)
  const role = (name: string, body: string): readonly [string, Provided] => [
    name,
    { section: authoredSection(name, body), source: "role" }
  ]
  return new Map([
    role("Identity", config.persona.trim()),
    role("Operating Model", headed("Operating Model", config.operatingModel.trim())),
    role("Delegation Roster", headed("Delegation Roster", roster.join("\n"))),
    role("Tool Guidance", headed("Tool Guidance", tools.join("\n\n"))),
    role("Guidelines", headed("Guidelines", guidelines.join("\n"))),
    [
      ContextSection.sectionName,
      { section: ContextSection.make({ background, awareness: config.awareness }), source: "instance" }
    ]
  ])
}

export const renderPrefix = (
  config: AgentConfig,
  background: Background.Background
): Either.Either<ReadonlyArray<PromptFragment.AgentPromptSectionData>, SectionOrderError> =>
  Either.map(orderSections(config.plugins), (order) => {
    const sections = new Map(builtinSections(config, background))
    for (const plugin of config.plugins) {
      sections.set(plugin.name, { section: authoredSection(plugin.name, plugin.text.trim()), source: plugin.source })
    }
    return PromptFragment.renderSections(order.map((name) => sections.get(name)!))
  })

/** The spec used when a config names none: it places nothing, so the overlay reports nothing. */
const noSpec: Routing.MemoryRoutingSpec = {
  key: "none",
  version: "0",
  route: () => null,
  finalize: Routing.finalizeOldestFirst
}

/** What the projection's identity tier needs: every address the composed Background holds. */
const identitySource = (
  spec: Routing.MemoryRoutingSpec,
  config: AgentConfig,
  composed: Background.Background
): ContextProjection.IdentitySource => ({
  spec,
  scope: config.scope,
  context: Routing.routingContext(config.background),
  heldAddresses: composed.sections.flatMap((section) =>
    section.entries.map((entry) => Routing.entryAddress(spec, section.id, entry.key))
  )
})

export const buildAgent = (config: AgentConfig) =>
  Effect.gen(function*() {
    // Refuse a bad plugin layout before reading any store.
    yield* orderSections(config.plugins)
    const spec = config.spec === undefined
      ? undefined
      : yield* Effect.flatMap(RoutingSpecs.RoutingSpecs, (specs) => specs.resolve(config.spec!))
    const composed = spec === undefined
      ? yield* Effect.map(DateTime.now, (now) => ({
        ...MemoryOverlay.applyMemoryOverlay(config.background, [], noSpec, { now, budget: config.overlayBudget }),
        missing: [],
        skipped: { promotionRows: 0, records: 0 }
      }))
      : yield* composeAgentBackground({
        background: config.background,
        spec,
        scope: config.scope,
        budget: config.overlayBudget,
        // A slot a narrower scope the agent reads holds is left to the projection (decision 0075).
        overriddenBy: yield* ContextProjection.scopeOverrides(
          { spec, scope: config.scope, context: Routing.routingContext(config.background) },
          config.scopes ?? [config.scope]
        )
      })
    const prefix = yield* renderPrefix(config, composed.background)
    const built: BuiltAgent = {
      prefix,
      text: PromptFragment.joinPrompt(prefix),
      authoredPrefix: yield* renderPrefix(config, config.background),
      report: composed.report,
      composedIds: MemoryOverlay.composedIds(composed.report),
      background: composed.background,
      scopes: config.scopes ?? [config.scope],
      projection: config.projection,
      identity: spec === undefined ? undefined : identitySource(spec, config, composed.background),
      memory: spec === undefined ? undefined : { scope: config.scope, background: config.background, spec },
      missing: composed.missing,
      skipped: composed.skipped
    }
    yield* Effect.annotateCurrentSpan({ sections: prefix.length, composed: built.composedIds.length })
    return built
  }).pipe(Effect.withSpan("engram.agent.build", { attributes: { agent: config.name ?? "", spec: config.spec ?? "" } }))
