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
import type { IdentitySource, ProjectionOverrides, ProjectionSettings } from "../ContextProjection.js"
import type * as MemoryRecord from "../MemoryRecord.js"
import * as PriorSessionDigest from "../PriorSessionDigest.js"
import * as ProjectionLayout from "../ProjectionLayout.js"
import * as Routing from "../Routing.js"
import { holdsAnyToken, searchableText } from "../SearchTokenizer.js"

export const budgetOf = (settings: ProjectionSettings): ProjectionLayout.ProjectionBudget =>
  settings.budgetTokens !== undefined
    ? ProjectionLayout.tokens(settings.budgetTokens)
    : ProjectionLayout.budgetFromContextWindow({
      contextWindowTokens: settings.contextWindowTokens,
      ...(settings.budgetPct !== undefined ? { budgetPct: settings.budgetPct } : {})
    })

/** The settings that together say how big the budget is: one level's budget replaces another's whole. */
const BUDGET_FIELDS = ["budgetTokens", "contextWindowTokens", "budgetPct"] as const

const definedOf = <A extends object>(o: A): Partial<A> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<A>

/**
 * Levels of overrides merged in order (the agent's, then the request's), later winning field by
 * field — except the budget, which a level that names any of `budgetTokens`, `contextWindowTokens`
 * or `budgetPct` replaces whole, so a request's window is not beaten by an agent's fixed token
 * budget (decision 0182). `undefined` when no level is given.
 */
export const mergeOverrides = (
  ...levels: ReadonlyArray<ProjectionOverrides | undefined>
): ProjectionOverrides | undefined => {
  let merged: ProjectionOverrides | undefined
  for (const level of levels) {
    if (level === undefined) continue
    const own = definedOf(level)
    const below: ProjectionOverrides = merged ?? {}
    if (BUDGET_FIELDS.some((field) => own[field] !== undefined)) {
      const { budgetPct: _pct, budgetTokens: _tokens, contextWindowTokens: _window, ...rest } = below
      merged = { ...rest, ...own }
    } else {
      merged = { ...below, ...own }
    }
  }
  return merged
}

/**
 * The settings one call runs with: `base` (the layer's), then the levels of overrides merged by
 * {@link mergeOverrides}; the merged budget, when it names one, replaces the layer's whole.
 */
export const settingsFor = (
  base: ProjectionSettings,
  ...overrides: ReadonlyArray<ProjectionOverrides | undefined>
): ProjectionSettings => {
  const merged = mergeOverrides(...overrides)
  if (merged === undefined) return base
  const { budgetPct: _pct, budgetTokens: _tokens, ...rest } = base
  const below: ProjectionSettings = BUDGET_FIELDS.some((field) => merged[field] !== undefined)
    ? { ...rest, contextWindowTokens: ProjectionLayout.DEFAULT_CONTEXT_WINDOW_TOKENS }
    : base
  // `merged` holds only defined fields (mergeOverrides), so each one it names wins.
  return { ...below, ...merged } as ProjectionSettings
}

/**
 * The relevance step (decision 0180), applied to recall's hits after ranking and before the budget,
 * as a predicate on a hit's record for one query (its content words read once): a hit is relevant
 * when its searchable text (what every store indexes) shares a token with the query beyond
 * function words (`PriorSessionDigest.contentTokens`, through the one `SearchTokenizer`) — or,
 * when the store fuses vectors under a similarity floor above 0 (`vectorFloor`), any hit (the
 * vector list admitted only hits above that floor, and a fused hit does not say which list found
 * it). A query with no content word recalls nothing.
 */
export const relevance = (
  query: string,
  options: { readonly vectorFloor: boolean } = { vectorFloor: false }
): (record: MemoryRecord.MemoryRecord) => boolean => {
  if (options.vectorFloor) return () => true
  const words = new Set(PriorSessionDigest.contentTokens(query))
  if (words.size === 0) return () => false
  return (record) => holdsAnyToken(searchableText(record), words)
}

/** True when a query has a word a memory could match beyond function words. */
export const hasContentWords = (query: string): boolean => PriorSessionDigest.contentTokens(query).length > 0

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
  budget: ProjectionLayout.ProjectionBudget,
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
  readonly mode: ProjectionLayout.ProjectionMode
  readonly query: string
  readonly budget: ProjectionLayout.ProjectionBudget
  readonly used: LazyArg<{ readonly usedChars: number; readonly usedTokens: number }>
  readonly cap: number
}): number =>
  !ProjectionLayout.sectionsFor(options.mode).includes("recalled_memory") || options.query.trim() === ""
    ? 0
    : Math.max(1, recallLimitFor(options.budget, options.used(), options.cap))

