import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import {
  ContextProjection,
  ErrorClass,
  InstructionScreen,
  MemoryForget,
  MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  type ProjectedContext,
  PromotionStore,
  type Routing,
  RoutingSpecs,
  ScopeView,
  SessionStore,
  SessionSummary,
  StoreTransaction,
  TelemetryStore,
  TurnProvenance
} from "@engram/core"
import { Agent, Explain, Extraction, Inspect, Promotion, StablePrefix } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import { AccessTokens } from "../AccessTokens.js"
import {
  type Access,
  Authorization,
  BadRequest,
  type BrowseSort,
  Conflict,
  CurrentAccess,
  EngramApi,
  InsufficientStorage,
  MAX_BROWSE_PAGE,
  NotFound,
  ReadOnlyToken,
  Unauthorized,
  Unavailable
} from "../EngramApi.js"

/**
 * What the server composes for the agent and projection views: the agent's config, and the
 * working state and skills index its runtime gives every turn (none by default).
 */
export interface ServerConfig {
  readonly agent: StablePrefix.AgentConfig
  readonly workingState?: string | undefined
  readonly skills?: ReadonlyArray<ProjectedContext.SkillRow> | undefined
}

type HttpFailure = NotFound | Conflict | BadRequest | Unavailable | InsufficientStorage

/** What each class of failure answers over HTTP (see `ErrorClass`). */
const answers: {
  readonly [C in ErrorClass.ErrorClass]: (message: string) => HttpFailure
} = {
  InvalidInput: (message) => new BadRequest({ message }),
  NotFound: (message) => new NotFound({ message }),
  Conflict: (message) => new Conflict({ message }),
  Misconfigured: (message) => new Unavailable({ message }),
  Unavailable: (message) => new Unavailable({ message }),
  StorageFull: (message) => new InsufficientStorage({ message })
}

/**
 * A store or runtime failure as the HTTP error a caller can act on; what the caller cannot fix
 * (the store failed, is full, or the configuration is broken) is logged with its class first.
 */
const toHttp = (error: ErrorClass.Classifiable): Effect.Effect<never, HttpFailure> => {
  const errorClass = ErrorClass.classify(error)
  const answer = Effect.fail(answers[errorClass](error.message))
  return errorClass === "Unavailable" || errorClass === "StorageFull" || errorClass === "Misconfigured"
    ? Effect.zipRight(
      Effect.logError("request failed").pipe(Effect.annotateLogs({ errorClass, problem: error.message })),
      answer
    )
    : answer
}

const http = <A, E extends ErrorClass.Classifiable, R>(self: Effect.Effect<A, E, R>) => Effect.catchAll(self, toHttp)

const notInScope = (scope: string) => new NotFound({ message: `no scope ${scope} for this token` })

/** The scopes a read covers: the token's, or the requested ones when the token holds them all. */
const readScopes = (access: Access, requested: ReadonlyArray<MemoryRecord.Scope> | undefined) => {
  if (requested === undefined) return Effect.succeed(access.scopes)
  const foreign = requested.find((scope) => !access.scopes.includes(scope))
  return foreign === undefined ? Effect.succeed(requested) : Effect.fail(notInScope(foreign))
}

/** One scope: the requested one (held by the token), or the token's only scope. */
const oneScope = (access: Access, requested: MemoryRecord.Scope | undefined) => {
  if (requested !== undefined) {
    return access.scopes.includes(requested) ? Effect.succeed(requested) : Effect.fail(notInScope(requested))
  }
  const [only, ...rest] = access.scopes
  return only !== undefined && rest.length === 0
    ? Effect.succeed(only)
    : Effect.fail(new BadRequest({ message: `name a scope: this token holds ${access.scopes.join(", ")}` }))
}

/**
 * The server assigns every id it creates (decision 0048): a caller's id could be taken by a record
 * of a scope it cannot see, and answering "taken" would say that record exists. One refusal, the
 * same whatever the id, tells nothing.
 */
