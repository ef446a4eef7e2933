/**
 * Engram's memory as a Model Context Protocol server, built on `@effect/ai`'s `McpServer`.
 *
 * An agent Engram does not run — a desktop assistant, an editor, an ACP agent — saves and recalls
 * memories through the very toolkit the native runtime offers its model: `memory_save` and
 * `memory_recall` from `MemoryTools`, with the same save gate, routing and promotion, so a save
 * over MCP lands at the same address, conflicts the same way, and composes into the next prefix
 * or projection exactly as a native save would. Operators get `memory_list`, `memory_review` and `memory_forget`
 * beside them (see `OperatorTools`).
 *
 * Every registered toolkit goes through one function, {@link registerToolkit}: each tool's
 * JSON schema is derived from its `@effect/ai` parameters, arguments are decoded with them before
 * a handler runs, and a result is sent back as MCP structured content — with `isError` set when
 * the tool failed (a refused argument, a store that is down), never when it answered (a save
 * `conflict` is an answer).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { NodeRuntime } from "@effect/platform-node"
 * import { RoutingPresets } from "@engram/core"
 * import { EngramMcp } from "@engram/mcp"
 * import { SqliteDatabase } from "@engram/store-sqlite"
 *
 * EngramMcp.layerStdio({
 *   memory: { scope: "global", background: RoutingPresets.userBackgroundSections, spec: RoutingPresets.userBackground }
 * }).pipe(Layer.provide(SqliteDatabase.layer({ filename: ".engram/engram.db" })), Layer.launch, NodeRuntime.runMain)
 * ```
 *
 * @since 0.1.0
 */
import type * as Acp from "@agentclientprotocol/sdk"
import * as McpSchema from "@effect/ai/McpSchema"
import * as McpServer from "@effect/ai/McpServer"
import * as Tool from "@effect/ai/Tool"
import type * as Toolkit from "@effect/ai/Toolkit"
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as HttpRouter from "@effect/platform/HttpRouter"
import type { MemoryStore, PromotionStore } from "@engram/core"
import { MemoryTools } from "@engram/runtime"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
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
 * How the server is configured.
 *
 * - `memory`: the memory tools' configuration — scope, declared Background, routing spec,
 *   provenance of saves (default `conversation`, as native) — exactly what `NativeRuntime.make`
 *   takes, so both runtimes gate and route the same way.
 * - `operator`: also offer `memory_list`, `memory_review` and `memory_forget` (default true).
 *
 * @since 0.1.0
 * @category models
 */
export interface McpConfig {
  readonly memory: MemoryTools.MemoryToolsConfig
  readonly operator?: boolean | undefined
}

const describe = (error: unknown): string =>
  typeof error === "object" && error !== null && "message" in error && typeof error.message === "string"
    ? error.message
    : String(error)

// `Toolkit.handle` decodes its parameters with the tool's schema, so the JSON arguments an MCP
// client sends are what it takes at run time; its static type names the decoded form.
type HandleEncoded = (name: string, params: unknown) => Effect.Effect<Tool.HandlerResult<Tool.Any>, unknown>

const textResult = (value: unknown, isError: boolean): McpSchema.CallToolResult =>
  new McpSchema.CallToolResult({
    isError,
    ...(typeof value === "object" && value !== null ? { structuredContent: value } : {}),
    content: [{ type: "text", text: JSON.stringify(value) }]
  })

/**
 * Registers every tool of a toolkit (with its handlers) with the `McpServer` in context.
 *
 * @since 0.1.0
 * @category registration
 */
