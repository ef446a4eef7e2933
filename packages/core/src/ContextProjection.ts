/**
 * `ContextProjection`: the one projection every runtime calls. For each model call it gathers
 * the derived context from the stores (working state, always-on memory, skills index,
 * prior-session digest, recall), composes it under the budget with
 * `ProjectionLayout.composeProjectedContext`, and — when asked — writes one injection-log row.
 * The result travels with the turn; it is never saved into the session.
 *
 * Where each section comes from:
 *
 * - **working state, skills index**: the request (the runtime owns them; they are not memory).
 * - **identity tier**: with the request's `identity` (what `@engram/runtime`'s
 *   `StablePrefix.buildAgent` returns as `identity`), the agent's routing spec's promotion rows in
 *   the scopes the request reads: for every address the stable prefix did not compose — an agent
 *   that declares no user sections, a guarded section whose record awaits review, an entry the
 *   overlay budget spilled — one deliverable record placed there, of the most specific scope
 *   (session over project over global), the newest among equals; the `identityLimit` most
 *   important addresses, in the vocabulary's order (name before hobbies). This is how "who am I?"
 *   is answered whatever the agent declares and however the question is worded; it does not
 *   search.
 * - **always-on memory**: every deliverable record with delivery policy `always` in the request's
 *   scopes, newest first.
 * - **prior-session digest**: session summaries of the request's scopes — `episode` records
 *   tagged with their session (see {@link summaryInput}), only the newest per session. `newest`
 *   takes the newest summaries of other sessions; `relevant` takes only sessions whose newest
 *   summary shares a content word (stopwords aside) with the query, found by the store's keyword
 *   search — no model judges relevance. The request's own session is never a prior session.
 * - **recall**: the store's keyword search for the query over the request's scopes, deliverable
 *   records only, best first; beside each hit written from a conversation, its neighbouring turns
 *   (`neighbourWindow`, read with `MemoryStore.neighbours`), each attributed to its own id and
 *   to the hit it sits beside, shed before stronger hits (`neighbourShed`).
 *
 * A record whose delivery policy is `on_demand` is never projected (nor composed into a prefix):
 * it reaches a model only when the model calls `memory_recall`.
 *
 * Memory reaches the model through exactly two channels: promoted entries in the stable prefix,
 * and this projection. Nothing is delivered twice: ids the prefix composed are withheld, and so is
 * every record (always-on or recalled) at an address the prefix holds or an identity line already
 * delivers — the routing spec is evaluated for them, so a value that lost its address (a
 * duplicate, a record written without promotion, another scope's value) never rides along with the
 * value that won; of records of different scopes at one address, only the most specific scope's
 * is delivered (the others are withheld as `scope-shadowed`).
 *
 * The mode decides what is read at all: an `incognito` projection reads nothing from memory (and
 * its injection row names no memory), an `autonomous` one skips the digest, and a `subagent` one
 * reads nothing, projects nothing and records nothing.
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { ContextProjection, MemoryStore, PromotionStore, TelemetryStore } from "@engram/core"
 *
 * const ProjectionLive = ContextProjection.layer.pipe(
 *   Layer.provide(Layer.mergeAll(MemoryStore.layerMemory, PromotionStore.layerMemory, TelemetryStore.layerMemory))
 * )
 *
 * // This call's own settings, over the layer's defaults: a 128k window.
 * const turn = Effect.flatMap(ContextProjection.ContextProjection, (projection) =>
 *   projection.project({
 *     sessionId: "s-1",
 *     turn: 1,
 *     query: "who am I?",
 *     scopes: ["global"],
 *     mode: "native",
 *     settings: { contextWindowTokens: 128_000 }
 *   })
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { LazyArg } from "effect/Function"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"
import * as internal from "./internal/contextProjection.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import * as Decisions from "./internal/projectionDecisions.js"
import * as MemoryQuery from "./MemoryQuery.js"
import * as MemoryRecord from "./MemoryRecord.js"
import type * as MemoryStore from "./MemoryStore.js"
import type * as MemoryStoreError from "./MemoryStoreError.js"
import * as MemoryWrite from "./MemoryWrite.js"
import * as PriorSessionDigest from "./PriorSessionDigest.js"
import * as ProjectionLayout from "./ProjectionLayout.js"
import type * as PromotionStore from "./PromotionStore.js"
import type * as Routing from "./Routing.js"
import type * as TelemetryStore from "./TelemetryStore.js"

/**
 * Where the identity tier reads from: the agent's routing spec (its promotion rows in `scope`),
 * the routing context of its declared sections (to give always-on and recalled records their
 * address), and the addresses its stable prefix holds — authored or composed entries, whose
 * values win. `StablePrefix.buildAgent` (in `@engram/runtime`) returns it as `identity`.
 *
 * @since 0.1.0
 * @category models
 */
