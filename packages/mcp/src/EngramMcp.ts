/**
 * Engram's memory as a Model Context Protocol server, on the official MCP SDK's protocol.
 *
 * An agent Engram does not run — a desktop assistant, an editor, an ACP agent — gets what a native
 * agent gets, through the MCP channels a client reads:
 *
 * - **`initialize` → `instructions`**: what Engram is and how to save (`AgentContext.USAGE`, even
 *   on an empty store), then the agent's context for no particular query — its stable prefix
 *   (identity, guidelines, the composed Background with the promoted memories) and the
 *   projection's identity tier and always-on memory (see `AgentContext`). Each connection is a
 *   session of its own; a request other than `initialize` before it is refused.
 * - **the resource `engram://context`**: the same text, read again whenever the client wants it
 *   fresh (a memory promoted after `initialize` is in it).
 * - **the tool `memory_context`**: the context for a query — the prefix and the projection a
 *   native turn with that input would get (recall and digest included), built by
 *   `Agent.planTurn` and `ContextProjection.project`.
 * - **the tools `memory_save` and `memory_recall`** from `MemoryTools`, with the same save gate,
 *   routing and promotion as native, so a save lands at the same address and composes into the
 *   next prefix or projection; operators get `memory_list`, `memory_review` and `memory_forget`
 *   beside them (see `OperatorTools`).
 *
 * A tool's JSON schema is derived from its `@effect/ai` parameters and the arguments are decoded
 * with them before a handler runs; a result is MCP structured content, with `isError` set when
 * the tool failed (a refused argument, a store that is down), never when it answered (a save
 * `conflict` is an answer).
 *
 * **Transports that survive bad input.** Over stdio every line is judged alone: a line that is not
 * JSON gets the JSON-RPC parse error (-32700), JSON that is not a JSON-RPC message gets invalid
 * request (-32600), and the next line is served. Over HTTP every request's `Host` and `Origin` are
 * checked first ({@link OriginPolicy}: loopback by default), as the MCP specification requires
 * against DNS rebinding. The SDK's protocol keeps request ids as sent, puts the error code in
 * `error.code`, answers an unknown method with -32601 and never replies to a notification.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { NodeRuntime } from "@effect/platform-node"
 * import { RoutingPresets } from "@engram/core"
 * import { EngramMcp } from "@engram/mcp"
 * import { SqliteEngram } from "@engram/store-sqlite"
 *
 * EngramMcp.layerStdio({
 *   memory: { scope: "global", background: RoutingPresets.userBackgroundSections, spec: RoutingPresets.userBackground }
 * }).pipe(Layer.provide(SqliteEngram.layer({ filename: ".engram/engram.db" })), Layer.launch, NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 */
import type * as Acp from "@agentclientprotocol/sdk"
import type * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { ContextProjection, MemoryStore, PromotionStore, TelemetryStore } from "@engram/core"
import { MemoryTools, type StablePrefix } from "@engram/runtime"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Runtime from "effect/Runtime"
import { randomUUID } from "node:crypto"
import type { Readable, Writable } from "node:stream"
import * as AgentContext from "./AgentContext.js"
import * as Line from "./internal/lineTransport.js"
import * as Internal from "./internal/server.js"
import * as OperatorTools from "./OperatorTools.js"

/**
 * The name the server gives in `initialize`.
 *
 * @since 0.1.0
 * @category constants
 */
export const SERVER_NAME = "engram"

/**
 * The version the server gives in `initialize`.
 *
 * @since 0.1.0
 * @category constants
 */
export const SERVER_VERSION = "0.1.0"

/**
 * The longest stdio line the server reads (4 MiB): a longer one is skipped to its newline and
 * answered with the parse error.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_LINE_BYTES: number = Line.MAX_LINE_BYTES

/**
 * The most MCP sessions the HTTP transport keeps open at once; the oldest is closed to make room.
 *
 * @since 0.1.0
 * @category constants
 */
export const MAX_HTTP_SESSIONS: number = Internal.MAX_HTTP_SESSIONS

/**
 * The host names the HTTP transport accepts by default: the loopback names, on any port.
 *
 * @since 0.1.0
 * @category constants
 */
export const LOOPBACK_HOSTS: ReadonlyArray<string> = Internal.LOOPBACK_HOSTS

/**
 * Which requests the HTTP transport serves, checked before anything else (a refusal is a 403 with
 * a JSON-RPC error naming the header):
 *
 * - `allowedHosts`: the host names (no port; IPv6 in brackets) the `Host` header may name —
 *   default {@link LOOPBACK_HOSTS}. List the name clients use when serving on another address.
 * - `allowedOrigins`: the origins (`scheme://host[:port]`) a browser page may call from. Default:
 *   a page on an allowed host; once given, only these. A request without `Origin` (a client that
 *   is not a browser) passes this check.
 * - `bearerToken`: when given, every request must carry `Authorization: Bearer <token>` (401
 *   otherwise). `engram mcp` requires one to listen beyond loopback.
 *
 * @since 0.1.0
 * @category models
 */
