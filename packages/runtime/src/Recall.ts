/**
 * Recall: the memories a turn brings into the prompt beside the composed Background, rendered
 * under `### Recalled Memories`.
 *
 * Three tiers, in priority order, each newest (or best) first:
 *
 * 1. **profile** — deliverable `profile` records of the scope, whatever the query: who the user
 *    is should never depend on how the question is phrased.
 * 2. **candidate** — deliverable records the routing spec would place in a declared section, but
 *    which the overlay did not compose (waiting for review, spilled, shadowed…).
 * 3. **hits** — keyword search over the query.
 *
 * Records the overlay composed into the Background are left out (they are in the prompt already),
 * and a record appears once, in its first tier. Entries are admitted whole, in tier order, while
 * the rendered text — heading and line breaks included — fits the character budget (default
 * 4,000); an entry that does not fit is spilled and later, smaller ones may still be admitted.
 * Every entry is one line, collapsed and with reserved tags neutralized, so memory text cannot
 * open a heading or forge a prompt section.
 *
 * @since 0.1.0
 */
import {
  Background,
  MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  type MemoryStoreError,
  MemoryWrite,
  ProjectedContext,
  PromptFragment,
  Routing
} from "@engram/core"
import * as Effect from "effect/Effect"

/**
 * The default character budget of the recall block.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RECALL_BUDGET_CHARS = 4_000

/**
 * The heading recall renders under (a `###` child of `## Context`).
 *
 * @since 0.1.0
 * @category constants
 */
export const heading = "### Recalled Memories"

/**
 * Which tier brought a memory into recall.
 *
 * @since 0.1.0
 * @category models
 */
export type RecallTier = "profile" | "candidate" | "hits"

/**
 * The records each tier offers, best first. A record may be offered by several tiers.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecallCandidates {
  readonly profile: ReadonlyArray<MemoryRecord.MemoryRecord>
  readonly candidate: ReadonlyArray<MemoryRecord.MemoryRecord>
  readonly hits: ReadonlyArray<MemoryRecord.MemoryRecord>
}

/**
 * A memory admitted into (or spilled from) recall: its id, tier and the characters its line
 * costs (the line and its line break).
 *
 * @since 0.1.0
 * @category models
 */
export interface RecallEntry {
  readonly recordId: string
  readonly tier: RecallTier
  readonly chars: number
}

/**
 * The recall block: its text (empty when nothing was recalled), the same text as attributed
 * fragments, the ids it holds, what was admitted and what was spilled, the budget it ran with,
 * and the number of stored rows that could not be read.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecallResult {
  readonly text: string
  readonly fragments: ReadonlyArray<PromptFragment.PromptFragment>
  readonly memoryIds: ReadonlyArray<string>
  readonly entries: ReadonlyArray<RecallEntry>
  readonly spilled: ReadonlyArray<RecallEntry>
  readonly budgetChars: number
  readonly skipped: number
}

/**
 * The one line a recalled memory renders as: `- [id · kind · label] content`, with
 * `· unconfirmed` in the brackets while the record awaits review. Collapsed onto one line, with
 * the projection's reserved tags neutralized.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderEntry = (record: MemoryRecord.MemoryRecord): string => {
  const facts = [record.id, record.kind]
  if (record.label !== undefined) facts.push(record.label)
  if (record.reviewState !== "confirmed") facts.push("unconfirmed")
  return ProjectedContext.neutralizeTags(Background.collapse(`- [${facts.join(" · ")}] ${record.content}`))
}

const tiers: ReadonlyArray<RecallTier> = ["profile", "candidate", "hits"]

/**
 * Lays out recall from what each tier offers. Pure: the same candidates give the same block.
 * Composed ids are left out; each record appears once, in its first tier; whole entries are
 * admitted in tier order while the text fits `budgetChars`.
 *
 * @since 0.1.0
 * @category rendering
 */
