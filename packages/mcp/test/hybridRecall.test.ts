/**
 * `memory_recall` through the MCP SDK client, with and without an embedder in the store's
 * context: the embedding tier finds a memory that shares no word with the query, and without an
 * embedder recall stays lexical.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  Embeddings,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  SearchTokenizer,
  TelemetryStore
} from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"

const memory = {
  scope: "global",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
} as const

const storesWith = (embeddings: Layer.Layer<never> | Layer.Layer<Embeddings.Embeddings>) =>
  ContextProjection.layer.pipe(
    Layer.provideMerge(Layer.mergeAll(
      MemoryStore.layerMemory,
      PromotionStore.layerMemory,
      TelemetryStore.layerMemory,
      IdGenerator.sequential("mem")
    )),
    Layer.provide(embeddings)
  )

interface ToolResult {
  readonly isError?: boolean
  readonly structuredContent?: Record<string, unknown>
}

const withClient = <A>(
  embeddings: Layer.Layer<never> | Layer.Layer<Embeddings.Embeddings>,
  body: (call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>) => Effect.Effect<A>
) =>
  Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      EngramMcp.layerHttpServe({ memory }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provideMerge(storesWith(embeddings))
      )
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    const client = new Client({ name: "engram-test", version: "1.0.0" })
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`))
    yield* Effect.acquireRelease(
      Effect.promise(() => client.connect(transport)),
      () => Effect.promise(() => client.close())
    )
    return yield* body((name, args) =>
      Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<ToolResult>)
    )
  }))

const stored = "Doug runs PostgreSQL 16 for the billing service"
const query = "postgres setup?"

const recallIds = (call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>) =>
  Effect.gen(function*() {
    yield* call("memory_save", { kind: "fact", content: stored })
    yield* call("memory_save", { kind: "fact", content: "The office moved to Lisbon in spring" })
    const recalled = yield* call("memory_recall", { query })
    expect(recalled.isError).toBeFalsy()
    const memories = (recalled.structuredContent?.memories ?? []) as ReadonlyArray<{ content: string }>
    return memories.map((m) => m.content)
  })

describe("memory_recall with the embedding tier", () => {
  it("the query and the memory share no word", () => {
    const words = new Set(SearchTokenizer.tokenize(stored))
    expect(SearchTokenizer.tokenize(query).filter((token) => words.has(token))).toEqual([])
  })

  it.live("with the test embedder, recall finds the memory by sub-word overlap", () =>
    withClient(Embeddings.layerTest(), (call) =>
      Effect.gen(function*() {
        expect((yield* recallIds(call))[0]).toBe(stored)
      })))

  it.live("without an embedder, recall is lexical and finds nothing", () =>
    withClient(Layer.empty, (call) =>
      Effect.gen(function*() {
        expect(yield* recallIds(call)).toEqual([])
      })))
})