export interface IdentitySource {
  readonly spec: Routing.MemoryRoutingSpec
  readonly scope: MemoryRecord.Scope
  readonly context: Routing.RoutingContext
  readonly heldAddresses: ReadonlyArray<string>
}

/**
 * A projection request: one per turn (and one more when a suspended turn resumes).
 *
 * - `sessionId`, `turn`: where the injection-log row goes; the session is also never its own
 *   prior session.
 * - `query`: the turn's newest operator input; recall and a `relevant` digest match on it.
 * - `scopes`: the memory scopes this agent reads (e.g. `global`, `project:x`, `session:<id>`).
 * - `mode`: the runtime mode (native, external, subagent, autonomous, incognito).
 * - `workingState`, `skills`: supplied by the runtime; trusted, not memory.
 * - `inPrefix`: memory ids the stable prefix already composed; never delivered twice.
 * - `identity`: the agent's routing (see {@link IdentitySource}); without it there is no identity
 *   tier and no address-level deduplication.
 * - `record`: write an injection-log row (default true).
 * - `settings`: this call's budget, window and recall settings over the layer's defaults.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProjectionRequest {
  readonly sessionId: string
  readonly turn: number
  readonly query: string
  readonly scopes: ReadonlyArray<MemoryRecord.Scope>
  readonly mode: ProjectionLayout.ProjectionMode
  readonly workingState?: string
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow>
  readonly inPrefix?: ReadonlyArray<string>
  readonly identity?: IdentitySource | undefined
  readonly record?: boolean
  /**
   * This call's own settings, over the layer's (decision 0182): the agent's, then the request's,
   * as `Agent.planTurn` merges them. Decoded with {@link ProjectionOverrides} when the call runs;
   * a bad value fails the call with `ProjectionFailure` naming the field.
   */
  readonly settings?: ProjectionOverrides | undefined
}

const BudgetTokens = Schema.Int.pipe(
  Schema.greaterThanOrEqualTo(ProjectionLayout.MIN_BUDGET_TOKENS, {
    message: () => `budgetTokens must be an integer of at least ${ProjectionLayout.MIN_BUDGET_TOKENS}`
  })
)

const NeighbourWindow = Schema.Int.pipe(
  Schema.between(0, 10),
  Schema.annotations({ message: () => "neighbourWindow must be an integer from 0 to 10" })
)

const Limit = Schema.Int.pipe(
  Schema.between(1, MemoryQuery.MAX_LIMIT, {
    message: () => `must be an integer from 1 to ${MemoryQuery.MAX_LIMIT}`
  })
)

const DigestLimit = Schema.Int.pipe(Schema.between(0, 100))

const IdentityLimit = Schema.Int.pipe(Schema.between(0, MemoryQuery.MAX_LIMIT))

const RecallPruneShare = Schema.Number.pipe(
  Schema.greaterThan(0),
  Schema.lessThanOrEqualTo(1),
  Schema.annotations({ message: () => "recallPruneShare must be a share above 0 and at most 1" })
)

const RecallRelevance = Schema.Literal("content-words", "search")

/**
 * The cap on recall hits of a projection with an unbounded budget (a bounded one is sized by its
 * budget, decision 0181).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RECALL_LIMIT = 300

/**
 * The default pruning share of the recall search (see `recallPruneShare`).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_RECALL_PRUNE_SHARE = 0.03

/**
 * The default number of identity-tier lines a projection may deliver.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_IDENTITY_LIMIT = 50

/**
 * The default conversation window of recall: how many turns before and after a recall hit are
 * delivered beside it (see `neighbourWindow`). Measured (decision 0090, `npm run bench -- recall
 * --neighbours`): on LoCoMo at default settings the evidence share of `project()` goes from 89.4%
 * without neighbours to 93.7% with 2 turns (92.8% with 1), chosen on the even-numbered
 * conversations and reported on the odd ones, the budget held.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_NEIGHBOUR_WINDOW = 2

/**
 * The default of `neighbourShed`: neighbours are shed before every hit. Measured (decision 0090):
 * shedding each hit's neighbours with it (`with-hit`) keeps more neighbour lines but fewer hits,
 * and delivers less of the evidence (91.9% against 93.7% at window 2 on LoCoMo).
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_NEIGHBOUR_SHED: ProjectionLayout.NeighbourShed = "before-hits"

/**
 * How projections are sized and what they include. Decoded from config at the edge (see
 * {@link decodeSettings}); every field has a default.
 *
 * @since 0.1.0
 * @category models
 */