/**
 * The next recall round's limit, or `undefined` to stop (decisions 0181, 0216, 0222, 0229). Stop
 * when the budget is unbounded, the round's lowest-ranked hit or a neighbour of a delivered hit was
 * shed (the budget is full), no more candidates exist (`more`), or the cap is reached. A round
 * whose new hits held none the relevance step keeps does not stop the rounds (decision 0229): the
 * ranking's tail lists records holding only frequent tokens newest first, relevant ones among
 * them, so only reading on says whether relevant candidates remain. Otherwise ask for the hits the
 * room left holds at the cost the delivered recall lines measured per hit (their neighbours
 * included), divided by the share of the round's new hits the step kept (the next hits are dropped
 * at about the rate the last ones were, at least a tenth), with a quarter more for the lines that
 * will not fit — and at least twice the round's limit, which bounds the work: a projection runs at
 * most `1 + ⌈log2(cap / first limit)⌉` rounds, and all its rounds page fewer than twice the hits of
 * the last. Pure.
 */
export const nextRecallLimit = (options: {
  readonly budget: ProjectionLayout.ProjectionBudget
  readonly projection: ProjectionLayout.ProjectedContext
  readonly limit: number
  readonly cap: number
  readonly hits: number
  /** The id of the round's lowest-ranked hit, if it has any. */
  readonly lastHit?: string | undefined
  /** The hits this round took past the last round's limit, and how many of them the relevance step kept. */
  readonly added: { readonly returned: number; readonly relevant: number }
  readonly more: boolean
}): number | undefined => {
  const { added, budget, projection } = options
  if (budget._tag === "Unbounded" || !options.more || options.limit >= options.cap) return undefined
  const recall = projection.section("recalled_memory")
  const [room, spent] = budget._tag === "Tokens"
    ? [budget.tokens - projection.budget.usedTokens, recall?.tokens ?? 0]
    : [budget.chars - projection.budget.usedChars, recall?.chars ?? 0]
  if (room <= 0) return undefined
  // Full when the round ran out of room at the bottom of its order: its lowest-ranked hit shed, or
  // a neighbour of a delivered hit. Other shed lines were too long for the room and filled past
  // (decision 0222), or neighbours of those: the hits below them may still fit.
  const shed = projection.budget.shed.filter((item) => item.section === "recalled_memory")
  const shedRefs = new Set(shed.map((item) => item.ref))
  const full = shed.some((item) =>
    item.ref === options.lastHit || (item.neighbourOf !== undefined && !shedRefs.has(item.neighbourOf))
  )
  if (full) return undefined
  const perHit = Math.max(1, spent / Math.max(1, options.hits))
  // At least a tenth kept, so one round of mostly dropped hits cannot ask for the whole cap.
  const kept = Math.max(0.1, Math.min(1, added.relevant / Math.max(1, added.returned)))
  const sized = Math.ceil(options.limit + (room / perHit / kept) * 1.25) + 1
  return Math.min(options.cap, Math.max(2 * options.limit, sized))
}

/** The most a first recall search asks for, as a multiple of the first round's limit. */
export const MAX_RECALL_REACH = 4

/**
 * How far past its first round's limit a projection's recall search reads (decision 0200): the
 * rounds that fill a budget (decision 0181) take growing prefixes of one ranking, and a search's
 * first `limit` hits are the search of `limit` (the conformance kit's ranking tier), so one search
 * for the last round's limit serves every round. That limit is known only after the rounds; the
 * first search asks for the first round's limit times `reach` — the mean ratio of the last round's
 * limit to the first's over recent projections (recalled lines cost more or less than assumed,
 * the relevance step drops a share of the hits), with a tenth more, at most
 * {@link MAX_RECALL_REACH}. It changes how many searches run, never which hits a round takes.
 */
export const recallReach = () => {
  // Starts where the projection bench's questions land (about two rounds' worth).
  let reach = 2
  return {
    /** The first search's limit for a first round of `limit`, at most `cap`. */
    ask: (limit: number, cap: number): number =>
      Math.min(cap, Math.max(limit, Math.ceil(limit * Math.min(MAX_RECALL_REACH, reach * 1.1)))),
    /** Records how far one projection's rounds went: `last` over `first`. */
    observe: (first: number, last: number): void => {
      if (first > 0) reach = 0.75 * reach + 0.25 * Math.max(1, last / first)
    }
  }
}

/** Why recall stopped where it did, for the budget summary (see `ProjectionLayout.RecallReport`). */
export const recallReport = (options: {
  readonly searchable: boolean
  readonly limit: number
  readonly rounds: number
  readonly searches: number
  readonly cap: number
  readonly projection: ProjectionLayout.ProjectedContext
  readonly returned: number
  readonly relevant: number
  readonly more: boolean
}): ProjectionLayout.RecallReport => {
  const shed = options.projection.budget.shed.some((item) => item.section === "recalled_memory")
  const stop: ProjectionLayout.RecallReport["stop"] = !options.searchable
    ? "no-content-words"
    : shed
    ? "budget-full"
    : options.relevant === 0 && options.returned > 0
    ? "no-relevant-match"
    : options.more && options.limit >= options.cap
    ? "cap"
    : options.more
    ? "budget-full"
    : "candidates-exhausted"
  return {
    stop,
    limit: options.limit,
    rounds: options.rounds,
    searches: options.searches,
    candidates: options.returned,
    relevant: options.relevant
  }
}

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
