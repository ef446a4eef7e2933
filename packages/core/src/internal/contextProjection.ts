/**
 * The body of `ContextProjection`: what each section reads from the stores, and the one call to
 * the pure composer.
 */
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type {
  IdentitySource,
  ProjectionOverrides,
  ProjectionRequest,
  ProjectionSettings,
  Service as ContextProjectionService,
  Stores
} from "../ContextProjection.js"
import * as ErrorClass from "../ErrorClass.js"
import * as InjectionLog from "../InjectionLog.js"
import * as Instrumentation from "../Instrumentation.js"
import * as MemoryGate from "../MemoryGate.js"
import * as MemoryLimits from "../MemoryLimits.js"
import * as MemoryQuery from "../MemoryQuery.js"
import * as MemoryRecord from "../MemoryRecord.js"
import * as MemoryStore from "../MemoryStore.js"
import * as PriorSessionDigest from "../PriorSessionDigest.js"
import * as ProjectionLayout from "../ProjectionLayout.js"
import * as PromotionStore from "../PromotionStore.js"
import * as Routing from "../Routing.js"
import * as SearchTokenizer from "../SearchTokenizer.js"
import * as SessionStore from "../SessionStore.js"
import * as TelemetryStore from "../TelemetryStore.js"
import * as TokenEstimator from "../TokenEstimator.js"
import * as NeighbourContext from "./neighbourContext.js"
import * as Decisions from "./projectionDecisions.js"

export class ProjectionFailure extends ErrorClass.TaggedError<ProjectionFailure>()("ProjectionFailure", {
  sessionId: Schema.String,
  turn: Schema.Number,
  cause: Schema.Defect
}, {
  // The class of what failed underneath (a store's failure); a request the projection refused is invalid input.
  errorClass: (self) => ErrorClass.fromUnknown(self.cause) ?? "InvalidInput",
  message: (self) =>
    `projecting context for session ${self.sessionId}, turn ${self.turn} failed: ${
      self.cause instanceof Error ? self.cause.message : String(self.cause)
    }`
}) {}

/** Records per page when reading every always-on record. */
const PAGE = 500
/** Summaries read first when looking for the newest prior sessions (then four times as many, and so on). */
const DIGEST_PAGE = 32
/** Summaries read at most for a digest (so a session writing many summaries cannot stall a turn). */
const DIGEST_SCAN_MAX = 1_000
/**
 * The search token every session tag (`session:<id>`) is indexed under: its first token, as the
 * shared tokenizer splits it. Found on use, not at load: tokenizing loads the stemmers.
 */
const sessionToken = (): string =>
  SearchTokenizer.tokenize(PriorSessionDigest.sessionTag("s" as SessionStore.SessionId))[0]!
/** The scope prefix of a session's own scope, whose records summarise that session. */
const SESSION_SCOPE_PREFIX = "session:"
/** Search hits read for a `relevant` digest. */
const DIGEST_SEARCH_LIMIT = 100

interface Read<A> {
  readonly value: A
  readonly skipped: number
}

/**
 * False for a record the gate holds (`MemoryGate.isHeld`: the poisoning screen flags it and no
 * operator confirmed it): it reaches no tier of the projection — always-on, identity, the digest,
 * recall and its neighbours — as no overlay section composes it. The verdict is remembered per text.
 */
const screened = (record: MemoryRecord.MemoryRecord): boolean => !MemoryGate.isHeld(record)

/** The filters of a read as of `asOf` (decision 0175): none when it reads now. */
const asOfFilter = (asOf: DateTime.Utc | undefined): { readonly asOf?: DateTime.Utc } =>
  asOf === undefined ? {} : { asOf }

/**
 * Whether a record a promotion row names is delivered: deliverable now, or — as of `asOf` — the
 * filters a search as of then applies (`MemoryQuery.matchesFilters`), its successor's `validFrom`
 * looked up in `successors`.
 */
const deliveredAt = (
  record: MemoryRecord.MemoryRecord,
  now: DateTime.Utc,
  asOf: DateTime.Utc | undefined,
  successors: ReadonlyMap<string, MemoryRecord.MemoryRecord>
): boolean =>
  asOf === undefined
    ? MemoryQuery.isDeliverable(record, now)
    : MemoryQuery.matchesFilters(record, { deliverable: true, asOf }, now, (id) => successors.get(id)?.validFrom)

