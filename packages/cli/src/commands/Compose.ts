/**
 * `engram compose --agent <config.json>`: shows an agent's composed Background — the declared
 * sections with the promoted memories the overlay folded in, built by `StablePrefix.buildAgent`
 * exactly as every runtime builds it — fragment by fragment, with each
 * fragment's source and memory ids, followed by the overlay report (what happened to every
 * placed memory, and why).
 *
 * The config is an agent configuration as `StablePrefix.AgentConfig` reads it (`background`,
 * `spec`, `scope`, `overlayBudget`, `awareness`, …), plus an optional `db`: the SQLite file,
 * relative to the config file. The global `--db` or `--pg`, when given, override it.
 *
 * It reads and never writes, unless `--promote` is given: then records of the scope that have no
 * promotion row under the agent's spec are promoted first.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as ContextSection from "@engram/core/ContextSection"
import * as MemoryOverlay from "@engram/core/MemoryOverlay"
import type * as MemoryRecord from "@engram/core/MemoryRecord"
import * as MemoryStore from "@engram/core/MemoryStore"
import * as PromotionStore from "@engram/core/PromotionStore"
import * as PromptFragment from "@engram/core/PromptFragment"
import * as RoutingSpecs from "@engram/core/RoutingSpecs"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

const refuse = (problem: string) => new CliFailure({ problem, exitCode: ExitCode.refused })

// The agent runtime's modules, loaded by the commands that build an agent.
const loadStablePrefix = Effect.promise(() => import("@engram/runtime/StablePrefix"))
const loadPromotion = Effect.promise(() => import("@engram/runtime/Promotion"))

/**
 * `--agent <config.json>`: an agent config file (read by {@link readAgentConfig}), as `compose`,
 * `mcp` and `serve` take it.
 *
 * @since 0.1.0
 * @category options
 */
export const agentFlag = (description: string): Flags.Flag<string> =>
  Flags.text("agent", Flags.NonEmpty, description, "config.json")

/**
 * Reads an agent config file: its JSON, with `db` (if any) taken out and resolved against the
 * file's directory, and the rest decoded as a `StablePrefix.AgentConfig`.
 *
 * @since 0.1.0
 * @category config
 */
