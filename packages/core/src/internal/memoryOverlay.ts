/**
 * The body of `MemoryOverlay.applyMemoryOverlay`. Every step works on a canonical ordering of
 * its input, so the result does not depend on the order rows arrive in.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import { identity } from "effect/Function"
import { type Background, type BackgroundEntry, type BackgroundSection, renderEntryLine } from "../Background.js"
import type {
  DeclineReason,
  OverlayAddress,
  OverlayBudget,
  OverlayOptions,
  OverlayOutcome,
  OverlayResult,
  ResolvedBudget
} from "../MemoryOverlay.js"
import {
  entryAddress,
  importanceOf,
  type MemoryRoutingSpec,
  type PlacedRecord,
  type Placement,
  placementKey,
  routingContext,
  validatePlacement
} from "../Routing.js"
import { deepFreeze } from "./deepFreeze.js"
import { isHeld } from "./memoryGate.js"

export const DEFAULT_SECTION_BUDGET_CHARS = 1_500
export const DEFAULT_TOTAL_BUDGET_CHARS = 3_000

interface Row {
  readonly placed: PlacedRecord
  readonly id: string
  readonly placement: Placement | null
  readonly address: OverlayAddress | null
  readonly createdAt: number
  /** Position in canonical order, which is also the position of this row's outcome. */
  index: number
}

interface Candidate extends Row {
  readonly placement: Placement
  readonly address: OverlayAddress
}

interface Entry {
  readonly section: string
  readonly key: string
  readonly address: OverlayAddress
  readonly primary: Candidate
  readonly supporters: ReadonlyArray<Candidate>
  readonly value: string
  readonly chars: number
  /** The key's rank in the spec's vocabulary (`Routing.importanceOf`): 0 is the most important. */
  readonly importance: number
  rank: number
}

const compareRaw = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

// Rows by record id; for repeated ids the latest promotion first; then anything else that can
// tell two rows apart, so the kept row never depends on input order.
const compareRows = (a: Row, b: Row): number =>
  compareRaw(a.id, b.id) ||
  DateTime.toEpochMillis(b.placed.promotedAt) - DateTime.toEpochMillis(a.placed.promotedAt) ||
  compareRaw(a.address?.placementKey ?? "", b.address?.placementKey ?? "") ||
  compareRaw(a.placed.specKey, b.placed.specKey) ||
  compareRaw(a.placed.specVersion, b.placed.specVersion)

const newestFirst = (a: Row, b: Row): number => b.createdAt - a.createdAt || compareRaw(a.id, b.id)

const oldestFirst = (a: Row, b: Row): number => a.createdAt - b.createdAt || compareRaw(a.id, b.id)

// Spill priority, highest first: the more important key (the vocabulary's order; undeclared keys
// last), then more supporting records, then newer, then lower id (decision 0056).
const byPriority = (a: Entry, b: Entry): number =>
  (a.importance === b.importance ? 0 : a.importance < b.importance ? -1 : 1) ||
  b.supporters.length - a.supporters.length || newestFirst(a.primary, b.primary)

const budgetValue = (value: number | undefined, fallback: number): number =>
  value === undefined ? fallback : Number.isNaN(value) || value < 0 ? 0 : value

const resolveBudget = (budget: OverlayBudget | undefined): ResolvedBudget => {
  const perSection: Record<string, number> = {}
  for (const [id, value] of Object.entries(budget?.perSection ?? {})) perSection[id] = budgetValue(value, 0)
  return {
    totalChars: budgetValue(budget?.totalChars, DEFAULT_TOTAL_BUDGET_CHARS),
    sectionChars: budgetValue(budget?.sectionChars, DEFAULT_SECTION_BUDGET_CHARS),
    perSection
  }
}