export const layoutRecall = (
  candidates: RecallCandidates,
  options: { readonly composedIds: ReadonlyArray<string>; readonly budgetChars?: number | undefined }
): Omit<RecallResult, "skipped"> => {
  const budgetChars = Math.max(0, options.budgetChars ?? DEFAULT_RECALL_BUDGET_CHARS)
  const seen = new Set(options.composedIds)
  const entries: Array<RecallEntry> = []
  const spilled: Array<RecallEntry> = []
  const lines: Array<{ readonly record: MemoryRecord.MemoryRecord; readonly line: string }> = []
  let used = heading.length
  for (const tier of tiers) {
    for (const record of candidates[tier]) {
      if (seen.has(record.id)) continue
      seen.add(record.id)
      const line = renderEntry(record)
      const entry = { recordId: record.id, tier, chars: line.length + 1 }
      if (used + entry.chars <= budgetChars) {
        used += entry.chars
        entries.push(entry)
        lines.push({ record, line })
      } else {
        spilled.push(entry)
      }
    }
  }
  if (lines.length === 0) return { text: "", fragments: [], memoryIds: [], entries: [], spilled, budgetChars }
  const fragments: Array<PromptFragment.PromptFragment> = [PromptFragment.authored(`${heading}\n`)]
  lines.forEach(({ line, record }, i) =>
    fragments.push(PromptFragment.memory(i === lines.length - 1 ? line : `${line}\n`, [record.id]))
  )
  return {
    text: PromptFragment.joinFragments(fragments),
    fragments,
    memoryIds: lines.map(({ record }) => record.id),
    entries,
    spilled,
    budgetChars
  }
}

/**
 * What {@link assembleRecall} needs: the query, the scope, the agent's declared Background and
 * spec (for the candidate tier), the ids the overlay composed, and optionally the budget and how
 * many records each tier reads at most.
 *
 * @since 0.1.0
 * @category models
 */
export interface RecallOptions {
  readonly query: string
  readonly scope: MemoryRecord.Scope
  readonly background: Background.Background
  readonly spec: Routing.MemoryRoutingSpec
  readonly composedIds: ReadonlyArray<string>
  readonly budgetChars?: number | undefined
  /** Profile records read (default 50). */
  readonly profileLimit?: number | undefined
  /** Newest deliverable records examined for the candidate tier (default 200). */
  readonly candidateScanLimit?: number | undefined
  /** Keyword hits read (default 20). */
  readonly hitsLimit?: number | undefined
}

/**
 * Reads the three tiers from the `MemoryStore` and lays them out with {@link layoutRecall}.
 * Routing is only evaluated here, never committed; a spec that throws on a record leaves that
 * record out of the candidate tier.
 *
 * @since 0.1.0
 * @category recall
 */
export const assembleRecall = (
  options: RecallOptions
): Effect.Effect<
  RecallResult,
  MemoryStoreError.InvalidMemoryQuery | MemoryStoreError.InvalidCursor | MemoryStoreError.MemoryStoreFailure,
  MemoryStore.MemoryStore
> =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const scopes = [options.scope]
    const profile = yield* store.list({
      scopes,
      kinds: ["profile"],
      deliverable: true,
      limit: options.profileLimit ?? 50
    })
    const recent = yield* store.list({ scopes, deliverable: true, limit: options.candidateScanLimit ?? 200 })
    const ctx = Routing.routingContext(options.background)
    const wouldPlace = (record: MemoryRecord.MemoryRecord): boolean => {
      try {
        return Routing.evaluateRoute(record, ctx, options.spec)._tag === "Routed"
      } catch {
        return false
      }
    }
    const hits = yield* store.search(options.query, { scopes, deliverable: true, limit: options.hitsLimit ?? 20 })
    const at = yield* MemoryWrite.now
    const live = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
      records.filter((record) => MemoryQuery.isDeliverable(record, at))
    const laid = layoutRecall(
      {
        profile: live(profile.records),
        candidate: live(recent.records).filter(wouldPlace),
        hits: live(hits.hits.map((hit) => hit.record))
      },
      options
    )
    yield* Effect.annotateCurrentSpan({ recalled: laid.memoryIds.length, spilled: laid.spilled.length })
    return { ...laid, skipped: profile.skipped + recent.skipped + hits.skipped }
  }).pipe(Effect.withSpan("agent.memory.recall", { attributes: { scope: options.scope } }))