export interface OriginPolicy {
  readonly allowedHosts?: ReadonlyArray<string> | undefined
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  readonly bearerToken?: string | undefined
}

/**
 * Why the HTTP transport refuses a request with these `Host` and `Origin` headers under `policy`,
 * or `undefined` when it serves it. Pure.
 *
 * @since 0.1.0
 * @category http
 */
export const refusal: (
  headers: { readonly host: string | undefined; readonly origin: string | undefined },
  policy: OriginPolicy
) => string | undefined = Internal.refusedBy

/**
 * How the server is configured.
 *
 * - `memory`: the memory tools' configuration — scope, declared Background, routing spec,
 *   provenance of saves (default `conversation`, as native) — exactly what `NativeRuntime.make`
 *   takes, so both runtimes gate and route the same way.
 * - `agent`: the rest of the agent whose context the server delivers (persona, guidelines,
 *   scopes…; see `AgentContext`); its scope, Background and spec are `memory`'s. Default: an agent
 *   with no authored sections — the Background and the projection only.
 * - `operator`: also offer `memory_list`, `memory_review` and `memory_forget` (default true).
 * - `sessionId`: the session every connection's context turns are recorded under, numbered after
 *   its stored turns. Default: a session per connection, named by the client's `initialize` name
 *   and a connection id (`AgentContext.connectionSessionId`).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpConfig {
  readonly memory: MemoryTools.MemoryToolsConfig
  readonly agent?: StablePrefix.AgentConfig | undefined
  readonly operator?: boolean | undefined
  readonly sessionId?: string | undefined
}

/**
 * What the server needs in context: the stores the tools read and write, the projection the
 * context is built with (`ContextProjection.layer` over the stores) and the `TelemetryStore` it
 * logs to (a configured session's turns continue after its stored ones).
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | ContextProjection.ContextProjection
  | TelemetryStore.TelemetryStore

/**
 * The tool names a server with this configuration offers, in `tools/list` order.
 *
 * @since 0.1.0
 * @category registration
 */
export const toolNames = (config: McpConfig): ReadonlyArray<string> => [
  ...Object.keys(AgentContext.ContextToolkit.tools),
  ...Object.keys(MemoryTools.MemoryToolkit.tools),
  ...(config.operator === false ? [] : Object.keys(OperatorTools.OperatorToolkit.tools))
]

/**
 * One MCP tool as the server lists it (name, description, JSON schema of its input, hints) and
 * calls it (decoded arguments in, a `CallToolResult` out; it never fails).
 *
 * @since 0.1.0
 * @category registration
 */
export type McpTool = Internal.RegisteredTool

/**
 * A toolkit with its handlers as MCP tools: what {@link McpConfig} adds to the server is built
 * with it, and so can another toolkit served beside Engram's.
 *
 * @since 0.1.0
 * @category registration
 */
export const toolsOf: <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.WithHandler<Tools>
) => ReadonlyArray<McpTool> = Internal.toolsOf

const registry = (config: McpConfig): Effect.Effect<Internal.Registry, never, Requirements> =>
  Effect.gen(function*() {
    const stores = yield* Effect.context<Requirements>()
    const operator = [
      ...(config.operator === false ? [] : Internal.toolsOf(
        yield* Effect.provide(
          OperatorTools.OperatorToolkit,
          OperatorTools.layer({
            scope: config.memory.scope,
            promote: { background: config.memory.background, spec: config.memory.spec }
          })
        )
      ))
    ]
    // Each connection's context turns are a session of their own: the configured one, else the
    // client's name and a connection id.
    const connect = (client: { readonly name: string }) =>
      Effect.gen(function*() {
        const context = yield* AgentContext.make({
          memory: config.memory,
          agent: config.agent,
          sessionId: config.sessionId ?? AgentContext.connectionSessionId(client.name, randomUUID().slice(0, 8))
        })
        const general = Effect.map(context.contextFor(""), (view) => view.text).pipe(
          // Without context the server still serves its tools; the client reads why in the resource.
          Effect.catchAll((error) => Effect.succeed(`(Engram could not build the context: ${error.message})`))
        )
        yield* Effect.logInfo("MCP connection").pipe(
          Effect.annotateLogs({ client: client.name, sessionId: context.sessionId })
        )
        return {
          tools: [
            ...Internal.toolsOf(yield* Effect.provide(AgentContext.ContextToolkit, AgentContext.layer(context))),
            // The connection's session is where its restatements came from (decision 0174).
            ...Internal.toolsOf(yield* MemoryTools.handled({ ...config.memory, sessionId: context.sessionId })),
            ...operator
          ],
          resources: [{
            uri: AgentContext.CONTEXT_URI,
            name: "context",
            description:
              "Who the user is and how to work with them: the agent's prefix with the composed Background, " +
              "and the identity and always-on memory. Read it at the start of a conversation.",
            mimeType: "text/markdown",
            read: general
          }],
          // What Engram is and how to save comes first, so an empty store still instructs the client.
          instructions: Effect.map(general, (text) => [AgentContext.USAGE, text].filter((p) => p !== "").join("\n\n"))
        } satisfies Internal.Connection
      }).pipe(Effect.provide(stores))
    return { name: SERVER_NAME, version: SERVER_VERSION, offersResources: true, connect }
  })