export const ProjectionSettings = Schema.Struct({
  /** The model's context window in tokens; with `budgetPct` it sets the budget (in tokens). */
  contextWindowTokens: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), {
    default: () => ProjectionLayout.DEFAULT_CONTEXT_WINDOW_TOKENS
  }),
  /**
   * Percent of the window for projected context: a budget in tokens, counted by the
   * `TokenEstimator` in context (default 8, floored at 256 tokens, 0 = unbounded).
   */
  budgetPct: Schema.optional(ProjectionLayout.BudgetPct),
  /**
   * The budget in tokens, from {@link ProjectionLayout.MIN_BUDGET_TOKENS} (256) up; set, it wins
   * over `contextWindowTokens` × `budgetPct` (decision 0182).
   */
  budgetTokens: Schema.optional(BudgetTokens),
  /** Prior-session digest mode (default `newest`). */
  digest: Schema.optional(PriorSessionDigest.DigestMode),
  /** Most prior sessions in the digest (default 3). */
  digestLimit: Schema.optionalWith(DigestLimit, {
    default: () => PriorSessionDigest.DEFAULT_DIGEST_LIMIT
  }),
  /** Most identity-tier lines (default 50; 0 turns the identity tier off). */
  identityLimit: Schema.optionalWith(IdentityLimit, {
    default: () => DEFAULT_IDENTITY_LIMIT
  }),
  /**
   * A cap on recall hits (default: none but `MemoryQuery.MAX_LIMIT`). Recall sizes its search by
   * the measured cost of its lines until the budget is full or relevant candidates run out
   * (decision 0181); shedding then trims what does not fit.
   */
  recallLimit: Schema.optional(Limit),
  /**
   * The search planner's pruning share for the recall search (default 0.03): a token more than
   * this share of the records hold ranks after the others, and still matches. Recall fills the
   * budget, so ranking decides only which hits reach the budget's edge, not which come first;
   * every other planner option is the store's default (`SearchPlan.resolve`). Decision 0040.
   */
  recallPruneShare: Schema.optionalWith(RecallPruneShare, { default: () => DEFAULT_RECALL_PRUNE_SHARE }),
  /**
   * Conversation context (default {@link DEFAULT_NEIGHBOUR_WINDOW}; 0 turns it off): the stored
   * turns up to this many turns before and after each recall hit that has a conversation
   * position, in its scope and thread, are delivered as their own lines beside it — deliverable,
   * screened and of a projected policy like every recalled record, each memory once, counted in
   * the same budget. Read in one `MemoryStore.neighbours` call per projection.
   */
  neighbourWindow: Schema.optionalWith(NeighbourWindow, { default: () => DEFAULT_NEIGHBOUR_WINDOW }),
  /**
   * When neighbours are shed for budget (default {@link DEFAULT_NEIGHBOUR_SHED}): `before-hits`
   * or `with-hit` (`ProjectionLayout.NeighbourShed`).
   */
  neighbourShed: Schema.optionalWith(ProjectionLayout.NeighbourShed, { default: () => DEFAULT_NEIGHBOUR_SHED }),
  /**
   * Which recall hits count as relevant (decision 0180): `content-words` (default) — a hit whose
   * text shares a word with the query beyond function words; `search` — every hit the search
   * returns, for a hybrid store whose similarity floor (`fusion: { minSimilarity }` on its searches)
   * is set above 0, so its vector hits cleared it.
   */
  recallRelevance: Schema.optionalWith(RecallRelevance, { default: () => "content-words" as const }),
  /** Skills rows that are never shed (default `ProjectionLayout.DEFAULT_SKILLS_MIN_ROWS`). */
  skillsMinRows: Schema.optional(Schema.NonNegativeInt),
  /**
   * World time the projection reads as of (decision 0175): every memory tier (identity, always-on,
   * digest, recall, neighbours) delivers the values valid at this instant (`MemoryFilters.asOf`) —
   * a value superseded since is delivered when it held then, one that started later is not.
   * Absent (the default), the values valid now. A `DateTime` or ISO 8601 text.
   */
  asOf: Schema.optional(MemoryRecord.Instant)
})
/** @since 0.1.0 @category models */
export type ProjectionSettings = typeof ProjectionSettings.Type