/** Every deliverable always-on record in the scopes, newest first (the flagged unconfirmed left out). */
const readAlwaysOnFrom = (
  memories: MemoryStore.Service,
  scopes: ReadonlyArray<MemoryRecord.Scope>,
  asOf?: DateTime.Utc | undefined
) =>
  Effect.gen(function*() {
    const records: Array<MemoryRecord.MemoryRecord> = []
    let skipped = 0
    let cursor: string | undefined
    do {
      const page = yield* memories.list({
        scopes,
        deliveryPolicies: ["always"],
        deliverable: true,
        ...asOfFilter(asOf),
        limit: PAGE,
        ...(cursor !== undefined ? { cursor } : {})
      })
      records.push(...page.records.filter(screened))
      skipped += page.skipped
      cursor = page.nextCursor
    } while (cursor !== undefined)
    return { value: records, skipped } satisfies Read<ReadonlyArray<MemoryRecord.MemoryRecord>>
  })

/**
 * Per address of the spec's promotion rows in `scopes` that is not `held` and whose record is not
 * `inPrefix`, the deliverable, screened record of the most specific scope, the newest among
 * equals; the `limit` most important addresses (the vocabulary's order, then newest), most
 * important first — so budget shedding, last line first, sheds the least important (decision 0056).
 */
const identityHoldersFrom = (
  stores: { readonly memories: MemoryStore.Service; readonly promotions: PromotionStore.Service },
  spec: Routing.MemoryRoutingSpec,
  scopes: ReadonlyArray<MemoryRecord.Scope>,
  options: {
    readonly held: ReadonlySet<string>
    readonly inPrefix: ReadonlySet<string>
    readonly now: DateTime.Utc
    readonly asOf?: DateTime.Utc | undefined
    readonly limit: number
  }
) =>
  Effect.gen(function*() {
    const addressById = new Map<string, { readonly placementKey: string; readonly importance: number }>()
    let skipped = 0
    for (const scope of new Set(scopes)) {
      const rows = yield* stores.promotions.listByScope(scope, { specKey: spec.key })
      skipped += rows.skipped
      for (const row of rows.rows) {
        if (
          row.placementKey !== null && row.placement !== null && !options.held.has(row.placementKey) &&
          !options.inPrefix.has(row.recordId)
        ) {
          const importance = Routing.importanceOf(spec, row.placement)
          addressById.set(row.recordId, { placementKey: row.placementKey, importance })
        }
      }
    }
    if (addressById.size === 0) {
      return { value: [], skipped } satisfies Read<ReadonlyArray<ProjectionLayout.IdentityEntry>>
    }
    const records = yield* stores.memories.get([...addressById.keys()])
    // As of a time, a superseded holder held until its successor's validFrom: read the successors.
    const successorIds = options.asOf === undefined ? [] : records.records.flatMap((r) => r.supersededBy ?? [])
    const successors = new Map(
      successorIds.length === 0
        ? []
        : (yield* stores.memories.get(successorIds)).records.map((record) => [record.id, record] as const)
    )
    const readScopes = new Set(scopes)
    const holders = new Map<string, { readonly record: MemoryRecord.MemoryRecord; readonly importance: number }>()
    const beats = (a: MemoryRecord.MemoryRecord, b: MemoryRecord.MemoryRecord) => {
      const specific = MemoryRecord.scopeSpecificity(a.scope) - MemoryRecord.scopeSpecificity(b.scope)
      return specific !== 0 ? specific > 0 : MemoryQuery.compareListOrder(a, b) < 0
    }
    for (const record of records.records) {
      if (
        !readScopes.has(record.scope) || !deliveredAt(record, options.now, options.asOf, successors) ||
        !screened(record)
      ) {
        continue
      }
      const { importance, placementKey } = addressById.get(record.id)!
      const holder = holders.get(placementKey)
      if (holder === undefined || beats(record, holder.record)) holders.set(placementKey, { record, importance })
    }
    const value = [...holders.entries()]
      .sort(([, a], [, b]) =>
        (a.importance === b.importance ? 0 : a.importance < b.importance ? -1 : 1) ||
        MemoryQuery.compareListOrder(a.record, b.record)
      )
      .slice(0, options.limit)
      .map(([placementKey, { record }]) => ({ record, placementKey }))
    return { value, skipped: skipped + records.skipped } satisfies Read<
      ReadonlyArray<ProjectionLayout.IdentityEntry>
    >
  })

/**
 * The addresses that a read scope more specific than the agent's own holds with a record the
 * projection would deliver (an identity holder there, or an always-on record routed there), each
 * with the record holding it — most specific scope, then newest. The stable prefix withholds its
 * entry at such an address, so the prompt shows the narrower scope's value (decision 0075).
 */
