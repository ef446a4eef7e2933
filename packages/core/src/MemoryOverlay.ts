/**
 * The overlay fold: composes promoted memories into a declared Background and reports, for every
 * placed record, whether it was composed and, if not, why.
 *
 * `applyMemoryOverlay` is pure, total and independent of the order of its input. It composes a
 * record only into a declared section whose promotion tier admits it: `auto` takes confirmed and
 * pending records, `guarded` only confirmed ones, `locked` none, and `earned` is inert in this
 * version. Rejected, expired and superseded records never compose. At each address the newest
 * record wins (ties: lower id); an address an author already filled stays authored. Memory
 * entries are budgeted in characters per section and overall; whole entries spill, lowest
 * priority first. The report names records, addresses and reasons — never content.
 *
 * @since 0.1.0
 */
import type * as DateTime from "effect/DateTime"
import type { Background } from "./Background.js"
import * as internal from "./internal/memoryOverlay.js"
import type { KeySource, MemoryRoutingSpec, PlacedRecord } from "./Routing.js"

/**
 * Why a placed record was not composed.
 *
 * - `rejected`, `expired`, `superseded`: the record is not deliverable (superseded covers any
 *   invalidation). Without `now` in the options, any record with an expiry counts as expired.
 * - `on-demand`: the record's delivery policy is `on_demand`: it reaches a model only when a
 *   tool call (`memory_recall`) asks for it, never through the prefix.
 * - `duplicate-row`: another row for the same record id was used (the latest `promotedAt`).
 * - `spec-mismatch`: the row was committed by a different spec than the one composing.
 * - `spec-declined`: the spec placed the record nowhere; it stays recall-only.
 * - `undeclared-section`: the placement names a section the Background does not declare.
 * - `locked`: the section takes no memory. `earned-inert`: the `earned` tier composes nothing yet.
 * - `flagged`: the poisoning screen flags the record (`InstructionScreen`: it reads as an
 *   instruction to the agent) and no operator confirmed it; no tier composes it, `auto` included.
 * - `review-required`: the section is `guarded` and the record is not confirmed.
 * - `authored-wins`: the Background already has an entry at that key (compared as
 *   `Routing.entryAddress` compares them: an authored `Time zone` holds the key `time_zone`).
 * - `scope-overridden`: a more specific scope the request reads holds the address (`heldBy`, a
 *   session's value over the project's): the projection delivers that value instead, one per slot.
 * - `shadowed`: another record holds the address (`heldBy`) — normally a newer one.
 * - `over-budget`: the entry did not fit the section's or the overall character budget (`budget`)
 *   once the more important entries were in (the vocabulary's order, then newer).
 *
 * @since 0.1.0
 * @category models
 */
export type DeclineReason =
  | "rejected"
  | "expired"
  | "superseded"
  | "on-demand"
  | "duplicate-row"
  | "spec-mismatch"
  | "spec-declined"
  | "undeclared-section"
  | "locked"
  | "earned-inert"
  | "flagged"
  | "review-required"
  | "authored-wins"
  | "scope-overridden"
  | "shadowed"
  | "over-budget"

/**
 * Every decline reason, in the order the overlay checks them.
 *
 * @since 0.1.0
 * @category constants
 */
export const declineReasons: ReadonlyArray<DeclineReason> = [
  "duplicate-row",
  "rejected",
  "superseded",
  "expired",
  "on-demand",
  "spec-mismatch",
  "spec-declined",
  "undeclared-section",
  "locked",
  "earned-inert",
  "flagged",
  "review-required",
  "authored-wins",
  "scope-overridden",
  "shadowed",
  "over-budget"
]

/**
 * The address a record was placed at.
 *
 * @since 0.1.0
 * @category models
 */
export interface OverlayAddress {
  readonly section: string
  readonly key: string
  readonly placementKey: string
  readonly keySource: KeySource | null
}

/**
 * A record composed into the Background. `supports` is how many records the entry stands on
 * (more than one only when the spec's `reconcile` answered `"both"`); `chars` is the length of
 * the entry's rendered line, shared by all of them.
 *
 * @since 0.1.0
 * @category models
 */
export interface ComposedOutcome {
  readonly recordId: string
  readonly status: "composed"
  readonly address: OverlayAddress
  readonly supports: number
  readonly chars: number
}

/**
 * A record that was not composed, with the reason. `address` is absent (`null`) only when the
 * row has no placement. `heldBy` names the record holding the address for `shadowed` and `scope-overridden`; `budget`
 * names the limit an `over-budget` entry hit.
 *
 * @since 0.1.0
 * @category models
 */
export interface DeclinedOutcome {
  readonly recordId: string
  readonly status: "declined"
  readonly reason: DeclineReason
  readonly address: OverlayAddress | null
  readonly heldBy?: string
  readonly budget?: "section" | "total"
}

/**
 * What happened to one placed record.
 *
 * @since 0.1.0
 * @category models
 */
export type OverlayOutcome = ComposedOutcome | DeclinedOutcome

/**
 * Character budgets for memory-derived entries. A budget counts the characters (UTF-16 code
 * units) of each composed entry's rendered line, `- **{key}**: {value}`; authored entries are
 * not counted. `perSection` overrides `sectionChars` for the sections it names. A negative or
 * `NaN` budget is 0; `Infinity` means unlimited.
 *
 * @since 0.1.0
 * @category models
 */