/**
 * The settings an agent or a single request may set over the layer's defaults: any field of
 * {@link ProjectionSettings} (decisions 0182, 0165) — the budget (`budgetTokens` from 256, or
 * `contextWindowTokens` × `budgetPct`), the recall cap, share and relevance, the conversation
 * window, the digest, the identity and skills rows, the instant it reads as of (`asOf`). Every field is optional and has no default of
 * its own (the one default of each is {@link defaultSettings}); a level that names any budget field
 * replaces the level below's budget whole (`budgetTokens` wins over a window at the same level).
 *
 * @since 0.1.0
 * @category models
 */
export const ProjectionOverrides = Schema.Struct({
  contextWindowTokens: Schema.optional(Schema.Int.pipe(Schema.positive())),
  budgetPct: Schema.optional(ProjectionLayout.BudgetPct),
  budgetTokens: Schema.optional(BudgetTokens),
  digest: Schema.optional(PriorSessionDigest.DigestMode),
  digestLimit: Schema.optional(DigestLimit),
  identityLimit: Schema.optional(IdentityLimit),
  recallLimit: Schema.optional(Limit),
  recallPruneShare: Schema.optional(RecallPruneShare),
  neighbourWindow: Schema.optional(NeighbourWindow),
  neighbourShed: Schema.optional(ProjectionLayout.NeighbourShed),
  recallRelevance: Schema.optional(RecallRelevance),
  skillsMinRows: Schema.optional(Schema.NonNegativeInt),
  asOf: Schema.optional(MemoryRecord.Instant)
}).annotations({ identifier: "ProjectionOverrides" })
/** @since 0.1.0 @category models */
export type ProjectionOverrides = typeof ProjectionOverrides.Type

/**
 * Levels of per-call settings merged in order (the agent's, then the request's): later levels win
 * field by field, and a level that names any budget field (`budgetTokens`, `contextWindowTokens`,
 * `budgetPct`) replaces the budget below it whole. `Agent.planTurn` merges an agent's and a turn's
 * with it. Pure.
 *
 * @since 0.1.0
 * @category budget
 */
export const mergeOverrides: (
  ...levels: ReadonlyArray<ProjectionOverrides | undefined>
) => ProjectionOverrides | undefined = Decisions.mergeOverrides

/**
 * The settings one call runs with: the layer's `base`, then each level of overrides in order (the
 * agent's, then the request's), later levels winning; the budget is replaced whole by a level that
 * names any budget field. Pure.
 *
 * @since 0.1.0
 * @category budget
 */
export const settingsFor: (
  base: ProjectionSettings,
  ...overrides: ReadonlyArray<ProjectionOverrides | undefined>
) => ProjectionSettings = Decisions.settingsFor

/**
 * The settings every field of which is at its default: a 200k-token window at 8% (16,000 tokens),
 * 50 identity lines, the `newest` digest of 3 sessions, recall sized by the budget left (at most 300
 * hits, pruned at 3%).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultSettings: ProjectionSettings = Schema.decodeSync(ProjectionSettings)({})

/**
 * Settings that failed to decode; `problem` names the field.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidProjectionSettings extends ErrorClass.TaggedError<InvalidProjectionSettings>()(
  "InvalidProjectionSettings",
  { problem: Schema.String },
  {
    errorClass: "Misconfigured",
    message: (self) => `invalid projection settings: ${self.problem}`
  }
) {}

const decodeSettingsEither = onFirstCall(() => Schema.decodeUnknownEither(ProjectionSettings))

/**
 * Decodes settings read from configuration (JSON, env), filling in defaults.
 *
 * @since 0.1.0
 * @category constructors
 */
export const decodeSettings = (input: unknown): Either.Either<ProjectionSettings, InvalidProjectionSettings> =>
  Either.mapLeft(
    decodeSettingsEither(input),
    (error) => new InvalidProjectionSettings({ problem: MemoryWrite.describeParseError(error) })
  )