export const scopeOverrides = (
  source: Pick<IdentitySource, "spec" | "scope" | "context">,
  scopes: ReadonlyArray<MemoryRecord.Scope>
) =>
  Effect.gen(function*() {
    const own = MemoryRecord.scopeSpecificity(source.scope)
    const narrower = [...new Set(scopes)].filter((scope) => MemoryRecord.scopeSpecificity(scope) > own)
    const overrides = new Map<string, string>()
    if (narrower.length === 0) return overrides
    const memories = yield* MemoryStore.MemoryStore
    const promotions = yield* PromotionStore.PromotionStore
    const now = yield* DateTime.now
    const identity = yield* identityHoldersFrom({ memories, promotions }, source.spec, narrower, {
      held: new Set(),
      inPrefix: new Set(),
      now,
      limit: Number.POSITIVE_INFINITY
    })
    // The query is built here from read scopes and no cursor of the caller's: a refusal is a defect.
    const alwaysOn = yield* readAlwaysOnFrom(memories, narrower).pipe(
      Effect.catchTags({ InvalidMemoryQuery: Effect.die, InvalidCursor: Effect.die })
    )
    const addressed = Decisions.addressesOf({ ...source, heldAddresses: [] }, alwaysOn.value)
    const candidates: Array<{ readonly record: MemoryRecord.MemoryRecord; readonly placementKey: string }> = [
      ...identity.value.filter((entry) => entry.record.deliveryPolicy !== "on_demand"),
      ...alwaysOn.value.flatMap((record) =>
        addressed[record.id] === undefined ? [] : [{ record, placementKey: addressed[record.id]! }]
      )
    ]
    const holders = new Map<string, MemoryRecord.MemoryRecord>()
    for (const { placementKey, record } of candidates) {
      const holder = holders.get(placementKey)
      const specific = holder === undefined
        ? 1
        : MemoryRecord.scopeSpecificity(record.scope) - MemoryRecord.scopeSpecificity(holder.scope)
      if (specific > 0 || (specific === 0 && MemoryQuery.compareListOrder(record, holder!) < 0)) {
        holders.set(placementKey, record)
      }
    }
    for (const [placementKey, record] of holders) overrides.set(placementKey, record.id)
    return overrides as ReadonlyMap<string, string>
  })

/** What the public module gives the body: its decoder of per-call settings and the unbounded recall cap. */
export interface Given {
  readonly decodeOverrides: (input: unknown) => Either.Either<ProjectionOverrides, string>
  readonly unboundedRecallLimit: number
}

/** The stores a projection reads, and the one it logs its injection row to. */
export interface ProjectionStores {
  readonly memories: MemoryStore.Service
  readonly promotions: PromotionStore.Service
  readonly telemetry: TelemetryStore.Service
}

// ---------------------------------------------------------------------------------------------
// The steps of one projection, in the order `make`'s `project` runs them (0161 (d)).
// ---------------------------------------------------------------------------------------------

/**
 * This call's settings: the layer's defaults, then the request's own (the agent's merged with the
 * call's by `Agent.planTurn`), decoded first (decisions 0182, 0165). A problem names the field.
 */
export const resolveSettings = (
  defaults: ProjectionSettings,
  request: Pick<ProjectionRequest, "settings">,
  decodeOverrides: Given["decodeOverrides"]
): Either.Either<ProjectionSettings, string> => {
  if (request.settings === undefined) return Either.right(defaults)
  return Either.match(decodeOverrides(request.settings), {
    onLeft: (problem) => Either.left(`invalid projection settings: ${problem}`),
    onRight: (overrides) => Either.right(Decisions.settingsFor(defaults, overrides))
  })
}

/** A request the projection refuses before reading anything: a bad session id or turn number. */
export const validateRequest = (
  request: Pick<ProjectionRequest, "sessionId" | "turn">
): Either.Either<void, string> => {
  const invalid = SessionStore.validateSessionId(request.sessionId)
  if (Either.isLeft(invalid)) return Either.left(invalid.left)
  if (!Number.isInteger(request.turn) || request.turn < 0) {
    return Either.left(`turn must be a non-negative integer, got ${request.turn}`)
  }
  return Either.right(undefined)
}

/** The identity tier: {@link identityHoldersFrom} over the scopes read, the agent's own among them. */
export const readIdentity = (
  stores: ProjectionStores,
  settings: ProjectionSettings,
  source: IdentitySource,
  scopes: ReadonlyArray<MemoryRecord.Scope>,
  inPrefix: ReadonlySet<string>,
  now: DateTime.Utc
) =>
  identityHoldersFrom(
    stores,
    source.spec,
    scopes.includes(source.scope) ? scopes : [source.scope, ...scopes],
    { held: new Set(source.heldAddresses), inPrefix, now, asOf: settings.asOf, limit: settings.identityLimit }
  )