/**
 * Serves on standard input and output (newline-delimited JSON-RPC; pass other streams to serve a
 * pipe) until the input ends, then closes the server and succeeds. Log to standard error only:
 * standard output carries the protocol.
 *
 * @since 0.1.0
 * @category serving
 */
export const serveStdio = (
  config: McpConfig,
  options: { readonly stdin?: Readable | undefined; readonly stdout?: Writable | undefined } = {}
): Effect.Effect<void, never, Requirements> =>
  Effect.scoped(Effect.gen(function*() {
    const built = yield* registry(config)
    const runtime = yield* Effect.runtime<never>()
    const transport = new Line.LineTransport(options.stdin ?? process.stdin, options.stdout ?? process.stdout)
    const server = yield* Effect.promise(() => Internal.makeServer(built, runtime))
    let resolveClosed: () => void = () => {}
    const closed = new Promise<void>((resolve) => {
      resolveClosed = resolve
    })
    server.onclose = () => resolveClosed()
    server.onerror = (error) => Runtime.runFork(runtime)(Effect.logWarning("MCP stdio", error.message))
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.promise(() => server.close())
    )
    yield* Effect.promise(() => closed)
  }))

/**
 * {@link serveStdio} as a layer: the server runs while the layer is alive; when the input ends,
 * the fiber that built the layer is interrupted (so `Layer.launch` returns).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStdio = (
  config: McpConfig,
  options: { readonly stdin?: Readable | undefined; readonly stdout?: Writable | undefined } = {}
): Layer.Layer<never, never, Requirements> =>
  Layer.scopedDiscard(
    Effect.gen(function*() {
      // The fiber building this layer (the launching one): interrupted when the input ends.
      const parent = Option.getOrUndefined(Fiber.getCurrentFiber())
      yield* serveStdio(config, options).pipe(
        Effect.zipRight(parent === undefined ? Effect.void : Fiber.interruptFork(parent)),
        Effect.forkScoped
      )
    })
  )

/**
 * The server over streamable HTTP at `path` (default `/mcp`) of the `HttpRouter.Default` router,
 * with the {@link OriginPolicy} checked on every request; serve that router with an HTTP server
 * layer (see {@link layerHttpServe}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttp = (
  config: McpConfig,
  options: OriginPolicy & { readonly path?: HttpRouter.PathInput | undefined } = {}
): Layer.Layer<never, never, Requirements> =>
  HttpRouter.Default.use((router) =>
    Effect.gen(function*() {
      const handler = yield* Internal.httpHandler(yield* registry(config), options)
      yield* router.all(options.path ?? "/mcp", handler)
    })
  )

/**
 * {@link layerHttp} and the router served: provide an `HttpServer` (e.g.
 * `NodeHttpServer.layer(createServer, { port: 8787 })`) and the {@link Requirements}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpServe = (
  config: McpConfig,
  options: OriginPolicy & { readonly path?: HttpRouter.PathInput | undefined } = {}
) => Layer.merge(layerHttp(config, options), HttpRouter.Default.serve())

/**
 * Engram's MCP server as an ACP agent launches it, for `AcpClient`'s `mcpServers`: the command
 * `engram mcp` with the given arguments (`--db`, `--agent`, `--scope`…) over stdio. `command`
 * defaults to `engram` (the installed CLI); pass `process.execPath` and the source entry's
 * arguments to run it from a checkout.
 *
 * @since 0.1.0
 * @category acp
 */
export const acpStdioServer = (options: {
  readonly args: ReadonlyArray<string>
  readonly command?: string | undefined
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly name?: string | undefined
}): Acp.McpServerStdio => ({
  name: options.name ?? SERVER_NAME,
  command: options.command ?? "engram",
  args: [...options.args],
  env: Object.entries(options.env ?? {}).map(([name, value]) => ({ name, value }))
})

/**
 * Engram's MCP server as an ACP agent reaches it over streamable HTTP (`engram mcp --http`, or
 * {@link layerHttpServe}), for `AcpClient`'s `mcpServers`. The agent must advertise
 * `mcpCapabilities.http`; `AcpClient` refuses the session otherwise.
 *
 * @since 0.1.0
 * @category acp
 */
export const acpHttpServer = (
  url: string,
  options: { readonly name?: string | undefined; readonly headers?: Readonly<Record<string, string>> | undefined } = {}
): Acp.McpServer => ({
  type: "http",
  name: options.name ?? SERVER_NAME,
  url,
  headers: Object.entries(options.headers ?? {}).map(([name, value]) => ({ name, value }))
})
