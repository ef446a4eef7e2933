/**
 * The pure decisions of `ContextProjection`: how the budget is read from the settings, how many
 * recall hits to ask for, which recalled records a projection keeps and the address each memory
 * takes. The layer (`internal/contextProjection.ts`) reads the stores and calls these.
 *
 * It imports only types from the public module.
 */
import * as Either from "effect/Either"
import type { LazyArg } from "effect/Function"
import * as Option from "effect/Option"
import type { IdentitySource, ProjectionSettings } from "../ContextProjection.js"
import type * as MemoryRecord from "../MemoryRecord.js"
import * as PriorSessionDigest from "../PriorSessionDigest.js"
import * as ProjectedContext from "../ProjectedContext.js"
import * as Routing from "../Routing.js"

export const budgetOf = (settings: ProjectionSettings): ProjectedContext.ProjectionBudget =>
  ProjectedContext.budgetFromContextWindow({
    contextWindowTokens: settings.contextWindowTokens,
    ...(settings.budgetPct !== undefined ? { budgetPct: settings.budgetPct } : {})
  })

/** The chars one recall line is assumed to take when sizing the recall search under a char budget. */
export const RECALL_LINE_CHARS = 100

/**
 * The tokens one recall line is assumed to take when sizing the recall search under a token
 * budget (a recall line measures ~160 chars on the projection bench: ~40 tokens at chars/4).
 */
export const RECALL_LINE_TOKENS = 40

/**
 * How many recall hits the budget left holds: as many lines as the budget left after the
 * higher-priority sections (`used`, in the budget's unit) holds at {@link RECALL_LINE_TOKENS} or
 * {@link RECALL_LINE_CHARS} a line, at most `cap`; `cap` when the budget is unbounded, 0 when
 * nothing is left.
 */
export const recallLimitFor = (
  budget: ProjectedContext.ProjectionBudget,
  used: { readonly usedChars: number; readonly usedTokens: number },
  cap: number
): number => {
  switch (budget._tag) {
    case "Unbounded":
      return cap
    case "Tokens":
      return Math.max(0, Math.min(cap, Math.floor((budget.tokens - used.usedTokens) / RECALL_LINE_TOKENS)))
    case "Chars":
      return Math.max(0, Math.min(cap, Math.floor((budget.chars - used.usedChars) / RECALL_LINE_CHARS)))
  }
}

/**
 * The limit of a projection's recall search: 0 (no search) when the mode projects no recall or
 * the query is blank; otherwise {@link recallLimitFor} over what the higher-priority sections use
 * (`used` is read only then), and at least 1, so that a report can still say recall was shed for
 * budget.
 */
export const recallSearchLimit = (options: {
  readonly mode: ProjectedContext.ProjectionMode
  readonly query: string
  readonly budget: ProjectedContext.ProjectionBudget
  readonly used: LazyArg<{ readonly usedChars: number; readonly usedTokens: number }>
  readonly cap: number
}): number =>
  !ProjectedContext.sectionsFor(options.mode).includes("recalled_memory") || options.query.trim() === ""
    ? 0
    : Math.max(1, recallLimitFor(options.budget, options.used(), options.cap))

export const SUMMARY_KIND: MemoryRecord.MemoryKind = "episode"

export const PROJECTED_POLICIES: ReadonlyArray<MemoryRecord.DeliveryPolicy> = ["always", "retrieved"]

/**
 * The recalled hits a projection may deliver: every hit but session summaries, in order. A
 * summary reaches a prompt through the digest alone, whose rules (other sessions only, the newest
 * summary only, none on autonomous turns) recall would bypass.
 */
export const withoutSummaries = <A extends { readonly record: MemoryRecord.MemoryRecord }>(
  hits: ReadonlyArray<A>
): ReadonlyArray<A> => hits.filter((hit) => Option.isNone(PriorSessionDigest.fromRecord(hit.record)))

/**
 * The address routing gives a record under the identity source's spec (placed, or in an
 * undeclared section), whichever scope it is of — a `global` name and the agent's own are one slot
 * (decision 0056) — or `undefined`: a record the spec declines, or one the spec cannot place (a
 * broken spec), has none, and is then deduplicated by id alone.
 */
const addressOf = (source: IdentitySource, record: MemoryRecord.MemoryRecord): string | undefined => {
  const evaluation = Routing.evaluateRoute(record, source.context, source.spec)
  return Either.isLeft(evaluation) || evaluation.right.placement === null ? undefined : evaluation.right.placementKey
}

/**
 * The address of every record that has one under the identity source (see {@link addressOf}), by
 * record id: what lets the composer withhold a memory at an address the prefix or an identity
 * line already delivers.
 */
export const addressesOf = (
  source: IdentitySource,
  records: Iterable<MemoryRecord.MemoryRecord>
): Readonly<Record<string, string>> => {
  const addresses: Record<string, string> = {}
  for (const record of records) {
    const address = addressOf(source, record)
    if (address !== undefined) addresses[record.id] = address
  }
  return addresses
}