/** Every deliverable, screened always-on record of the scopes, newest first (as of `asOf` when given). */
export const readAlwaysOn = (
  stores: ProjectionStores,
  scopes: ReadonlyArray<MemoryRecord.Scope>,
  asOf?: DateTime.Utc | undefined
) => readAlwaysOnFrom(stores.memories, scopes, asOf)

/**
 * Candidate prior sessions: summaries in the request's scopes of sessions other than the
 * current one, newest first. A summary carries its session tag `session:<id>`, which the
 * search index holds as the token "session"; a newest-first search for that token reads only
 * records holding it (decision 0036), rather than every episode of the scopes. Summaries that
 * name their session by scope alone (`session:<id>`, no tag) are listed from those scopes.
 * `relevant` first finds sessions by the store's search for the query's content words, then
 * reads those sessions' newest summaries, which `selectDigest` keeps or drops on their own words.
 */
export const readDigest = (
  stores: ProjectionStores,
  settings: ProjectionSettings,
  request: Pick<ProjectionRequest, "sessionId" | "scopes" | "query">
) =>
  Effect.gen(function*() {
    const { memories } = stores
    const sessionId = request.sessionId as SessionStore.SessionId
    const digestMode = settings.digest ?? PriorSessionDigest.DEFAULT_DIGEST_MODE
    const summaries = {
      kinds: [Decisions.SUMMARY_KIND],
      scopes: request.scopes,
      deliverable: true,
      ...asOfFilter(settings.asOf)
    } as const
    let skipped = 0
    /**
     * The summaries of other sessions, newest first, until `enough` holds for the sessions
     * found: a search for the session token with a growing limit (bounded by the scan
     * limit), then the session scopes' own records.
     */
    const newestSummaries = (wanted: ReadonlySet<string> | undefined, enough: (sessions: number) => boolean) =>
      Effect.gen(function*() {
        const candidates: Array<PriorSessionDigest.PriorSession> = []
        const sessions = new Set<string>()
        const admit = (record: MemoryRecord.MemoryRecord) => {
          // A held summary is no summary: it reaches the digest no more than any other tier.
          if (!screened(record)) return
          const session = PriorSessionDigest.fromRecord(record)
          if (Option.isNone(session) || session.value.sessionId === sessionId) return
          if (wanted !== undefined && !wanted.has(session.value.sessionId)) return
          candidates.push(session.value)
          sessions.add(session.value.sessionId)
        }
        for (let limit = DIGEST_PAGE;; limit = Math.min(DIGEST_SCAN_MAX, limit * 4)) {
          candidates.length = 0
          sessions.clear()
          const found = yield* memories.search(sessionToken(), {
            ...summaries,
            limit,
            order: "newest"
          })
          skipped += found.skipped
          for (const hit of found.hits) admit(hit.record)
          if (enough(sessions.size) || found.hits.length < limit || limit >= DIGEST_SCAN_MAX) break
        }
        const sessionScopes = request.scopes.filter((scope) =>
          scope.startsWith(SESSION_SCOPE_PREFIX) && scope !== `${SESSION_SCOPE_PREFIX}${sessionId}`
        )
        if (sessionScopes.length > 0 && !enough(sessions.size)) {
          let cursor: string | undefined
          let scanned = 0
          do {
            const page = yield* memories.list({
              ...summaries,
              scopes: sessionScopes,
              limit: DIGEST_PAGE,
              ...(cursor !== undefined ? { cursor } : {})
            })
            skipped += page.skipped
            scanned += page.records.length
            for (const record of page.records) admit(record)
            cursor = page.nextCursor
          } while (cursor !== undefined && !enough(sessions.size) && scanned < DIGEST_SCAN_MAX)
        }
        return candidates
      })
    let candidates: ReadonlyArray<PriorSessionDigest.PriorSession> = []
    const words = PriorSessionDigest.contentTokens(request.query)
    if (settings.digestLimit > 0 && digestMode === "relevant" && words.length > 0) {
      // The operator's whole message gives the words: clamp them to the store's limit rather than fail the turn.
      const query = MemoryLimits.clampQuery(words.join(" "), yield* MemoryLimits.MemoryLimits)
      const found = yield* memories.search(query, { ...summaries, limit: DIGEST_SEARCH_LIMIT })
      skipped += found.skipped
      const matched = new Set<string>()
      for (const hit of found.hits) {
        if (!screened(hit.record)) continue
        const session = PriorSessionDigest.fromRecord(hit.record)
        if (Option.isSome(session) && session.value.sessionId !== sessionId) matched.add(session.value.sessionId)
      }
      if (matched.size > 0) candidates = yield* newestSummaries(matched, (sessions) => sessions >= matched.size)
    } else if (settings.digestLimit > 0 && digestMode === "newest") {
      candidates = yield* newestSummaries(undefined, (sessions) => sessions >= settings.digestLimit)
    }
    const entries = PriorSessionDigest.selectDigest(candidates, {
      mode: digestMode,
      currentSessionId: sessionId,
      query: request.query,
      limit: settings.digestLimit
    })
    return { value: entries, skipped } satisfies Read<ReadonlyArray<PriorSessionDigest.DigestEntry>>
  })

