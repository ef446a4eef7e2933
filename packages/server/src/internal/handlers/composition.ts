import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import {
  ContextProjection,
  type MemoryRecord,
  MemoryStore,
  PromotionStore,
  RoutingSpecs,
  ScopeView,
  SessionStore
} from "@engram/core"
import { StablePrefix, Turn } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import { CurrentAccess, EngramApi } from "../../EngramApi.js"
import { type GroupLayer, http, oneScope, type ServerConfig } from "./shared.js"

/** The composition routes: the promotion rows, the agent prefix and the projection preview. */
export const layerComposition = (config: ServerConfig): GroupLayer<
  "composition",
  never,
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | RoutingSpecs.RoutingSpecs
  | ContextProjection.ContextProjection
> =>
  HttpApiBuilder.group(EngramApi, "composition", (handlers) =>
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
            // The first turn a native agent of this config would run in this scope, assembled as
            // every transport assembles it (Turn, decision 0166); previews record nothing.
            const input = new SessionStore.OperatorMessage({ text: urlParams.q, at: yield* DateTime.now })
            const composed = yield* http(
              Turn.compose(
                { ...agent, mode: "native", workingState: config.workingState, skills: config.skills },
                { sessionId: "console-preview", turn: 1, input, history: [], record: false },
                urlParams.asOf === undefined ? undefined : { asOf: urlParams.asOf }
              ).pipe(Effect.provideService(ContextProjection.ContextProjection, projection))
            )
            return { scope, projection: composed.projection, request: composed.request.fragments }
          }))
    }))
