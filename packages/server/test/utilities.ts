/**
 * Serves the Engram server on a free port over in-memory stores, with three tokens: `a` (project:a,
 * read-write), `b` (project:b, read-write) and `ro` (project:a, read-only).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import {
  InjectionLog,
  MemoryRecord,
  MemoryStore,
  ProjectionLayout,
  PromotionStore,
  PromptFragment,
  SessionStore,
  StoreTransaction,
  TelemetryStore
} from "@engram/core"
import { ModelRequest, PromptObserver } from "@engram/runtime"
import { AccessTokens, EngramServer } from "@engram/server"
import type * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"

export const stores = MemoryStore.layerMemoryCascading.pipe(
  Layer.provideMerge(Layer.mergeAll(
    PromotionStore.layerMemory,
    SessionStore.layerMemory,
    TelemetryStore.layerMemory,
    StoreTransaction.layerNone,
    AccessTokens.layerMemory
  ))
)

export interface Served {
  readonly base: string
  readonly tokens: { readonly a: string; readonly b: string; readonly ro: string }
  readonly request: (
    method: string,
    path: string,
    options?: { readonly token?: string | undefined; readonly body?: unknown }
  ) => Effect.Effect<{ readonly status: number; readonly text: string; readonly json: unknown }>
  readonly context: Context.Context<Layer.Layer.Success<typeof stores>>
}

/** Serves with `options` (the agent the console composes, its working state and skills). */
export const serveWith = (
  options: EngramServer.ServerOptions
): Effect.Effect<Served, unknown, Scope.Scope> =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      EngramServer.layerServe({ ...options, port: 0 }).pipe(Layer.provideMerge(stores))
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    const base = `http://127.0.0.1:${address.port}`
    const issue = (label: string, scopes: ReadonlyArray<string>, readOnly: boolean) =>
      Effect.provide(
        Effect.flatMap(AccessTokens.AccessTokens, (tokens) => tokens.create({ label, scopes, readOnly })),
        context
      ).pipe(Effect.map((issued) => issued.secret), Effect.orDie)
    const tokens = {
      a: yield* issue("a", ["project:a"], false),
      b: yield* issue("b", ["project:b"], false),
      ro: yield* issue("ro", ["project:a"], true)
    }
    const request: Served["request"] = (method, path, options = {}) =>
      Effect.promise(async () => {
        const headers: Record<string, string> = {}
        if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
        if (options.body !== undefined) headers["content-type"] = "application/json"
        const response = await fetch(base + path, {
          method,
          headers,
          ...(options.body !== undefined
            ? { body: typeof options.body === "string" ? options.body : JSON.stringify(options.body) }
            : {})
        })
        const text = await response.text()
        let json: unknown = undefined
        try {
          json = JSON.parse(text)
        } catch {
          json = undefined
        }
        return { status: response.status, text, json }
      })
    return { base, tokens, request, context: context as Context.Context<Layer.Layer.Success<typeof stores>> }
  })

export const serve: Effect.Effect<Served, unknown, Scope.Scope> = serveWith({})

/** Writes records straight into the served store. */
export const seed = (served: Served, inputs: ReadonlyArray<MemoryStoreInput>) =>
  Effect.provide(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write(inputs)), served.context).pipe(Effect.orDie)

type MemoryStoreInput = Parameters<MemoryStore.Service["write"]>[0][number]

/**
 * Stores one model call of session `sessionId` whose projection read `scope`, as the native loop's
 * telemetry observer would: a prefix, the operator's question and a projection naming `memoryId`,
 * with full text on — every text carrying `secret`, so a leak to another scope's token shows.
 */
export const seedSession = (
  served: Served,
  options: {
    readonly sessionId: string
    readonly scope: string
    readonly secret: string
    readonly memoryId: string
    /** A memory composed into the prefix's context section (its scope need not be `scope`). */
    readonly prefixMemory?: { readonly id: string; readonly text: string } | undefined
    /** Records the projection recalled. */
    readonly recall?: ReadonlyArray<MemoryRecord.MemoryRecord> | undefined
  }
) =>
  Effect.provide(
    Effect.gen(function*() {
      const at = DateTime.unsafeMake(Date.UTC(2025, 0, 1))
      const inputs: ModelRequest.RequestInput = {
        prefix: [
          {
            name: "identity",
            source: "role",
            fragments: [{ source: "authored", text: `You guard ${options.secret}.` }]
          },
          ...(options.prefixMemory !== undefined
            ? [{
              name: "context",
              source: "instance" as const,
              fragments: [PromptFragment.memory(options.prefixMemory.text, [options.prefixMemory.id])] as const
            }]
            : [])
        ],
        history: [],
        input: new SessionStore.OperatorMessage({ text: `tell me ${options.secret}`, at }),
        rounds: [],
        projection: ProjectionLayout.composeProjectedContext({
          now: at,
          workingState: `holding ${options.secret}`,
          ...(options.recall !== undefined ? { recall: options.recall.map((record) => ({ record, score: 1 })) } : {})
        }, { budget: ProjectionLayout.tokens(16_000) })
      }
      const { entries, snapshot } = PromptObserver.toStored({
        sessionId: options.sessionId,
        turn: 1,
        call: 0,
        request: ModelRequest.compose(inputs),
        tools: [],
        projection: inputs.projection,
        inputs,
        scopes: [options.scope]
      }, { at, fullText: { maxBytes: 10_000 } })
      const telemetry = yield* TelemetryStore.TelemetryStore
      yield* telemetry.appendSnapshot(snapshot, entries)
      yield* telemetry.appendInjection(
        new InjectionLog.InjectionLogRow({
          sessionId: options.sessionId,
          turn: 1,
          memoryIds: [options.memoryId],
          sectionLabels: ["recalled_memory"],
          mode: "native",
          at
        })
      )
    }),
    served.context
  ).pipe(Effect.orDie)