const assignedIds = (input: { readonly id?: string | undefined }) =>
  input.id === undefined
    ? Effect.void
    : Effect.fail(
      new BadRequest({
        message: "remove \"id\": the server assigns the id of every record it creates (the answer carries it)"
      })
    )

const writable = (access: Access) =>
  access.readOnly
    ? Effect.fail(new ReadOnlyToken({ message: `token "${access.label}" is read-only` }))
    : Effect.void

const asArray = <A>(value: A | ReadonlyArray<A> | undefined): ReadonlyArray<A> | undefined =>
  value === undefined ? undefined : Array.isArray(value) ? value : [value as A]

interface FilterParams {
  readonly scope?: MemoryRecord.Scope | ReadonlyArray<MemoryRecord.Scope> | undefined
  readonly kind?: MemoryRecord.MemoryKind | ReadonlyArray<MemoryRecord.MemoryKind> | undefined
  readonly review?: MemoryRecord.ReviewState | ReadonlyArray<MemoryRecord.ReviewState> | undefined
  readonly delivery?: MemoryRecord.DeliveryPolicy | ReadonlyArray<MemoryRecord.DeliveryPolicy> | undefined
  readonly deliverable?: "true" | "false" | undefined
  readonly includeSuperseded?: "true" | "false" | undefined
  readonly limit?: number | undefined
}

const filtersOf = (access: Access, params: FilterParams) =>
  Effect.map(readScopes(access, asArray(params.scope)), (scopes): MemoryQuery.MemoryFilters & { limit?: number } => {
    const kinds = asArray(params.kind)
    const reviewStates = asArray(params.review)
    const deliveryPolicies = asArray(params.delivery)
    return {
      scopes,
      ...(kinds !== undefined ? { kinds } : {}),
      ...(reviewStates !== undefined ? { reviewStates } : {}),
      ...(deliveryPolicies !== undefined ? { deliveryPolicies } : {}),
      ...(params.deliverable === "true" ? { deliverable: true } : {}),
      ...(params.includeSuperseded === "true" ? { includeSuperseded: true } : {}),
      ...(params.limit !== undefined ? { limit: params.limit } : {})
    }
  })

/** The bearer-token check: a known token that names at least one scope, else 401; 503 when the store is down. */
export const authorization = Layer.effect(
  Authorization,
  Effect.map(AccessTokens, (tokens) => ({
    bearer: (secret: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const value = Redacted.value(secret)
        if (value.length === 0) return yield* new Unauthorized({ message: "sign in with a bearer token" })
        // The token store failing is an outage (503), not a bad token: a client that is told 401
        // drops a good token, and an operator reads a database outage as an attack.
        const token = yield* tokens.verify(value).pipe(
          Effect.catchAll((error) =>
            Effect.zipRight(
              Effect.logError("token check failed").pipe(Effect.annotateLogs({ problem: error.message })),
              Effect.fail(new Unavailable({ message: `cannot check the token right now: ${error.message}` }))
            )
          )
        )
        // Fail closed: a token that names no scope grants nothing.
        if (token === undefined || token.scopes.length === 0) {
          return yield* new Unauthorized({
            message: "this token is not valid here; create one with engram token create"
          })
        }
        return { tokenId: token.id, label: token.label, scopes: token.scopes, readOnly: token.readOnly }
      })
  }))
)

const MAX_HISTORY = 100

type BrowseSort = typeof BrowseSort.Type

/** One browse row before its promotion rows are read. */
interface Browsed {
  readonly record: MemoryRecord.MemoryRecord
  readonly state: MemoryQuery.Lifecycle
  readonly score: number | null
}

const byText = (a: string | undefined, b: string | undefined) => MemoryQuery.compareRaw(a ?? "", b ?? "")

/** Each sortable column, ascending; ties fall to the listing order (newest first, then id). */
const columns: { readonly [S in BrowseSort]: (a: Browsed, b: Browsed) => number } = {
  created: (a, b) => DateTime.toEpochMillis(a.record.createdAt) - DateTime.toEpochMillis(b.record.createdAt),
  id: (a, b) => MemoryQuery.compareRaw(a.record.id, b.record.id),
  content: (a, b) => byText(a.record.content, b.record.content),
  kind: (a, b) => byText(a.record.kind, b.record.kind),
  label: (a, b) => byText(a.record.label, b.record.label),
  source: (a, b) => byText(a.record.sourceType, b.record.sourceType),
  trust: (a, b) => a.record.trustTier - b.record.trustTier,
  state: (a, b) => byText(a.state, b.state),
  score: (a, b) => (a.score ?? 0) - (b.score ?? 0)
}