export const readAgentConfig = (path: string) =>
  Effect.gen(function*() {
    const text = yield* Effect.try({
      try: () => NodeFs.readFileSync(path, "utf8"),
      catch: (error) =>
        refuse(`cannot read the agent config ${path}: ${error instanceof Error ? error.message : String(error)}`)
    })
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) =>
        refuse(`the agent config ${path} is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    })
    if (typeof json !== "object" || json === null || Array.isArray(json)) {
      return yield* refuse(`the agent config ${path} must be a JSON object`)
    }
    const { db, ...rest } = json as Record<string, unknown>
    if (db !== undefined && (typeof db !== "string" || db.length === 0)) {
      return yield* refuse(`invalid agent config: db: must be a non-empty path`)
    }
    const StablePrefix = yield* loadStablePrefix
    const config = yield* StablePrefix.decodeConfig(rest)
    return {
      config,
      db: typeof db === "string" ? NodePath.resolve(NodePath.dirname(NodePath.resolve(path)), db) : undefined
    }
  })

const allRecords = (scope: MemoryRecord.Scope) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const records: Array<MemoryRecord.MemoryRecord> = []
    let cursor: string | undefined
    do {
      const page: MemoryStore.ListPage = yield* store.list({
        scopes: [scope],
        includeSuperseded: true,
        limit: 1_000,
        ...(cursor !== undefined ? { cursor } : {})
      })
      records.push(...page.records)
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return records
  })

const address = (outcome: MemoryOverlay.OverlayOutcome): string =>
  outcome.address === null ? "-" : `${outcome.address.section} / ${outcome.address.key}`

const outcomeDetail = (outcome: MemoryOverlay.OverlayOutcome): string => {
  if (outcome.status === "composed") {
    return `${outcome.chars} chars${outcome.supports > 1 ? `, ${outcome.supports} records` : ""}`
  }
  if (outcome.heldBy !== undefined) return `held by ${outcome.heldBy}`
  if (outcome.budget !== undefined) return `${outcome.budget} budget`
  return ""
}

/**
 * Why a placed record did not compose, in words, and the command that changes that when there is
 * one (`undefined` for a composed record).
 *
 * @since 0.1.0
 * @category rendering
 */
export const declineAdvice = (
  outcome: MemoryOverlay.OverlayOutcome,
  engram = "engram"
): { readonly why: string; readonly fix: string | undefined } | undefined => {
  if (outcome.status === "composed") return undefined
  const id = outcome.recordId
  const section = outcome.address === null ? "its section" : `section "${outcome.address.section}"`
  switch (outcome.reason) {
    case "flagged":
      return {
        why: "the poisoning screen flagged it: it reads as an instruction to the agent, so it waits for an operator",
        fix: `${engram} memory show ${id}`
      }
    case "review-required":
      return {
        why: `${section} is guarded: only confirmed memories compose there, and this one is not confirmed`,
        fix: `${engram} memory review ${id} confirmed`
      }
    case "rejected":
      return { why: "the memory was rejected in review", fix: `${engram} memory review ${id} confirmed` }
    case "expired":
      return { why: "the memory has expired", fix: `${engram} memory supersede ${id} "<current text>"` }
    case "superseded":
      return { why: "a newer memory replaced it", fix: undefined }
    case "on-demand":
      return {
        why: "its delivery policy is on_demand: it reaches a model only through memory_recall",
        fix: `${engram} memory supersede ${id} "<same text>" --delivery retrieved`
      }
    case "locked":
      return {
        why: `${section} is locked: it takes no memory`,
        fix: "set the section's promotion to auto or guarded in the agent config"
      }
    case "earned-inert":
      return {
        why: `${section}'s earned tier composes nothing yet`,
        fix: "set the section's promotion to auto or guarded in the agent config"
      }
    case "authored-wins":
      return {
        why: "the agent config already has an entry at that key",
        fix: "remove the authored entry from the agent config"
      }
    case "scope-overridden":
      return {
        why: `a more specific scope the agent reads holds the same key (${
          outcome.heldBy ?? "another memory"
        }): that value reaches the prompt instead`,
        fix: undefined
      }
    case "shadowed":
      return { why: `another memory (${outcome.heldBy ?? "a newer one"}) holds the same key`, fix: undefined }
    case "over-budget":
      return { why: "it did not fit the character budget", fix: "shorten the memory or raise the section's budget" }
    case "spec-declined":
      return { why: "the routing spec placed it nowhere: it stays recall-only", fix: undefined }
    case "spec-mismatch":
      return {
        why: "it was promoted under another routing spec",
        fix: "engram compose --agent <config.json> --promote"
      }
    case "undeclared-section":
      return { why: `the agent config declares no ${section}`, fix: "declare the section in the agent config" }
    case "duplicate-row":
      return { why: "another promotion row for the same memory was used", fix: undefined }
  }
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n")
}

/**
 * What `engram compose` shows, as data (`--json` prints it as is).
 *
 * @since 0.1.0
 * @category models
 */
export interface Composition {
  readonly agent: string | null
  readonly spec: { readonly key: string; readonly version: string } | null
  readonly scope: MemoryRecord.Scope
  readonly store: string
  readonly promoted: number
  readonly unpromoted: number
  readonly text: string
  readonly fragments: ReadonlyArray<PromptFragment.PromptFragment>
  readonly report: MemoryOverlay.OverlayReport | null
  readonly missing: ReadonlyArray<string>
  readonly skipped: { readonly promotionRows: number; readonly records: number }
}

