/**
 * The Engram operator server: the {@link EngramApi} under `/api`, its OpenAPI document at
 * `/openapi.json`, Swagger UI at `/docs`, and the review console at `/`.
 *
 * @example
 * import { NodeRuntime } from "@effect/platform-node"
 * import { EngramServer } from "@engram/server"
 *
 * // with MemoryStore, PromotionStore, TelemetryStore and AccessTokens provided:
 * EngramServer.layerServe({ port: 8787 })
 *
 * @since 0.1.0
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiSwagger from "@effect/platform/HttpApiSwagger"
import * as HttpServer from "@effect/platform/HttpServer"
import {
  ContextProjection,
  type MemoryStore,
  type ProjectionLayout,
  type PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  type SessionStore,
  type StoreTransaction,
  type TelemetryStore
} from "@engram/core"
import { type StablePrefix } from "@engram/runtime"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import type { AccessTokens } from "./AccessTokens.js"
import { EngramApi } from "./EngramApi.js"
import * as Console from "./internal/console.js"
import * as Handlers from "./internal/handlers.js"
import * as RequestGuard from "./internal/requestGuard.js"
import * as Tracing from "./internal/tracing.js"

/**
 * The agent the console composes when none is configured: the user-background vocabulary and
 * routing spec (`about_user` auto, `preferences` guarded).
 *
 * @since 0.1.0
 * @category config
 */
export const defaultAgent: StablePrefix.AgentConfig = {
  name: "default",
  persona: "",
  operatingModel: "",
  roster: [],
  toolGuidance: [],
  guidelines: [],
  background: RoutingPresets.userBackgroundSections,
  awareness: "",
  spec: RoutingPresets.userBackground.key,
  scope: "global",
  plugins: []
}

/**
 * Server options: the agent config the agent and projection views compose, and the working state
 * and skills index its runtime gives every turn — so the projection view previews exactly the
 * projection a native agent of this config would get (`Agent.planTurn` maps both).
 *
 * @since 0.1.0
 * @category models
 */
export interface ServerOptions {
  readonly agent?: StablePrefix.AgentConfig | undefined
  readonly workingState?: string | undefined
  readonly skills?: ReadonlyArray<ProjectionLayout.SkillRow> | undefined
  /** The request limits, each one given overriding its default ({@link defaultRequestLimits}). */
  readonly limits?: Partial<RequestLimits> | undefined
}

/**
 * What the server takes from a request before any route sees it. A request over a limit is
 * refused with a JSON body naming the limit: 413 over `maxBodyBytes`, 400 over `maxJsonDepth`;
 * one not sent whole within `requestTimeoutMs` gets 408 and its connection closed;
 * a body that is not `application/json` gets 415, one that does not parse 400.
 *
 * @since 0.1.0
 * @category models
 */
export interface RequestLimits {
  /** The longest request body, in bytes. */
  readonly maxBodyBytes: number
  /** How deep a JSON body may nest arrays and objects. */
  readonly maxJsonDepth: number
  /**
   * How long a client has to send a whole request, headers and body, in milliseconds: a request
   * still unfinished then is answered 408 and its connection closed, so bodies that never finish
   * do not hold connections (Node's `requestTimeout`, checked every second).
   */
  readonly requestTimeoutMs: number
}

/**
 * The defaults: 1 MiB of body (a record at `MemoryLimits.maxContentChars` is at most about
 * 200 KB of JSON, even with every character escaped), 32 levels of nesting (the API's deepest
 * body nests 3) and 15 seconds to send a request (a 1 MiB body at 1 Mbit/s takes about 9).
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultRequestLimits: RequestLimits = {
  maxBodyBytes: 1_048_576,
  maxJsonDepth: 32,
  requestTimeoutMs: 15_000
}

/**
 * The stores the server reads and writes, and the transaction a write request runs in
 * (`StoreTransaction`: the SQL layers share one; `StoreTransaction.layerNone` for in-memory stores).
 *
 * @since 0.1.0
 * @category models
 */
export type ServerStores =
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore
  | StoreTransaction.StoreTransaction
  | AccessTokens

/**
 * The API (handlers and token check), the OpenAPI document, Swagger UI and the console, ready for
 * `HttpApiBuilder.serve`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: ServerOptions = {}) =>
  Layer.mergeAll(
    HttpApiSwagger.layer({ path: "/docs" }),
    HttpApiBuilder.middlewareOpenApi({ path: "/openapi.json" }),
    Console.route
  ).pipe(
    Layer.provideMerge(HttpApiBuilder.api(EngramApi)),
    Layer.provide(Handlers.layerHandlers({
      agent: options.agent ?? defaultAgent,
      workingState: options.workingState,
      skills: options.skills
    })),
    Layer.provide(Handlers.authorization),
    Layer.provide(ContextProjection.layer),
    Layer.provide(RoutingSpecs.layerPresets)
  )

/**
 * Serves everything over HTTP on `port` (0 picks a free one) and `host` (default `127.0.0.1`),
 * logging the address. Every request passes the {@link RequestLimits} first; every answer carries
 * the security headers (a content security policy, `nosniff`, `X-Frame-Options: DENY`, no
 * referrer, same-origin opener and resource policies; `no-store` under `/api`) and every error
 * answer a JSON body naming the problem. Requests are traced (an HTTP span, the store's spans)
 * when a tracer is installed, such as OpenTelemetry's `NodeSdk.layer` provided to this layer;
 * under Effect's built-in tracer, which records nothing, tracing is off (decision 0214).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerServe = (options: ServerOptions & { readonly port: number; readonly host?: string | undefined }) => {
  const limits = { ...defaultRequestLimits, ...options.limits }
  const server = () =>
    createServer({
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: Math.min(limits.requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(1_000, limits.requestTimeoutMs)
    })
  return Tracing.onlyWhenRecorded(
    HttpApiBuilder.serve(RequestGuard.guard(limits)).pipe(
      HttpServer.withLogAddress,
      Layer.provide(layer(options)),
      Layer.provideMerge(NodeHttpServer.layer(server, { port: options.port, host: options.host ?? "127.0.0.1" }))
    )
  )
}