/**
 * One recall search of `limit` hits (none at 0), with this call's pruning share as the search's own
 * planner tuning (decision 0165). Every hit the store returned, held ones included: a round takes
 * its share with {@link recallOf}.
 */
export const searchRecall = (
  stores: ProjectionStores,
  settings: ProjectionSettings,
  request: Pick<ProjectionRequest, "query" | "scopes">,
  limit: number
) =>
  limit === 0
    ? Effect.succeed<MemoryStore.SearchResult>({ hits: [], skipped: 0 })
    : Effect.flatMap(
      MemoryLimits.MemoryLimits,
      (limits) =>
        stores.memories.search(MemoryLimits.clampQuery(request.query, limits), {
          scopes: request.scopes,
          deliveryPolicies: Decisions.PROJECTED_POLICIES,
          deliverable: true,
          ...asOfFilter(settings.asOf),
          limit,
          plan: { maxDocumentShare: settings.recallPruneShare }
        })
    )

/**
 * The recall search of {@link searchRecall} read in pages, when the memory store reads searches
 * so (`MemoryStore.pagesOf`, decision 0226): each take is what {@link searchRecall} of its limit
 * returns.
 */
export const recallPages = (
  stores: ProjectionStores,
  settings: ProjectionSettings,
  request: Pick<ProjectionRequest, "query" | "scopes">
): Effect.Effect<MemoryStore.SearchPages | undefined> => {
  const paged = MemoryStore.pagesOf(stores.memories)
  return paged === undefined ? Effect.succeed(undefined) : Effect.map(
    MemoryLimits.MemoryLimits,
    (limits) =>
      paged(MemoryLimits.clampQuery(request.query, limits), {
        scopes: request.scopes,
        deliveryPolicies: Decisions.PROJECTED_POLICIES,
        deliverable: true,
        ...asOfFilter(settings.asOf),
        plan: { maxDocumentShare: settings.recallPruneShare }
      })
  )
}

/**
 * A round's recall of `limit` hits out of a search that asked for at least `limit`: its first
 * `limit` hits that `shown` keeps (by default {@link screened}: held records left out). A limit keeps the
 * top of the ranking a search would return without one (the conformance kit's ranking tier), so
 * these are the hits a search of `limit` returns, and a round needs no search of its own while the
 * hits in hand cover it (decision 0200). `returned` counts what that search would have returned.
 */
export const recallOf = (
  found: MemoryStore.SearchResult,
  limit: number,
  shown: (record: MemoryRecord.MemoryRecord) => boolean = screened
) => {
  const hits = found.hits.length > limit ? found.hits.slice(0, limit) : found.hits
  return { value: hits.filter((hit) => shown(hit.record)), returned: hits.length }
}

/** `verdict` remembered per record object: a projection's rounds ask again about the hits in hand. */
const remembered = (
  verdict: (record: MemoryRecord.MemoryRecord) => boolean
): (record: MemoryRecord.MemoryRecord) => boolean => {
  const verdicts = new WeakMap<MemoryRecord.MemoryRecord, boolean>()
  return (record) => {
    let known = verdicts.get(record)
    if (known === undefined) verdicts.set(record, known = verdict(record))
    return known
  }
}

/**
 * The conversation neighbours of the hits: one `neighbours` read around them (one per
 * `maxNeighbourPositions` hits), filtered like recall, attributed to the strongest hit near
 * each (decision 0090) by the places the store gives — a written position, or an episode's place
 * in its scope's write order (decision 0233). The hits are in hand already, so the read leaves
 * them out: close hits are most of what their windows hold.
 */