export const registerToolkit = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.WithHandler<Tools>
): Effect.Effect<void, never, McpServer.McpServer> =>
  Effect.gen(function*() {
    const server = yield* McpServer.McpServer
    const handle = toolkit.handle as HandleEncoded
    for (const tool of Object.values(toolkit.tools) as ReadonlyArray<Tool.Any>) {
      yield* server.addTool({
        tool: new McpSchema.Tool({
          name: tool.name,
          description: tool.description,
          inputSchema: Tool.getJsonSchemaFromSchemaAst(tool.parametersSchema.ast),
          annotations: new McpSchema.ToolAnnotations({
            readOnlyHint: Context.get(tool.annotations, Tool.Readonly),
            destructiveHint: Context.get(tool.annotations, Tool.Destructive),
            idempotentHint: Context.get(tool.annotations, Tool.Idempotent),
            openWorldHint: Context.get(tool.annotations, Tool.OpenWorld)
          })
        }),
        handle: (payload) =>
          handle(tool.name, payload).pipe(
            Effect.map((result) => textResult(result.encodedResult, result.isFailure)),
            Effect.catchAll((error) =>
              Effect.as(
                Effect.logWarning("an MCP tool call was refused").pipe(
                  Effect.annotateLogs({ tool: tool.name, problem: describe(error) })
                ),
                textResult({ error: describe(error) }, true)
              )
            ),
            Effect.withSpan("mcp.tool", { attributes: { tool: tool.name } })
          )
      })
    }
  })

/**
 * The tool names a server with this configuration offers, in `tools/list` order.
 *
 * @since 0.1.0
 * @category registration
 */
export const toolNames = (config: McpConfig): ReadonlyArray<string> => [
  ...Object.keys(MemoryTools.MemoryToolkit.tools),
  ...(config.operator === false ? [] : Object.keys(OperatorTools.OperatorToolkit.tools))
]

/**
 * Registers Engram's tools with the `McpServer` in context: the memory toolkit bound to the
 * stores in context, and (unless `operator: false`) the operator toolkit.
 *
 * @since 0.1.0
 * @category registration
 */
export const register = (
  config: McpConfig
): Effect.Effect<void, never, McpServer.McpServer | MemoryStore.MemoryStore | PromotionStore.PromotionStore> =>
  Effect.gen(function*() {
    yield* registerToolkit(yield* MemoryTools.handled(config.memory))
    if (config.operator !== false) {
      yield* registerToolkit(
        yield* Effect.provide(OperatorTools.OperatorToolkit, OperatorTools.layer({ scope: config.memory.scope }))
      )
    }
  })

/**
 * Engram's tools on the `McpServer` in context: a layer to put over any `@effect/ai` MCP server
 * layer (`McpServer.layer`, `layerStdio`, `layerHttp`…).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTools = (
  config: McpConfig
): Layer.Layer<never, never, McpServer.McpServer | MemoryStore.MemoryStore | PromotionStore.PromotionStore> =>
  Layer.effectDiscard(register(config))

/**
 * The server on this process's standard input and output (newline-delimited JSON-RPC). Log to
 * standard error only: standard output carries the protocol.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStdio = (
  config: McpConfig
): Layer.Layer<never, never, MemoryStore.MemoryStore | PromotionStore.PromotionStore> =>
  layerTools(config).pipe(
    Layer.provide(
      McpServer.layerStdio({
        name: SERVER_NAME,
        version: SERVER_VERSION,
        stdin: NodeStream.stdin,
        stdout: NodeSink.stdout
      })
    )
  )

/**
 * The server over streamable HTTP at `path` (default `/mcp`) of the `HttpRouter.Default` router;
 * serve that router with an HTTP server layer (see {@link layerHttpServe}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttp = (
  config: McpConfig,
  options: { readonly path?: HttpRouter.PathInput | undefined } = {}
): Layer.Layer<never, never, MemoryStore.MemoryStore | PromotionStore.PromotionStore> =>
  layerTools(config).pipe(
    Layer.provide(McpServer.layerHttp({ name: SERVER_NAME, version: SERVER_VERSION, path: options.path ?? "/mcp" }))
  )

/**
 * {@link layerHttp} and the router served: provide an `HttpServer` (e.g.
 * `NodeHttpServer.layer(createServer, { port: 8787 })`) and the stores.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHttpServe = (
  config: McpConfig,
  options: { readonly path?: HttpRouter.PathInput | undefined } = {}
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