export interface OverlayBudget {
  readonly totalChars?: number | undefined
  readonly sectionChars?: number | undefined
  readonly perSection?: Readonly<Record<string, number>> | undefined
}

/**
 * The budgets an overlay ran with, defaults filled in.
 *
 * @since 0.1.0
 * @category models
 */
export interface ResolvedBudget {
  readonly totalChars: number
  readonly sectionChars: number
  readonly perSection: Readonly<Record<string, number>>
}

/**
 * Options: `now` decides expiry (without it, any record with an expiry is treated as expired);
 * `budget` overrides the default character budgets; `overriddenBy` maps an address
 * (`placementKey`) to the record of a more specific scope the request also reads that holds it
 * (`ContextProjection.scopeOverrides`): an entry there is declined `scope-overridden`, so that
 * scope's value reaches the prompt instead, through the projection (decision 0075).
 *
 * @since 0.1.0
 * @category models
 */
export interface OverlayOptions {
  readonly now?: DateTime.Utc | undefined
  readonly budget?: OverlayBudget | undefined
  readonly overriddenBy?: ReadonlyMap<string, string> | undefined
}

/**
 * One outcome per placed row, sorted by record id; the spec that composed; the budgets applied.
 * It holds ids, addresses and reasons only — never record content — so it can be logged, sent to
 * a console, or attached to telemetry.
 *
 * @since 0.1.0
 * @category models
 */
export interface OverlayReport {
  readonly specKey: string
  readonly specVersion: string
  readonly budget: ResolvedBudget
  readonly outcomes: ReadonlyArray<OverlayOutcome>
}

/**
 * The composed Background and the report, both deeply frozen. Sections that gained no entries are
 * the input's own section objects (frozen in place if they were not already).
 *
 * @since 0.1.0
 * @category models
 */
export interface OverlayResult {
  readonly background: Background
  readonly report: OverlayReport
}

/**
 * The default character budget of one section's memory entries.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_SECTION_BUDGET_CHARS: number = internal.DEFAULT_SECTION_BUDGET_CHARS

/**
 * The default character budget of all memory entries together.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_TOTAL_BUDGET_CHARS: number = internal.DEFAULT_TOTAL_BUDGET_CHARS

/**
 * Composes `placed` records into `background` under `spec`, returning the new Background and a
 * report with one outcome per row.
 *
 * For each row, in this order: a second row for the same record is `duplicate-row`; the record
 * must be deliverable (`rejected`, `superseded`, `expired`), committed by this spec
 * (`spec-mismatch`), placed (`spec-declined`), into a declared section (`undeclared-section`)
 * whose tier admits it (`locked`, `earned-inert`, `review-required`), at a key the Background
 * does not already hold (`authored-wins`). The section's tier is the one declared now, not the
 * one on the row. Records left at one address are arbitrated: newest `createdAt` first, ties by
 * id ascending (raw comparison), then the spec's `reconcile` if it has one; the others are
 * `shadowed`. Entries are then admitted into the budget in priority order — the more important key
 * first (its rank in the spec's vocabulary, `Routing.importanceOf`; keys the spec does not declare
 * last), then more supporting records, then newer, then lower id — skipping any that do not fit
 * (`over-budget`), so a name outlives a hundred newer hobbies (decision 0056). The
 * admitted entries are appended to their sections after the authored entries, in the order the
 * spec's `finalize` gives.
 *
 * Throws `Routing.InvalidPlacement` if a row's placement is malformed — a bug in the spec that
 * committed it, and the only throw.
 *
 * @since 0.1.0
 * @category composition
 */
export const applyMemoryOverlay: (
  background: Background,
  placed: ReadonlyArray<PlacedRecord>,
  spec: MemoryRoutingSpec,
  options?: OverlayOptions
) => OverlayResult = internal.applyMemoryOverlay

/**
 * The ids of the records the report composed, sorted. The projection leaves these out, so a memory never
 * reaches the model twice.
 *
 * @since 0.1.0
 * @category report
 */
export const composedIds = (report: OverlayReport): ReadonlyArray<string> =>
  report.outcomes.filter((outcome) => outcome.status === "composed").map((outcome) => outcome.recordId)

/**
 * The declined outcomes, optionally only those with `reason`.
 *
 * @since 0.1.0
 * @category report
 */
export const declined = (report: OverlayReport, reason?: DeclineReason): ReadonlyArray<DeclinedOutcome> =>
  report.outcomes.filter((outcome): outcome is DeclinedOutcome =>
    outcome.status === "declined" && (reason === undefined || outcome.reason === reason)
  )

/**
 * Characters of memory-derived entries composed, overall and per section (each entry counted
 * once, however many records support it).
 *
 * @since 0.1.0
 * @category report
 */
export const composedChars = (report: OverlayReport): {
  readonly total: number
  readonly bySection: Readonly<Record<string, number>>
} => {
  const seen = new Set<string>()
  const bySection: Record<string, number> = {}
  let total = 0
  for (const outcome of report.outcomes) {
    if (outcome.status !== "composed" || seen.has(outcome.address.placementKey)) continue
    seen.add(outcome.address.placementKey)
    bySection[outcome.address.section] = (bySection[outcome.address.section] ?? 0) + outcome.chars
    total += outcome.chars
  }
  return { total, bySection }
}