export const readNeighbours = (
  stores: ProjectionStores,
  settings: ProjectionSettings,
  request: Pick<ProjectionRequest, "scopes">,
  hits: ReadonlyArray<ProjectionLayout.RecallHit>
) =>
  Effect.gen(function*() {
    const window = settings.neighbourWindow
    // A hit with neither a position nor a place in the write order has no neighbours to read.
    const placed = hits.filter(({ record }) => record.position !== undefined || MemoryQuery.takesWriteOrder(record))
    if (window === 0 || placed.length === 0) return { value: [], skipped: 0 }
    const limits = yield* MemoryLimits.MemoryLimits
    const chunk = Math.max(1, Math.min(limits.maxNeighbourPositions, limits.maxNeighbourExcluded))
    const records: Array<MemoryRecord.MemoryRecord> = []
    const places: Array<MemoryQuery.Place> = []
    let skipped = 0
    for (let start = 0; start < placed.length; start += chunk) {
      const part = placed.slice(start, start + chunk)
      const read = yield* stores.memories.neighbours({
        positions: [],
        around: part.map(({ record }) => record.id),
        exclude: part.map(({ record }) => record.id),
        window: Math.min(window, limits.maxNeighbourWindow),
        scopes: request.scopes,
        deliveryPolicies: Decisions.PROJECTED_POLICIES,
        deliverable: true,
        ...asOfFilter(settings.asOf),
        limit: Math.min(MemoryQuery.MAX_LIMIT, part.length * (2 * window + 1))
      })
      records.push(...read.records)
      places.push(...read.places)
      skipped += read.skipped
    }
    const eligible = Decisions.withoutSummaries(
      records.filter(screened).map((record) => ({ record }))
    ).map(({ record }) => record)
    return { value: NeighbourContext.assignNeighbours(hits, eligible, places, window), skipped }
  })

/**
 * How recall is sized before its first search: `cap`, the most hits it may ever ask for (the
 * settings' `recallLimit`; else `unboundedRecallLimit` under an unbounded budget, or
 * `MemoryQuery.MAX_LIMIT`), and the first search's limit — 0 when the query holds no content word
 * and the search is not trusted (decision 0180), else what the budget left after the other sections
 * holds at an assumed line cost (decision 0181). `used` is read only when recall may run.
 */
export const recallLimitFor = (options: {
  readonly settings: ProjectionSettings
  readonly mode: ProjectionLayout.ProjectionMode
  readonly query: string
  readonly budget: ProjectionLayout.ProjectionBudget
  readonly unboundedRecallLimit: number
  readonly used: () => { readonly usedChars: number; readonly usedTokens: number }
}): { readonly cap: number; readonly limit: number; readonly searchable: boolean } => {
  const { budget, settings } = options
  const searchable = settings.recallRelevance === "search" || Decisions.hasContentWords(options.query)
  const cap = settings.recallLimit ??
    (budget._tag === "Unbounded" ? options.unboundedRecallLimit : MemoryQuery.MAX_LIMIT)
  const limit = searchable
    ? Decisions.recallSearchLimit({ mode: options.mode, query: options.query, budget, used: options.used, cap })
    : 0
  return { cap, limit, searchable }
}

/**
 * The layout of one round: every other memory gets the address routing gives it (so one held by
 * the prefix or an identity line is not delivered beside it), then the pure composer places,
 * budgets and sheds.
 */
export const layout = (
  request: Pick<ProjectionRequest, "identity">,
  settings: ProjectionSettings,
  inputs: ProjectionLayout.ProjectionInput,
  options: ProjectionLayout.ProjectionConfig,
  read: {
    readonly alwaysOn: ReadonlyArray<MemoryRecord.MemoryRecord>
    readonly recalled: ReadonlyArray<ProjectionLayout.RecallHit>
    readonly neighbours: ReadonlyArray<ProjectionLayout.NeighbourEntry>
  }
): ProjectionLayout.ProjectedContext => {
  const addresses = request.identity === undefined
    ? undefined
    : Decisions.addressesOf(request.identity, [
      ...read.alwaysOn,
      ...read.recalled.map((hit) => hit.record),
      ...read.neighbours.map((n) => n.record)
    ])
  return ProjectionLayout.composeProjectedContext(
    {
      ...inputs,
      recall: read.recalled,
      ...(read.neighbours.length > 0 ? { neighbours: read.neighbours } : {}),
      ...(addresses !== undefined ? { addresses } : {})
    },
    { ...options, neighbourShed: settings.neighbourShed }
  )
}

/**
 * The injection-log row of a projection: none for a subagent (it has no projection) or when the
 * request says `record: false`; an incognito row names sections only (its projection holds no
 * memory).
 */