/**
 * The projection budget the settings give: `ProjectionLayout.budgetFromContextWindow` over the
 * window and percentage — a token budget (or unbounded).
 *
 * @since 0.1.0
 * @category budget
 */
export const budgetOf: (settings: ProjectionSettings) => ProjectionLayout.ProjectionBudget = Decisions.budgetOf

/**
 * How many recall hits the budget holds: the lines the budget left after the higher-priority
 * sections (`used`: the `usedTokens` or `usedChars`, in the budget's unit, of working state,
 * always-on memory, skills and digest) holds at {@link RECALL_LINE_TOKENS} tokens or
 * {@link RECALL_LINE_CHARS} chars a line, at most `cap` (`recallLimit`); `cap` when the budget is
 * unbounded; 0 when nothing is left. A projection's `budget` summary fits `used` as is;
 * {@link recallSearchLimit} turns this into the limit of the search.
 *
 * @since 0.1.0
 * @category budget
 */
export const recallLimitFor: (
  budget: ProjectionLayout.ProjectionBudget,
  used: { readonly usedChars: number; readonly usedTokens: number },
  cap: number
) => number = Decisions.recallLimitFor

/**
 * The limit of a projection's recall search, the one place recall is sized: 0 — no search at all
 * — when the mode projects no recall (incognito, subagent) or the query is blank; otherwise
 * {@link recallLimitFor} over what the higher-priority sections use, and at least 1, so a report
 * can still say recall was shed for budget. `used` is read only when recall runs (it costs a
 * composition). Pure.
 *
 * @since 0.1.0
 * @category budget
 */
export const recallSearchLimit: (options: {
  readonly mode: ProjectionLayout.ProjectionMode
  readonly query: string
  readonly budget: ProjectionLayout.ProjectionBudget
  readonly used: LazyArg<{ readonly usedChars: number; readonly usedTokens: number }>
  readonly cap: number
}) => number = Decisions.recallSearchLimit

/**
 * The tokens one recall line is assumed to take when sizing the recall search under a token
 * budget.
 *
 * @since 0.1.0
 * @category constants
 */
export const RECALL_LINE_TOKENS: number = Decisions.RECALL_LINE_TOKENS

/**
 * The chars one recall line is assumed to take when sizing the recall search under a char budget.
 *
 * @since 0.1.0
 * @category constants
 */
export const RECALL_LINE_CHARS: number = Decisions.RECALL_LINE_CHARS

/**
 * The kind a session summary is stored as.
 *
 * @since 0.1.0
 * @category digest
 */
export const SUMMARY_KIND: MemoryRecord.MemoryKind = Decisions.SUMMARY_KIND

/**
 * The memory write that stores `summary` as the summary of session `sessionId` — an `episode`
 * record tagged `session:<sessionId>` in `fields.scope` (default `global`): the scope the
 * session's agent works in, so that later turns of *other* sessions reading that scope find it for
 * their prior-session digest, and sessions of other scopes never do. Write it with
 * `MemoryStore.write` when a session ends (or whenever its summary is updated; only the newest
 * summary of a session is ever used). Session ids of at most 56 characters fit the tag.
 *
 * @since 0.1.0
 * @category digest
 */
export const summaryInput = (
  sessionId: string,
  summary: string,
  fields: Partial<Omit<MemoryRecord.MemoryWriteInput, "content" | "kind">> = {}
): MemoryRecord.MemoryWriteInput => ({
  sourceType: "conversation",
  scope: "global",
  ...fields,
  tags: [...(fields.tags ?? []), PriorSessionDigest.sessionTag(sessionId)],
  content: summary,
  kind: SUMMARY_KIND
})

/**
 * The delivery policies a projection delivers: `always` and `retrieved`. An `on_demand` record
 * reaches a model only through `memory_recall`.
 *
 * @since 0.1.0
 * @category constants
 */
export const PROJECTED_POLICIES: ReadonlyArray<MemoryRecord.DeliveryPolicy> = Decisions.PROJECTED_POLICIES

/**
 * The recalled hits a projection may deliver: every hit but session summaries (records that
 * `PriorSessionDigest.fromRecord` reads as one), in their order. A summary reaches a prompt
 * through the digest alone, whose rules — other sessions only, the newest summary of each, none on
 * autonomous turns — recall would bypass. Pure.
 *
 * @since 0.1.0
 * @category recall
 */