export const applyMemoryOverlay = (
  background: Background,
  placed: ReadonlyArray<PlacedRecord>,
  spec: MemoryRoutingSpec,
  options: OverlayOptions = {}
): OverlayResult => {
  // A malformed placement is a bug in the spec that committed it: the one throw.
  const rows: Array<Row> = placed.map((row) => {
    const placement = row.placement === null
      ? null
      : Either.getOrThrowWith(validatePlacement(row.placement, row.specKey), identity)
    return {
      placed: row,
      id: row.record.id,
      placement,
      address: placement === null ? null : Object.freeze({
        section: placement.section,
        key: placement.key,
        placementKey: placementKey(placement),
        keySource: row.keySource
      }),
      createdAt: DateTime.toEpochMillis(row.record.createdAt),
      index: 0
    }
  })
  rows.sort(compareRows)
  rows.forEach((row, index) => {
    row.index = index
  })

  const budget = resolveBudget(options.budget)
  const nowMillis = options.now === undefined ? undefined : DateTime.toEpochMillis(options.now)
  const sections = new Map<string, BackgroundSection>(background.sections.map((section) => [section.id, section]))
  // Authored entries hold their addresses as routing compares them: by folded (canonical) key.
  const authoredAddresses = new Set<string>(
    background.sections.flatMap((section) => section.entries.map((entry) => entryAddress(spec, section.id, entry.key)))
  )

  // One outcome per row, at the row's canonical position: sorted by record id, a record's
  // duplicate rows after its live one.
  const outcomes: Array<OverlayOutcome> = new Array(rows.length)
  const decline = (row: Row, reason: DeclineReason): void => {
    outcomes[row.index] = Object.freeze({ recordId: row.id, status: "declined", reason, address: row.address })
  }

  // 1. Gates, one reason per row.
  const groups = new Map<string, Array<Candidate>>()
  let previousId: string | undefined
  for (const row of rows) {
    const record = row.placed.record
    if (row.id === previousId) {
      decline(row, "duplicate-row")
      continue
    }
    previousId = row.id
    if (record.reviewState === "rejected") decline(row, "rejected")
    else if (record.invalidatedAt !== undefined) decline(row, "superseded")
    else if (
      record.expiresAt !== undefined &&
      (nowMillis === undefined || DateTime.toEpochMillis(record.expiresAt) <= nowMillis)
    ) decline(row, "expired")
    else if (record.deliveryPolicy === "on_demand") decline(row, "on-demand")
    else if (row.placed.specKey !== spec.key) decline(row, "spec-mismatch")
    else if (row.placement === null || row.address === null) decline(row, "spec-declined")
    else {
      const section = sections.get(row.placement.section)
      if (section === undefined) decline(row, "undeclared-section")
      else if (section.promotion === "locked") decline(row, "locked")
      else if (section.promotion === "earned") decline(row, "earned-inert")
      else if (isHeld(record)) decline(row, "flagged")
      else if (section.promotion === "guarded" && record.reviewState !== "confirmed") decline(row, "review-required")
      else if (authoredAddresses.has(row.address.placementKey)) decline(row, "authored-wins")
      else if (options.overriddenBy?.has(row.address.placementKey) === true) {
        outcomes[row.index] = Object.freeze({
          recordId: row.id,
          status: "declined",
          reason: "scope-overridden",
          address: row.address,
          heldBy: options.overriddenBy.get(row.address.placementKey)!
        })
      } else {
        const candidate = row as Candidate
        const group = groups.get(candidate.address.placementKey)
        if (group === undefined) groups.set(candidate.address.placementKey, [candidate])
        else group.push(candidate)
      }
    }
  }

  // 2. One holder per address: newest first, then the spec's reconcile.
  const renderValue = (candidate: Candidate): string =>
    spec.renderEntry === undefined ? candidate.placed.record.content : String(spec.renderEntry(candidate.placed))
  const entries: Array<Entry> = []
  for (const group of groups.values()) {
    if (group.length > 1) group.sort(newestFirst)
    let primary = group[0]!
    let supporters: Array<Candidate> = [primary]
    const shadowed: Array<Candidate> = []
    for (let i = 1; i < group.length; i++) {
      const challenger = group[i]!
      const verdict = spec.reconcile === undefined
        ? "a"
        : spec.reconcile(primary.placed.record, challenger.placed.record)
      if (verdict === "both") {
        supporters.push(challenger)
      } else if (verdict === "b") {
        shadowed.push(...supporters)
        primary = challenger
        supporters = [challenger]
      } else {
        shadowed.push(challenger)
      }
    }
    for (const loser of shadowed) {
      outcomes[loser.index] = Object.freeze({
        recordId: loser.id,
        status: "declined",
        reason: "shadowed",
        address: loser.address,
        heldBy: primary.id
      })
    }
    const value = supporters.length === 1 ? renderValue(primary) : supporters.map(renderValue).join("; ")
    const { key, section } = primary.placement
    entries.push({
      section,
      key,
      address: primary.address,
      primary,
      supporters,
      value,
      chars: renderEntryLine({ key, value }).length,
      importance: importanceOf(spec, primary.placement),
      rank: Number.POSITIVE_INFINITY
    })
  }

  // 3. Budget: whole entries, highest priority first, skipping what does not fit.
  entries.sort(byPriority)
  const usedBySection = new Map<string, number>()
  let usedTotal = 0
  const admitted: Array<Entry> = []
  for (const entry of entries) {
    const limit = Object.hasOwn(budget.perSection, entry.section)
      ? budget.perSection[entry.section]!
      : budget.sectionChars
    const used = usedBySection.get(entry.section) ?? 0
    const over = used + entry.chars > limit
      ? "section"
      : usedTotal + entry.chars > budget.totalChars
      ? "total"
      : undefined
    if (over !== undefined) {
      for (const supporter of entry.supporters) {
        outcomes[supporter.index] = Object.freeze({
          recordId: supporter.id,
          status: "declined",
          reason: "over-budget",
          address: supporter.address,
          budget: over
        })
      }
      continue
    }
    usedBySection.set(entry.section, used + entry.chars)
    usedTotal += entry.chars
    admitted.push(entry)
    for (const supporter of entry.supporters) {
      outcomes[supporter.index] = Object.freeze({
        recordId: supporter.id,
        status: "composed",
        address: entry.address,
        supports: entry.supporters.length,
        chars: entry.chars
      })
    }
  }

  // 4. Layout: the spec's finalize orders the admitted entries (records offered oldest first).
  const ctx = routingContext(background)
  const composed = admitted.flatMap((entry) => entry.supporters).sort(oldestFirst)
  const plan = spec.finalize(composed.map((candidate) => candidate.placed), ctx)
  const position = new Map<string, number>()
  const order = Array.isArray(plan?.order) ? plan.order : []
  for (let i = 0; i < order.length; i++) if (!position.has(order[i]!)) position.set(order[i]!, i)
  for (const entry of admitted) {
    for (const supporter of entry.supporters) {
      const at = position.get(supporter.id)
      if (at !== undefined && at < entry.rank) entry.rank = at
    }
  }
  admitted.sort((a, b) => (a.rank !== b.rank ? (a.rank < b.rank ? -1 : 1) : oldestFirst(a.primary, b.primary)))

  const additions = new Map<string, Array<BackgroundEntry>>()
  for (const entry of admitted) {
    const list = additions.get(entry.section)
    const added: BackgroundEntry = Object.freeze({
      key: entry.key,
      value: entry.value,
      memoryIds: Object.freeze(entry.supporters.map((supporter) => supporter.id))
    })
    if (list === undefined) additions.set(entry.section, [added])
    else list.push(added)
  }
  const composedBackground: Background = Object.freeze({
    sections: Object.freeze(background.sections.map((section) => {
      const added = additions.get(section.id)
      // Sections of a decoded Background are already frozen; freezing again is a no-op.
      return added === undefined
        ? deepFreeze(section)
        : Object.freeze({ ...section, entries: Object.freeze([...deepFreeze(section.entries), ...added]) })
    }))
  })

  return {
    background: composedBackground,
    report: Object.freeze({
      specKey: spec.key,
      specVersion: spec.version,
      budget: deepFreeze(budget),
      outcomes: Object.freeze(outcomes)
    })
  }
}