export const logInjection = (
  stores: ProjectionStores,
  request: Pick<ProjectionRequest, "sessionId" | "turn" | "mode" | "record">,
  projection: ProjectionLayout.ProjectedContext,
  at: DateTime.Utc
) =>
  request.record !== false && request.mode !== "subagent"
    ? stores.telemetry.appendInjection(
      InjectionLog.fromProjection(projection, { sessionId: request.sessionId, turn: request.turn, at })
    )
    : Effect.void

/**
 * What a projection tells the operator besides its value, once its row is logged: a warning for
 * stored rows that failed to decode, one per budget warning, the projection's metrics and its
 * span's attributes.
 */
export const report = (
  request: Pick<ProjectionRequest, "sessionId" | "turn">,
  projection: ProjectionLayout.ProjectedContext,
  skipped: number
) =>
  Effect.gen(function*() {
    const { sessionId, turn } = request
    if (skipped > 0) {
      yield* Effect.logWarning("projection skipped stored memory rows that failed to decode").pipe(
        Effect.annotateLogs({ sessionId, turn, skipped })
      )
    }
    for (const warning of projection.budget.warnings) {
      yield* Effect.logWarning(warning.message).pipe(Effect.annotateLogs({ sessionId, turn, code: warning.code }))
    }
    yield* Instrumentation.recordProjection(projection)
    yield* Effect.annotateCurrentSpan({
      usedChars: projection.budget.usedChars,
      usedTokens: projection.budget.usedTokens,
      budgetChars: projection.budget.budgetChars ?? -1,
      budgetTokens: projection.budget.budgetTokens ?? -1,
      memories: projection.injection.memoryIds.length,
      shed: projection.budget.shed.length
    })
  })

// ---------------------------------------------------------------------------------------------
// The service: the steps wired
// ---------------------------------------------------------------------------------------------