/** One route of the API, as the scope tests call it. */
export interface Route {
  readonly name: string
  readonly writes: boolean
  /** The request against `scope`, on a record of that scope made for this call. */
  readonly request: (scope: string, id: string) => { method: string; path: string; body?: unknown }
}

const q = (scope: string) => `scope=${encodeURIComponent(scope)}`

/** Every route of the API, each as a request against a scope and a record of it. */
export const routes: ReadonlyArray<Route> = [
  { name: "list", writes: false, request: (s) => ({ method: "GET", path: `/api/memories?${q(s)}` }) },
  { name: "search", writes: false, request: (s) => ({ method: "GET", path: `/api/memories/search?q=secret&${q(s)}` }) },
  { name: "browse", writes: false, request: (s) => ({ method: "GET", path: `/api/memories/browse?q=secret&${q(s)}` }) },
  { name: "get", writes: false, request: (_, id) => ({ method: "GET", path: `/api/memories/${id}` }) },
  {
    name: "create",
    writes: true,
    request: (s) => ({ method: "POST", path: "/api/memories", body: { content: "new secret", kind: "note", scope: s } })
  },
  {
    name: "createMany",
    writes: true,
    request: (s) => ({
      method: "POST",
      path: "/api/memories/batch",
      body: { records: [{ content: "new secret", kind: "note", scope: s }] }
    })
  },
  {
    name: "review",
    writes: true,
    request: (_, id) => ({ method: "POST", path: `/api/memories/${id}/review`, body: { state: "confirmed" } })
  },
  {
    name: "reviewMany",
    writes: true,
    request: (_, id) => ({ method: "POST", path: "/api/memories/review", body: { ids: [id], state: "confirmed" } })
  },
  {
    name: "supersede",
    writes: true,
    request: (_, id) => ({
      method: "POST",
      path: `/api/memories/${id}/supersede`,
      body: { content: "v2", kind: "note" }
    })
  },
  { name: "expire", writes: true, request: (_, id) => ({ method: "POST", path: `/api/memories/${id}/expire` }) },
  { name: "forget", writes: true, request: (_, id) => ({ method: "DELETE", path: `/api/memories/${id}` }) },
  {
    name: "forgetMany",
    writes: true,
    request: (_, id) => ({ method: "POST", path: "/api/forget", body: { ids: [id] } })
  },
  {
    name: "forgetScope",
    writes: true,
    request: (s) => ({ method: "POST", path: "/api/forget", body: { scope: s } })
  },
  { name: "tombstones", writes: false, request: (s) => ({ method: "GET", path: `/api/tombstones?${q(s)}` }) },
  { name: "promotions", writes: false, request: (s) => ({ method: "GET", path: `/api/promotions?${q(s)}` }) },
  { name: "agent", writes: false, request: (s) => ({ method: "GET", path: `/api/agent?${q(s)}` }) },
  { name: "projection", writes: false, request: (s) => ({ method: "GET", path: `/api/projection?q=secret&${q(s)}` }) },
  {
    name: "snapshots",
    writes: false,
    request: (s) => ({ method: "GET", path: `/api/sessions/${sessionOf(s)}/snapshots` })
  },
  {
    name: "inspect",
    writes: false,
    request: (s) => ({ method: "GET", path: `/api/sessions/${sessionOf(s)}/inspect` })
  },
  {
    name: "explain",
    writes: false,
    request: (s, id) => ({ method: "GET", path: `/api/memories/${id}/explain?session=${sessionOf(s)}` })
  }
]

/** The session seeded for a scope: its one stored call read that scope only. */
export const sessionOf = (scope: string) => `s-${scope.replace(":", "-")}`

/**
 * A record with every field set and one promotion row placing it: what a write answers at its
 * fullest, for tests holding a hand-written answer equal to its schema's encoding.
 */
export const everyFieldAnswer = () => {
  const at = (iso: string) => DateTime.unsafeMake(iso)
  const record = new MemoryRecord.MemoryRecord({
    id: "m-1",
    content: "the build uses esbuild",
    kind: "fact",
    label: "build tool",
    tags: ["build", "tooling"],
    sourceType: "operator",
    scope: "project:a",
    deliveryPolicy: "always",
    reviewState: "confirmed",
    createdAt: at("2026-01-02T03:04:05.006Z"),
    epoch: "v2",
    expiresAt: at("2027-01-01T00:00:00.000Z"),
    invalidatedAt: at("2026-06-01T00:00:00.000Z"),
    invalidationReason: "superseded_by:m-2",
    supersededBy: "m-2",
    supersedes: "m-0",
    domain: "engineering",
    position: { thread: "t-1", turn: 3 },
    validFrom: at("2026-01-01T00:00:00.000Z"),
    validTo: at("2026-12-31T00:00:00.000Z"),
    corroboration: { count: 2, sessions: ["s-1", "s-2"], lastAt: at("2026-02-01T00:00:00.000Z") }
  })
  const promotion = {
    recordId: record.id,
    scope: record.scope,
    placement: { primitive: "background" as const, section: "tools", key: "build" },
    placementKey: JSON.stringify(["tools", "build"]),
    keySource: "canonical" as const,
    specKey: "user-background",
    specVersion: "1",
    promotedAt: at("2026-01-02T03:04:05.007Z"),
    tier: null
  }
  return { record, promotion }
}