export const withoutSummaries: <A extends { readonly record: MemoryRecord.MemoryRecord }>(
  hits: ReadonlyArray<A>
) => ReadonlyArray<A> = Decisions.withoutSummaries

/**
 * The address routing gives each record under an identity source, by record id: the placement
 * key the source's spec evaluates for it (placed in a declared section or not), whatever its
 * scope. A record the spec declines, or one a broken spec cannot place, has none; the composer
 * then withholds it by id alone. With these, a memory at an address the prefix holds or an
 * identity line delivers is not delivered beside it, and of two records of different scopes at
 * one address only the more specific scope's is (decision 0056). Pure.
 *
 * @since 0.1.0
 * @category deduplication
 */
export const addressesOf: (
  source: IdentitySource,
  records: Iterable<MemoryRecord.MemoryRecord>
) => Readonly<Record<string, string>> = Decisions.addressesOf

/**
 * The addresses a read scope more specific than `source.scope` holds with a record the projection
 * would deliver there — the identity tier's holder (deliverable, screened, not `on_demand`; most
 * specific scope, then newest) or an always-on record the spec routes there — each with the id of
 * the record holding it. `StablePrefix.buildAgent` declines its own entry at each of these
 * addresses (`scope-overridden`), so the prompt shows one value per slot and it is the most
 * specific scope's: session over project over global (decision 0075). Reads nothing when no read
 * scope is narrower than the agent's own.
 *
 * @since 0.1.0
 * @category identity
 */
export const scopeOverrides: (
  source: Pick<IdentitySource, "spec" | "scope" | "context">,
  scopes: ReadonlyArray<MemoryRecord.Scope>
) => Effect.Effect<
  ReadonlyMap<string, string>,
  MemoryStoreError.MemoryStoreFailure | PromotionStore.PromotionStoreFailure,
  MemoryStore.MemoryStore | PromotionStore.PromotionStore
> = internal.scopeOverrides

/**
 * The projection failed: the request was invalid, a store could not be read, or the injection row
 * could not be written.
 *
 * @since 0.1.0
 * @category errors
 */
export const ProjectionFailure = internal.ProjectionFailure
/** @since 0.1.0 @category errors */
export type ProjectionFailure = internal.ProjectionFailure

/**
 * The projection service.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly project: (request: ProjectionRequest) => Effect.Effect<ProjectionLayout.ProjectedContext, ProjectionFailure>
}

/**
 * The projection service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class ContextProjection extends Context.Tag("@engram/core/ContextProjection")<
  ContextProjection,
  Service
>() {}

/**
 * The stores a projection reads (and writes its injection-log row to).
 *
 * @since 0.1.0
 * @category models
 */
export type Stores = MemoryStore.MemoryStore | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore

/**
 * Builds the projection over the `MemoryStore`, `PromotionStore` and `TelemetryStore` in context,
 * with `defaults` (fields left out are {@link defaultSettings}'): the process-wide defaults each
 * call's own `settings` (the agent's, then the request's) are resolved over, per call. An agent's
 * budget belongs on the agent (`Agent.projection`, an agent config's `projection`), not here.
 * Tokens — the budget the projection is held to, and the reported figures — are counted by the
 * `TokenEstimator` in context when `project` runs (o200k_base by default, its tables loaded by the
 * first projection; decision 0070), the turn's time comes from `Clock`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { ContextProjection } from "@engram/core"
 *
 * // Every agent of this process without a window of its own gets 128k.
 * const ProjectionLive = Layer.effect(
 *   ContextProjection.ContextProjection,
 *   ContextProjection.make({ contextWindowTokens: 128_000 })
 * )
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  defaults: Partial<ProjectionSettings> = {}
): Effect.Effect<Service, never, Stores> =>
  internal.make({ ...defaultSettings, ...defaults }, { decodeOverrides, unboundedRecallLimit: DEFAULT_RECALL_LIMIT })

const decodeOverridesEither = onFirstCall(() => Schema.decodeUnknownEither(ProjectionOverrides))
const decodeOverrides = (input: unknown): Either.Either<ProjectionOverrides, string> =>
  Either.mapLeft(decodeOverridesEither(input), MemoryWrite.describeParseError)

/**
 * The projection with {@link defaultSettings}: each call's `settings` (an agent's, a request's)
 * apply over them. Other process-wide defaults: `Layer.effect(ContextProjection, make(defaults))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<ContextProjection, never, Stores> = Layer.effect(
  ContextProjection,
  make()
)
