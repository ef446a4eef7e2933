import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import {
  MemoryQuery,
  MemoryStore,
  type PromotionStore,
  ScopeView,
  SessionStore,
  SessionSummary,
  TelemetryStore
} from "@engram/core"
import { Explain, Inspect } from "@engram/runtime"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { type Access, CurrentAccess, EngramApi, NotFound } from "../../EngramApi.js"
import { type GroupLayer, http } from "./shared.js"

/** The sessions routes: the session list, the stored calls, their inspection and a memory's explanation. */
export const layerSessions: GroupLayer<
  "sessions",
  never,
  MemoryStore.MemoryStore | PromotionStore.PromotionStore | SessionStore.SessionStore | TelemetryStore.TelemetryStore
> = HttpApiBuilder.group(EngramApi, "sessions", (handlers) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<
      MemoryStore.MemoryStore | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore
    >()
    const telemetry = yield* TelemetryStore.TelemetryStore
    const store = yield* MemoryStore.MemoryStore
    const histories = yield* SessionStore.SessionStore

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
          const summaries = Effect.provideService(SessionSummary.list, SessionStore.SessionStore, histories)
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