/**
 * The human view of a composition: the header, the Context section as the model sees it, its
 * fragments with their sources and memory ids, and the overlay report.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderComposition = (c: Composition, engram = "engram"): string => {
  const out: Array<string> = []
  out.push(
    `agent ${c.agent ?? "(unnamed)"} · spec ${c.spec === null ? "(none)" : `${c.spec.key}@${c.spec.version}`} · ` +
      `scope ${c.scope} · store ${c.store}`
  )
  if (c.promoted > 0) out.push(`promoted ${c.promoted} record${c.promoted === 1 ? "" : "s"} first`)
  if (c.unpromoted > 0) {
    out.push(
      `${c.unpromoted} record${c.unpromoted === 1 ? " has" : "s have"} no promotion row under this spec yet ` +
        `and cannot be composed (run with --promote to promote ${c.unpromoted === 1 ? "it" : "them"})`
    )
  }
  out.push("")
  out.push(c.text === "" ? "(the Background is empty: no section has entries)" : c.text)
  out.push("")
  out.push("fragments")
  out.push(table(
    ["#", "source", "memory ids", "text"],
    c.fragments.map((fragment, i) => [
      String(i + 1),
      fragment.source,
      fragment.source === "memory" ? fragment.memoryIds.join(", ") : "-",
      Render.truncate(JSON.stringify(fragment.text), 72)
    ])
  ))
  out.push("")
  if (c.report === null) {
    out.push("overlay report: no routing spec, so no memory was placed (the Background is as authored)")
  } else {
    out.push(`overlay report (${c.report.specKey}@${c.report.specVersion}, ${c.report.outcomes.length} placed records)`)
    if (c.report.outcomes.length > 0) {
      out.push(table(
        ["record", "outcome", "address", "key source", "detail"],
        c.report.outcomes.map((outcome) => [
          outcome.recordId,
          outcome.status === "composed" ? "composed" : outcome.reason,
          address(outcome),
          outcome.address?.keySource ?? "-",
          outcomeDetail(outcome)
        ])
      ))
    }
    const declined = c.report.outcomes.flatMap((outcome) => {
      const advice = declineAdvice(outcome, engram)
      return advice === undefined
        ? []
        : [`  ${outcome.recordId}: ${advice.why}${advice.fix === undefined ? "" : `; fix: ${advice.fix}`}`]
    })
    if (declined.length > 0) out.push("why not composed", ...declined)
    const chars = MemoryOverlay.composedChars(c.report)
    out.push(
      `budget: ${c.report.budget.sectionChars} chars per section, ${c.report.budget.totalChars} overall; ` +
        `memory entries use ${chars.total}`
    )
  }
  if (c.missing.length > 0) out.push(`rows whose record is missing: ${c.missing.join(", ")}`)
  if (c.skipped.promotionRows + c.skipped.records > 0) {
    out.push(`unreadable rows skipped: ${c.skipped.promotionRows} promotion, ${c.skipped.records} memory`)
  }
  return out.join("\n")
}

/**
 * `engram compose --agent <config.json> [--promote]`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "compose",
  {
    agent: Flags.required(
      agentFlag("The agent config: background, spec, scope, and optionally db (relative to the file).")
    ),
    promote: Flags.boolean("promote", "First promote the scope's records that have no promotion row under the spec.")
  },
  ({ agent, promote }) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings
      const { config, db: configured } = yield* readAgentConfig(agent)
      const spec = config.spec === undefined
        ? undefined
        : yield* Effect.provide(
          Effect.flatMap(RoutingSpecs.RoutingSpecs, (specs) => specs.resolve(config.spec!)),
          RoutingSpecs.layerPresets
        )
      const location = yield* StoreBackend.locationOf(settings, { configured })
      const composition = yield* Effect.gen(function*() {
        let promoted = 0
        let unpromoted = 0
        if (spec !== undefined) {
          const records = yield* allRecords(config.scope)
          if (promote) {
            const Promotion = yield* loadPromotion
            promoted = (yield* Promotion.promoteNew(records, { background: config.background, spec })).committed.length
          }
          const rows = yield* Effect.flatMap(PromotionStore.PromotionStore, (store) =>
            store.getByRecords(records.map((record) => record.id), { specKey: spec.key }))
          unpromoted = records.length - new Set(rows.rows.map((row) =>
            row.recordId
          )).size
        }
        // The same build every runtime uses: the prefix, its overlay report and what it composed.
        const StablePrefix = yield* loadStablePrefix
        const built = yield* StablePrefix.buildAgent(config)
        return {
          promoted,
          unpromoted,
          fragments: built.prefix.find((section) => section.name === ContextSection.sectionName)?.fragments ?? [],
          report: spec === undefined ? null : built.report,
          missing: built.missing,
          skipped: built.skipped
        }
      }).pipe(
        Effect.provide(
          Layer.merge(StoreBackend.layer(location, promote ? "write" : "read"), RoutingSpecs.layerPresets)
        )
      )
      const result: Composition = {
        agent: config.name ?? null,
        spec: spec === undefined ? null : { key: spec.key, version: spec.version },
        scope: config.scope,
        store: StoreBackend.describeLocation(location),
        ...composition,
        text: PromptFragment.joinFragments(composition.fragments)
      }
      yield* Console.log(
        settings.json ? Render.json(result) : renderComposition(result, StoreBackend.commandFor(location))
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Show an agent's composed Background: each fragment's source and memory ids, and the overlay report."
  )
)