export const make = (
  defaults: ProjectionSettings,
  given: Given
): Effect.Effect<ContextProjectionService, never, Stores> =>
  Effect.gen(function*() {
    const stores: ProjectionStores = {
      memories: yield* MemoryStore.MemoryStore,
      promotions: yield* PromotionStore.PromotionStore,
      telemetry: yield* TelemetryStore.TelemetryStore
    }
    const reach = Decisions.recallReach()

    const project = (request: ProjectionRequest) => {
      const failure = (cause: unknown) =>
        new ProjectionFailure({ sessionId: request.sessionId, turn: request.turn, cause })
      const refuse = (problem: string) => Effect.fail(failure(new Error(problem)))
      return Effect.gen(function*() {
        const valid = validateRequest(request)
        if (Either.isLeft(valid)) return yield* refuse(valid.left)
        const resolved = resolveSettings(defaults, request, given.decodeOverrides)
        if (Either.isLeft(resolved)) return yield* refuse(resolved.left)
        const settings = resolved.right
        const budget = Decisions.budgetOf(settings)
        const estimator = yield* TokenEstimator.resolve
        const now = yield* DateTime.now
        const sections = new Set(ProjectionLayout.sectionsFor(request.mode))
        const none = { value: [], skipped: 0 }

        // Only what the mode composes is read: incognito and subagent projections never touch memory.
        const inPrefix = new Set(request.inPrefix ?? [])
        const identity = sections.has("identity_memory") && request.identity !== undefined && settings.identityLimit > 0
          ? yield* readIdentity(stores, settings, request.identity, request.scopes, inPrefix, now)
          : none
        const alwaysOn = sections.has("always_on_memory")
          ? yield* readAlwaysOn(stores, request.scopes, settings.asOf)
          : none
        const digest = sections.has("prior_sessions") ? yield* readDigest(stores, settings, request) : none
        const options: ProjectionLayout.ProjectionConfig = {
          mode: request.mode,
          budget,
          estimator,
          ...(settings.skillsMinRows !== undefined ? { skillsMinRows: settings.skillsMinRows } : {})
        }
        const inputs: ProjectionLayout.ProjectionInput = {
          now,
          ...asOfFilter(settings.asOf),
          ...(request.workingState !== undefined ? { workingState: request.workingState } : {}),
          identity: identity.value,
          alwaysOn: alwaysOn.value,
          ...(request.skills !== undefined ? { skills: request.skills } : {}),
          digest: digest.value,
          ...(request.inPrefix !== undefined ? { inPrefix: request.inPrefix } : {}),
          ...(request.identity !== undefined ? { heldAddresses: request.identity.heldAddresses } : {})
        }
        // The first search asks for as many hits as the budget left holds at an assumed line cost;
        // the ones after it are sized by what the lines delivered so far measured (decision 0181).
        const sized = recallLimitFor({
          settings,
          mode: request.mode,
          query: request.query,
          budget,
          unboundedRecallLimit: given.unboundedRecallLimit,
          used: () => ProjectionLayout.composeProjectedContext({ ...inputs, recall: [] }, options).budget
        })
        const { cap, searchable } = sized
        let limit = sized.limit
        // Rounds are served from the hits of the last search while they cover the round's limit:
        // the first search asks for what the rounds of recent projections reached (decision 0200).
        let found: MemoryStore.SearchResult = { hits: [], skipped: 0 }
        let asked = 0
        let rounds = 0
        let searches = 0
        let skipped = identity.skipped + alwaysOn.skipped + digest.skipped
        const isRelevant = Decisions.relevance(request.query, { vectorFloor: settings.recallRelevance === "search" })
        // Relevance first: a hit it drops needs no screen.
        const kept = remembered((record) => isRelevant(record) && screened(record))
        let round: {
          readonly projection: ProjectionLayout.ProjectedContext
          readonly returned: number
          readonly relevant: number
          readonly more: boolean
        }
        // What the rounds before took from the ranking, and how much of it the relevance step kept.
        let before = { returned: 0, relevant: 0 }
        // A store that reads a search in pages (decision 0226) serves each round the hits it takes,
        // continuing where the last round's read stopped; the reach then only sizes how far it
        // ranks ahead when it must rank again.
        const pages = limit > 0 ? yield* recallPages(stores, settings, request) : undefined
        for (;;) {
          // A search that returned fewer hits than it asked for found every match: it covers any limit.
          if (limit > asked && found.hits.length === asked) {
            const ahead = reach.ask(limit, cap)
            if (pages === undefined) {
              asked = ahead
              found = yield* searchRecall(stores, settings, request, asked)
              searches += asked > 0 ? 1 : 0
              skipped += found.skipped
            } else {
              const before = found.skipped
              asked = limit
              found = yield* pages.take(limit, ahead)
              searches = pages.searches()
              skipped += Math.max(0, found.skipped - before)
            }
          }
          // The relevance step, after ranking and before the budget (decision 0180), with the screen.
          const recall = recallOf(found, limit, kept)
          rounds += limit > 0 ? 1 : 0
          const relevant = recall.value
          // Session summaries reach a prompt through the digest alone.
          const recalled = Decisions.withoutSummaries(relevant)
          const neighbours = yield* readNeighbours(stores, settings, request, recalled)
          skipped += neighbours.skipped
          const projection = layout(request, settings, inputs, options, {
            alwaysOn: alwaysOn.value,
            recalled,
            neighbours: neighbours.value
          })
          // More candidates may exist when the search filled its limit with at least one relevant
          // hit (the planner's tail tier lists records holding only common tokens newest first, so
          // relevant and function-word-only matches mix there: the last hit says nothing).
          const more = limit > 0 && recall.returned === limit && relevant.length > 0
          // The hits past the last round's limit: what the ranking holds where the next round reads.
          const added = {
            returned: recall.returned - before.returned,
            relevant: relevant.length - before.relevant
          }
          round = { projection, returned: recall.returned, relevant: relevant.length, more }
          before = { returned: recall.returned, relevant: relevant.length }
          const next = Decisions.nextRecallLimit({
            budget,
            projection,
            limit,
            cap,
            hits: recalled.length,
            lastHit: recalled.at(-1)?.record.id,
            added,
            more
          })
          if (next === undefined) break
          limit = next
        }
        if (rounds > 0) reach.observe(sized.limit, limit)
        const recallReport = sections.has("recalled_memory") && request.query.trim() !== ""
          ? Decisions.recallReport({
            searchable,
            limit,
            rounds,
            searches,
            cap,
            projection: round.projection,
            returned: round.returned,
            relevant: round.relevant,
            more: round.more
          })
          : undefined
        const projection = recallReport === undefined
          ? round.projection
          : new ProjectionLayout.ProjectedContext({
            ...round.projection,
            budget: { ...round.projection.budget, recall: recallReport }
          }, { disableValidation: true }) // the composer's own output, with a report built here
        yield* logInjection(stores, request, projection, now)
        yield* report(request, projection, skipped)
        return projection
      }).pipe(
        Effect.mapError((error) => (error instanceof ProjectionFailure ? error : failure(error))),
        Effect.withSpan("engram.projection", {
          attributes: { sessionId: request.sessionId, turn: request.turn, mode: request.mode }
        })
      )
    }

    return { project } satisfies ContextProjectionService
  })
