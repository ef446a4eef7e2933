import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import {
  InstructionScreen,
  MemoryForget,
  MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  PromotionStore,
  type Routing,
  RoutingSpecs,
  ScopeView,
  StoreTransaction,
  TelemetryStore,
  TurnProvenance
} from "@engram/core"
import { Extraction, Promotion } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import {
  type Access,
  type BrowseSort,
  Conflict,
  CurrentAccess,
  EngramApi,
  MAX_BATCH_WRITE,
  MAX_BROWSE_PAGE,
  NotFound
} from "../../EngramApi.js"
import * as GroupCommit from "../groupCommit.js"
import { batchWritten, created } from "./batchAnswer.js"
import {
  asArray,
  assignedIds,
  creatable,
  filtersOf,
  type GroupLayer,
  http,
  oneScope,
  readScopes,
  type ServerConfig,
  writable
} from "./shared.js"

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

/** The memories routes: list, search, browse, read, write, review, supersede, expire and forget. */
export const layerMemories = (config: ServerConfig): GroupLayer<
  "memories",
  RoutingSpecs.RoutingSpecNotFound,
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | TelemetryStore.TelemetryStore
  | RoutingSpecs.RoutingSpecs
  | StoreTransaction.StoreTransaction
> =>
  HttpApiBuilder.group(EngramApi, "memories", (handlers) =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const promotions = yield* PromotionStore.PromotionStore
      const specs = yield* RoutingSpecs.RoutingSpecs
      const transaction = yield* StoreTransaction.StoreTransaction
      const spec = config.agent.spec === undefined ? undefined : yield* specs.resolve(config.agent.spec)
      const withPromotions = Effect.provideService(PromotionStore.PromotionStore, promotions)
      // Everything the memories routes answer goes through the one scope rule (ScopeView).
      const shown = (access: Access, records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
        http(Effect.provideService(ScopeView.records(access.scopes, records), MemoryStore.MemoryStore, store))
      const shownOne = (access: Access, record: MemoryRecord.MemoryRecord) =>
        Effect.flatMap(
          shown(access, [record]),
          ([one]) =>
            one === undefined ? Effect.fail(new NotFound({ message: `no memory ${record.id}` })) : Effect.succeed(one)
        )
      const shownGraves = (access: Access, graves: ReadonlyArray<MemoryForget.Tombstone>) =>
        http(Effect.provideService(ScopeView.tombstones(access.scopes, graves), MemoryStore.MemoryStore, store))

      const held = (access: Access, id: MemoryRecord.MemoryId) =>
        Effect.flatMap(http(store.get([id], { scopes: access.scopes })), ({ records }) =>
          records[0] === undefined
            ? Effect.fail(new NotFound({ message: `no memory ${id}` }))
            : Effect.succeed(records[0]))

      /** Promotes records this request has just created (so none has a row yet). */
      const promote = (records: ReadonlyArray<Routing.RoutableRecord>) =>
        spec === undefined
          ? Effect.succeed([])
          : Effect.map(
            http(withPromotions(Promotion.promoteCreated(records, { background: config.agent.background, spec }))),
            (result) => result.committed
          )

      /**
       * Stores records and their promotion rows in one transaction: one write for all of them, one
       * promotion pass; one result per input, in order.
       */
      const storeAll = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
        transaction.run(Effect.gen(function*() {
          const records = yield* store.write(inputs)
          const rows = spec === undefined
            ? []
            : (yield* withPromotions(
              Promotion.promoteCreated(records, { background: config.agent.background, spec })
            )).committed
          const byRecord = new Map<string, Array<PromotionStore.PromotionRow>>()
          for (const row of rows) {
            const held = byRecord.get(row.recordId)
            if (held === undefined) byRecord.set(row.recordId, [row])
            else held.push(row)
          }
          return records.map((record) => ({ record, promotions: byRecord.get(record.id) ?? [] }))
        }))

      // Write requests that arrive together share a transaction; each is answered after the commit,
      // and one that fails is retried alone so it cannot fail the others (decision 0206).
      const submit = yield* GroupCommit.make(storeAll, { maxItems: MAX_BATCH_WRITE })

      /**
       * Stores a request's records (every input checked first: one refused stores none) and their
       * promotion rows, all or none of them; one result per input.
       */
      const createAll = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
        Effect.flatMap(CurrentAccess, (access) =>
          Effect.flatMap(
            Effect.flatMap(creatable(access, inputs), (scoped) => http(submit(scoped))),
            (created) =>
              Effect.map(
                shown(access, created.map((result) => result.record)),
                (visible) => created.map((result, index) => ({ ...result, record: visible[index] ?? result.record }))
              )
          ))

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
          // The store's forget removes the promotion rows and the records' text from prompt
          // telemetry too, in the same transaction (it took those stores when it was built).
          const result = yield* http(store.forget(scoped, { by: `api:${access.label}` }))
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
        .handle("create", ({ payload }) => Effect.map(createAll([payload]), ([result]) => created(result!)))
        .handle(
          "createMany",
          ({ payload }) => Effect.map(createAll(payload.records), (results) => batchWritten({ results }))
        )
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