/** The browse order: the column in the direction asked, then the one listing order. */
const browseOrder = (sort: BrowseSort, order: "asc" | "desc") => (a: Browsed, b: Browsed) =>
  (order === "asc" ? 1 : -1) * columns[sort](a, b) || MemoryQuery.compareListOrder(a.record, b.record)

/** The handlers of every group, over the stores, the projection and the agent config. */
export const layerHandlers = (config: ServerConfig) => {
  const memories = HttpApiBuilder.group(EngramApi, "memories", (handlers) =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const promotions = yield* PromotionStore.PromotionStore
      const telemetry = yield* TelemetryStore.TelemetryStore
      const specs = yield* RoutingSpecs.RoutingSpecs
      const transaction = yield* StoreTransaction.StoreTransaction
      const spec = config.agent.spec === undefined ? undefined : yield* specs.resolve(config.agent.spec)
      const withPromotions = Effect.provideService(PromotionStore.PromotionStore, promotions)
      // Everything the memories routes answer goes through the one scope rule (ScopeView).
      const shown = (access: Access, records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
        http(Effect.provideService(ScopeView.records(access.scopes, records), MemoryStore.MemoryStore, store))
      const shownOne = (access: Access, record: MemoryRecord.MemoryRecord) =>
        Effect.flatMap(shown(access, [record]), ([one]) =>
          one === undefined ? Effect.fail(new NotFound({ message: `no memory ${record.id}` })) : Effect.succeed(one))
      const shownGraves = (access: Access, graves: ReadonlyArray<MemoryForget.Tombstone>) =>
        http(Effect.provideService(ScopeView.tombstones(access.scopes, graves), MemoryStore.MemoryStore, store))

      const held = (access: Access, id: MemoryRecord.MemoryId) =>
        Effect.flatMap(http(store.get([id], { scopes: access.scopes })), ({ records }) =>
          records[0] === undefined
            ? Effect.fail(new NotFound({ message: `no memory ${id}` }))
            : Effect.succeed(records[0]))

      const promote = (records: ReadonlyArray<Routing.RoutableRecord>) =>
        spec === undefined
          ? Effect.succeed([])
          : Effect.map(
            http(withPromotions(Promotion.promoteNew(records, { background: config.agent.background, spec }))),
            (result) =>
              result.committed
          )

      /**
       * Stores records and their promotion rows in one transaction: every input checked first (one
       * refused stores none), one write for all of them, one promotion pass; one result per input.
       */
      const createAll = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
        Effect.gen(function*() {
          const access = yield* CurrentAccess
          yield* writable(access)
          const scoped: Array<MemoryRecord.MemoryWriteInput> = []
          for (const input of inputs) {
            yield* assignedIds(input)
            scoped.push({ ...input, scope: yield* oneScope(access, input.scope) })
          }
          return yield* http(transaction.run(Effect.gen(function*() {
            const records = yield* store.write(scoped)
            const rows = spec === undefined
              ? []
              : (yield* withPromotions(
                Promotion.promoteNew(records, { background: config.agent.background, spec })
              )).committed
            return records.map((record) => ({
              record,
              promotions: rows.filter((row) =>
                row.recordId === record.id
              )
            }))
          }))).pipe(Effect.flatMap((created) =>
            Effect.map(
              shown(
                access,
                created.map((result) => result.record)
              ),
              (visible) => created.map((result, index) => ({ ...result, record: visible[index] ?? result.record }))
            )
          ))
        })

      /** The record's supersession chain, through stored records and tombstones. */
      const historyOf = (access: Access, record: MemoryRecord.MemoryRecord) =>
        Effect.gen(function*() {
          const links = new Map<string, MemoryForget.ChainLink>([[record.id, { _tag: "Record", record }]])
          const pending = [record.supersedes, record.supersededBy]
          while (pending.length > 0 && links.size < MAX_HISTORY) {
            const id = pending.pop()
            if (id === undefined || links.has(id)) {
              continue
            }
            const [found] = yield* shown(access, (yield* http(store.get([id], { scopes: access.scopes }))).records)
            if (found !== undefined) {
              links.set(id, { _tag: "Record", record: found })
              pending.push(found.supersedes, found.supersededBy)
              continue
            }
            const [grave] = yield* shownGraves(
              access,
              yield* http(store.tombstones({ ids: [id], scopes: access.scopes }))
            )
            if (grave !== undefined) {
              links.set(id, { _tag: "Forgotten", tombstone: grave })
              pending.push(grave.supersedes, grave.supersededBy)
            } else {
              links.set(id, { _tag: "Missing", id })
            }
          }
          return MemoryForget.supersessionChain(record.id, (id) => links.get(id) ?? { _tag: "Missing", id }).map((
            link
          ) =>
            link._tag === "Record"
              ? { id: link.record.id, state: "stored" as const, record: link.record }
              : link._tag === "Forgotten"
              ? { id: link.tombstone.memoryId, state: "forgotten" as const, tombstone: link.tombstone }
              : { id: link.id, state: "missing" as const }
          )
        })

      const forget = (access: Access, target: MemoryForget.ForgetTarget) =>
        Effect.gen(function*() {
          yield* writable(access)
          if ("ids" in target) {
            // Every id must be a record this token can see: another scope's id is "not found".
            const scopes = yield* readScopes(access, target.scopes)
            const { records } = yield* http(store.get(target.ids, { scopes }))
            const seen = new Set(records.map((record) => record.id))
            const missing = target.ids.find((id) => !seen.has(id))
            if (missing !== undefined) return yield* new NotFound({ message: `no memory ${missing}` })
          }
          const scoped: MemoryForget.ForgetTarget = "scope" in target
            ? { scope: yield* oneScope(access, target.scope) }
            : { ids: target.ids, scopes: yield* readScopes(access, target.scopes) }
          // Forget also removes the records' text from prompt telemetry, in the same transaction.
          const result = yield* http(
            withPromotions(store.forget(scoped, { by: `api:${access.label}` })).pipe(
              Effect.provideService(TelemetryStore.TelemetryStore, telemetry)
            )
          )
          return { tombstones: yield* shownGraves(access, result.tombstones) }
        })

      return handlers
        .handle("list", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const filters = yield* filtersOf(access, urlParams)
            const page = yield* http(
              store.list({ ...filters, ...(urlParams.cursor !== undefined ? { cursor: urlParams.cursor } : {}) })
            )
            return {
              records: yield* shown(access, page.records),
              skipped: page.skipped,
              ...(page.nextCursor !== undefined ? { nextCursor: page.nextCursor } : {})
            }
          }))
        .handle("search", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const filters = yield* filtersOf(access, urlParams)
            const result = yield* http(store.search(urlParams.q, filters))
            const records = yield* shown(access, result.hits.map((hit) => hit.record))
            const byId = new Map(records.map((record) => [record.id, record]))
            return {
              ...result,
              hits: result.hits.flatMap((hit) => {
                const record = byId.get(hit.record.id)
                return record === undefined ? [] : [{ ...hit, record }]
              })
            }
          }))
        .handle("browse", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const scopes = yield* readScopes(access, asArray(urlParams.scope))
            const kinds = asArray(urlParams.kind)
            // Every lifecycle state is browsable, so superseded and expired records are read too.
            const filters = {
              scopes,
              includeSuperseded: true,
              limit: MemoryQuery.MAX_LIMIT,
              ...(kinds !== undefined ? { kinds } : {})
            }
            const candidates = urlParams.q === undefined
              ? yield* Effect.map(http(store.list(filters)), (page) => ({
                hits: page.records.map((record) => ({ record, score: null })),
                truncated: page.nextCursor !== undefined
              }))
              : yield* Effect.map(http(store.search(urlParams.q, filters)), (result) => ({
                hits: result.hits.map((hit): { record: MemoryRecord.MemoryRecord; score: number | null } => hit),
                truncated: result.hits.length >= MemoryQuery.MAX_LIMIT
              }))
            const visible = new Map(
              (yield* shown(access, candidates.hits.map((hit) => hit.record))).map((record) => [record.id, record])
            )
            const now = yield* DateTime.now
            const states = asArray(urlParams.state)
            const flagged = urlParams.flagged === undefined ? undefined : urlParams.flagged === "true"
            const rows = candidates.hits.flatMap((hit): Array<Browsed> => {
              const record = visible.get(hit.record.id)
              if (record === undefined) return []
              const state = MemoryQuery.lifecycleOf(record, now)
              if (states !== undefined && !states.includes(state)) return []
              if (flagged !== undefined && record.flagged !== flagged) return []
              return [{ record, state, score: hit.score }]
            })
            const sort = urlParams.sort ?? (urlParams.q === undefined ? "created" : "score")
            rows.sort(browseOrder(sort, urlParams.order ?? (sort === "created" || sort === "score" ? "desc" : "asc")))
            const offset = urlParams.offset ?? 0
            const limit = urlParams.limit ?? 25
            const page = rows.slice(offset, offset + Math.min(limit, MAX_BROWSE_PAGE))
            const placed = (yield* http(promotions.getByRecords(page.map((row) => row.record.id)))).rows
            return {
              total: rows.length,
              offset,
              limit,
              truncated: candidates.truncated,
              rows: page.map((row) => ({
                ...row,
                trustTier: row.record.trustTier,
                flagged: row.record.flagged,
                promotions: placed.filter((promotion) => promotion.recordId === row.record.id)
              }))
            }
          }))
        .handle("reviewMany", ({ payload }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            yield* writable(access)
            const ids = [...new Set(payload.ids)]
            const held = new Map(
              (yield* shown(access, (yield* http(store.get(ids, { scopes: access.scopes }))).records))
                .map((record) => [record.id, record])
            )
            const now = yield* DateTime.now
            // Every id is checked before any changes: one that is not reviewable refuses them all.
            for (const id of ids) {
              const record = held.get(id)
              if (record === undefined) return yield* new NotFound({ message: `no memory ${id}` })
              const state = MemoryQuery.lifecycleOf(record, now)
              if (state === "expired" || state === "superseded" || state === "invalidated") {
                return yield* new Conflict({
                  message: `memory ${id} is ${state}: a review would not change what it does (nothing was reviewed)`
                })
              }
            }
            const updated = yield* Effect.forEach(ids, (id) => http(store.setReviewState(id, payload.state)))
            return { records: yield* shown(access, updated) }
          }))
        .handle("get", ({ path }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const record = yield* Effect.flatMap(held(access, path.id), (found) => shownOne(access, found))
            const rows = yield* http(promotions.getByRecords([record.id]))
            const source = TurnProvenance.of(record)
            return {
              record,
              state: MemoryQuery.lifecycleOf(record, yield* DateTime.now),
              trustTier: record.trustTier,
              history: yield* historyOf(access, record),
              promotions: rows.rows,
              flagged: record.flagged,
              flaggedFor: InstructionScreen.reasonsFor(record),
              source: source === undefined ? null : { ...source, turns: source.turns ?? null },
              proposesToSupersede: Extraction.proposedHolder(record) ?? null
            }
          }))
        .handle("create", ({ payload }) => Effect.map(createAll([payload]), ([created]) => created!))
        .handle("createMany", ({ payload }) => Effect.map(createAll(payload.records), (results) => ({ results })))
        .handle("review", ({ path, payload }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            yield* writable(access)
            yield* held(access, path.id)
            // The one review path: confirming a supersede proposal carries it out (the successor is answered).
            const reviewed = Extraction.review(
              path.id,
              payload.state,
              spec === undefined ? undefined : { background: config.agent.background, spec }
            ).pipe(Effect.provideService(MemoryStore.MemoryStore, store), withPromotions)
            return { record: yield* shownOne(access, yield* http(reviewed)) }
          }))
        .handle("supersede", ({ path, payload }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            yield* writable(access)
            yield* assignedIds(payload)
            const original = yield* held(access, path.id)
            const scope = yield* oneScope(access, payload.scope ?? original.scope)
            const outcome = yield* http(store.supersede(path.id, { ...payload, scope }))
            return {
              superseded: yield* shownOne(access, outcome.superseded),
              successor: yield* shownOne(access, outcome.successor),
              promotions: yield* promote([outcome.successor])
            }
          }))
        .handle("expire", ({ path }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            yield* writable(access)
            yield* held(access, path.id)
            return { record: yield* shownOne(access, yield* http(store.expire(path.id))) }
          }))
        .handle("forget", ({ path }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            yield* writable(access)
            yield* held(access, path.id)
            return yield* forget(access, { ids: [path.id] })
          }))
        .handle("forgetMany", ({ payload }) => Effect.flatMap(CurrentAccess, (access) => forget(access, payload)))
        .handle("tombstones", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const scopes = yield* readScopes(access, urlParams.scope === undefined ? undefined : [urlParams.scope])
            return { tombstones: yield* shownGraves(access, yield* http(store.tombstones({ scopes }))) }
          }))
    }))

  const composition = HttpApiBuilder.group(EngramApi, "composition", (handlers) =>
    Effect.gen(function*() {
      const context = yield* Effect.context<
        MemoryStore.MemoryStore | PromotionStore.PromotionStore | RoutingSpecs.RoutingSpecs
      >()
      const projection = yield* ContextProjection.ContextProjection
      const build = (scope: MemoryRecord.Scope) =>
        http(Effect.provide(StablePrefix.buildAgent({ ...config.agent, scope, scopes: [scope] }), context))
      return handlers
        .handle("promotions", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const scope = yield* oneScope(access, urlParams.scope)
            const promotionStore = yield* Effect.provide(PromotionStore.PromotionStore, context)
            return { rows: (yield* http(promotionStore.listByScope(scope))).rows }
          }))
        .handle("agent", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const scope = yield* oneScope(access, urlParams.scope)
            const agent = yield* build(scope)
            const store = yield* Effect.provide(MemoryStore.MemoryStore, context)
            const named = [...new Set(agent.report.outcomes.map((outcome) => outcome.recordId))]
            const { records } = yield* http(store.get(named, { scopes: access.scopes }))
            const visible = yield* http(
              Effect.provideService(ScopeView.records(access.scopes, records), MemoryStore.MemoryStore, store)
            )
            return {
              scope,
              spec: config.agent.spec ?? null,
              prefix: agent.prefix,
              text: agent.text,
              composedIds: agent.composedIds,
              report: agent.report,
              records: visible
            }
          }))
        .handle("projection", ({ urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            const scope = yield* oneScope(access, urlParams.scope)
            const agent = yield* build(scope)
            // The turn a native agent of this config would run in this scope, mapped to its
            // projection request as every runtime maps it; previews write no injection row.
            const projected = yield* http(Effect.flatMap(
              Agent.planTurn(agent, {
                sessionId: "console-preview",
                turn: 0,
                query: urlParams.q,
                mode: "native",
                scopes: agent.scopes,
                workingState: config.workingState,
                skills: config.skills,
                record: false
              }),
              (plan) => projection.project(plan.request)
            ))
            return { scope, projection: projected }
          }))
    }))

  const sessions = HttpApiBuilder.group(EngramApi, "sessions", (handlers) =>
    Effect.gen(function*() {
      const context = yield* Effect.context<
        MemoryStore.MemoryStore | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore
      >()
      const telemetry = yield* TelemetryStore.TelemetryStore
      const store = yield* MemoryStore.MemoryStore
      const histories = yield* Effect.serviceOption(SessionStore.SessionStore)

      /**
       * A session whose every stored call the one scope rule lets this token see (ScopeView: the
       * scopes its projection read, and every memory its prefix and projection carried); else
       * "not found".
       */
      const visibleScopes = (access: Access, sessionId: string) =>
        Effect.gen(function*() {
          const { snapshots } = yield* http(telemetry.listSnapshots(sessionId))
          const shown = yield* http(
            Effect.provideService(ScopeView.sessionShown(access.scopes, snapshots), MemoryStore.MemoryStore, store)
          )
          const read = [...new Set(snapshots.flatMap((snapshot) => snapshot.scopes ?? []))].sort(MemoryQuery.compareRaw)
          return shown ? Option.some(read) : Option.none()
        })
      const visible = (access: Access, sessionId: string) => Effect.map(visibleScopes(access, sessionId), Option.isSome)
      const session = (access: Access, sessionId: string) =>
        Effect.flatMap(visible(access, sessionId), (shown) =>
          shown ? Effect.void : Effect.fail(new NotFound({ message: `no session ${sessionId}` })))

      return handlers
        .handle("list", () =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            // The histories too, when the server was given a session store (engram serve is).
            const summaries = Option.isSome(histories)
              ? Effect.provideService(SessionSummary.list, SessionStore.SessionStore, histories.value)
              : SessionSummary.list
            const all = yield* http(Effect.provide(summaries, context))
            const shown = yield* Effect.forEach(all, (summary) =>
              Effect.map(
                visibleScopes(access, summary.sessionId),
                Option.map((scopes) => ({ ...summary, scopes }))
              ))
            return {
              sessions: shown.flatMap((row) =>
                Option.isSome(row) ? [row.value] : []
              )
            }
          }))
        .handle("snapshots", ({ path, urlParams }) =>
          Effect.gen(function*() {
            yield* session(yield* CurrentAccess, path.session)
            const { snapshots } = yield* http(telemetry.listSnapshots(path.session, urlParams))
            return { sessionId: path.session, snapshots }
          }))
        .handle("inspect", ({ path, urlParams }) =>
          Effect.gen(function*() {
            yield* session(yield* CurrentAccess, path.session)
            const calls = yield* http(Effect.provide(Inspect.inspectSession(path.session, urlParams), context))
            return {
              sessionId: path.session,
              calls: calls.map((c) => ({
                turn: c.snapshot.turn,
                call: c.snapshot.call,
                verified: c.verified,
                redacted: c.redacted,
                fragments: c.request.fragments,
                sections: c.projection.sections,
                budget: c.projection.budget
              }))
            }
          }))
        .handle("explain", ({ path, urlParams }) =>
          Effect.gen(function*() {
            const access = yield* CurrentAccess
            // The memory must be one this token can see: stored, or forgotten, in its scopes.
            const { records } = yield* http(store.get([path.id], { scopes: access.scopes }))
            const graves = records.length > 0
              ? []
              : yield* http(store.tombstones({ ids: [path.id], scopes: access.scopes }))
            if (records.length === 0 && graves.length === 0) {
              return yield* new NotFound({ message: `no memory ${path.id}` })
            }
            if (urlParams.session !== undefined) {
              yield* session(access, urlParams.session)
            }
            const explanation = yield* http(Effect.provide(
              Explain.explain({
                memoryId: path.id,
                sessionId: urlParams.session,
                turn: urlParams.turn,
                call: urlParams.call
              }),
              context
            ))
            // Without a session, only the sessions (and their calls) this token may see are named.
            const ids = [...new Set([...explanation.sessions, ...explanation.calls].map((s) => s.sessionId))]
            const seen = new Set(yield* Effect.filter(ids, (id) => visible(access, id)))
            return {
              ...explanation,
              calls: explanation.calls.filter((c) => seen.has(c.sessionId)),
              sessions: explanation.sessions.filter((s) => seen.has(s.sessionId))
            }
          }))
    }))

  const access = HttpApiBuilder.group(
    EngramApi,
    "access",
    (handlers) =>
      handlers.handle(
        "whoami",
        () => Effect.map(CurrentAccess, (who) => ({ label: who.label, scopes: who.scopes, readOnly: who.readOnly }))
      )
  )

  return Layer.mergeAll(memories, composition, sessions, access)
}
