/**
 * What the MCP tests share: the memory config they serve, in-memory stores, and an MCP SDK client
 * connected over streamable HTTP to a server on a free port.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import {
  ContextProjection,
  type Embeddings,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  TelemetryStore
} from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"

/** The global scope with the user-background preset and its sections. */
export const memory = {
  scope: "global",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
} as const

/** In-memory stores and the projection over them; with `embeddings` the store keeps vectors over it. */
export const storesWith = (embeddings?: Layer.Layer<Embeddings.Embeddings>) =>
  ContextProjection.layer.pipe(
    Layer.provideMerge(
      embeddings === undefined
        ? MemoryStore.layerMemoryCascading
        : MemoryStore.layerMemoryCascadingWithVectors.pipe(Layer.provide(embeddings))
    ),
    Layer.provideMerge(Layer.mergeAll(
      PromotionStore.layerMemory,
      TelemetryStore.layerMemory,
      IdGenerator.sequential("mem")
    ))
  )

/** The stores without an embedder. */
export const stores = storesWith()

/** A tool call's answer as the SDK client returns it. */
export interface ToolResult {
  readonly isError?: boolean
  readonly structuredContent?: Record<string, unknown>
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string }>
}

/**
 * Serves the MCP server over HTTP on a free port, with the given stores, and connects an SDK
 * client to it. Everything is closed with the scope.
 */
export const connectedTo = <E>(
  storeLayer: Layer.Layer<Layer.Layer.Success<typeof stores>, E>
) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      EngramMcp.layerHttpServe({ memory }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
      ).pipe(Layer.provideMerge(storeLayer))
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    const client = new Client({ name: "engram-test", version: "1.0.0" })
    const url = `http://127.0.0.1:${address.port}/mcp`
    const transport = new StreamableHTTPClientTransport(new URL(url))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    const call = (name: string, args: Record<string, unknown>) =>
      Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<ToolResult>)
    return { client, call, context, url }
  })
