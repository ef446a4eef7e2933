/**
 * What an MCP client is given to read, through the official SDK client over streamable HTTP:
 * `initialize`'s instructions hold the composed Background, the context resource the same text,
 * and `memory_context` answers "who am I?" with the user's name — through the prefix for an agent
 * that declares user sections, through the identity tier for one that declares none. And the
 * transport's `Host`/`Origin` check: a foreign page is refused before anything runs.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  TelemetryStore
} from "@engram/core"
import { AgentContext, EngramMcp } from "@engram/mcp"
import { Agent, PromptObserver, StablePrefix } from "@engram/runtime"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer, request as httpRequest } from "node:http"

const withSections = {
  scope: "global",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
} as const
const withoutSections = { ...withSections, background: { sections: [] } } as const

const stores = () =>
  Layer.mergeAll(ContextProjection.layer, PromptObserver.layerCapture).pipe(
    Layer.provideMerge(MemoryStore.layerMemoryCascading),
    Layer.provideMerge(Layer.mergeAll(
      PromotionStore.layerMemory,
      TelemetryStore.layerMemory,
      IdGenerator.sequential("mem")
    ))
  )

interface ToolResult {
  readonly isError?: boolean
  readonly structuredContent?: Record<string, unknown>
}

/** A server for `config` on a free port over fresh stores; `connect` opens a new MCP session. */
const serving = (config: EngramMcp.McpConfig, policy: EngramMcp.OriginPolicy = {}) =>
  Effect.gen(function*() {
    const context = yield* Layer.build(
      EngramMcp.layerHttpServe(config, policy).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provideMerge(stores())
      )
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    const url = `http://127.0.0.1:${address.port}/mcp`
    const connect = Effect.gen(function*() {
      const client = new Client({ name: "engram-test", version: "1.0.0" })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
        () => Effect.promise(() => client.close())
      )
      const call = (name: string, args: Record<string, unknown>) =>
        Effect.promise(() => client.callTool({ name, arguments: args }) as Promise<ToolResult>)
      return { client, call }
    })
    return { connect, context, url, port: address.port }
  })

const saveName = (call: (name: string, args: Record<string, unknown>) => Effect.Effect<ToolResult>) =>
  Effect.gen(function*() {
    const saved = yield* call("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })
    expect(saved.structuredContent).toMatchObject({ status: "saved" })
  })

describe("the context an MCP client reads", () => {
  it.live("initialize's instructions and the context resource hold the composed Background", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({
        memory: withSections,
        agent: yield* StablePrefix.decodeConfig({ persona: "You are a patient French tutor." })
      })
      const first = yield* server.connect
      expect(first.client.getInstructions()).toContain("You are a patient French tutor.")
      yield* saveName(first.call)

      // A session opened after the save is initialized with it in its Background.
      const next = yield* server.connect
      const instructions = next.client.getInstructions() ?? ""
      expect(instructions).toContain("You are a patient French tutor.")
      expect(instructions).toContain("## About the User")
      expect(instructions).toContain("The user's name is Doug")
      const resources = (yield* Effect.promise(() => next.client.listResources())).resources
      expect(resources.map((resource) => resource.uri)).toEqual([AgentContext.CONTEXT_URI])
      const read = yield* Effect.promise(() => next.client.readResource({ uri: AgentContext.CONTEXT_URI }))
      const text = instructions.slice(AgentContext.USAGE.length + 2)
      expect(instructions).toBe(AgentContext.USAGE + "\n\n" + text)
      expect(read.contents).toEqual([{ uri: AgentContext.CONTEXT_URI, mimeType: "text/markdown", text }])
    })))

  it.live("memory_context answers who the user is, through the Background when the agent declares it", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withSections })
      const { call } = yield* server.connect
      yield* saveName(call)
      const context = yield* call("memory_context", { query: "who am I?" })
      expect(context.isError).toBe(false)
      expect(context.structuredContent?.["background"]).toContain("The user's name is Doug")
      expect(context.structuredContent?.["text"]).toContain("The user's name is Doug")
      expect(context.structuredContent?.["memoryIds"]).toEqual(["mem-000001"])
    })))

  it.live("memory_context answers who the user is through the identity tier when the agent declares no user section", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withoutSections })
      const { call } = yield* server.connect
      yield* saveName(call)
      const context = yield* call("memory_context", { query: "who am I?" })
      expect(context.structuredContent?.["background"]).not.toContain("Doug")
      expect(context.structuredContent?.["projection"]).toContain("The user's name is Doug")
      expect(context.structuredContent?.["projection"]).toContain("<injected_memory>")
      expect(context.structuredContent?.["memoryIds"]).toEqual(["mem-000001"])
    })))

  it.live("memory_context is the projection a native turn gets: planTurn and ContextProjection, byte for byte", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withoutSections, sessionId: "mcp-s" })
      const { call } = yield* server.connect
      yield* saveName(call)
      yield* call("memory_save", { kind: "fact", content: "The staging database runs Postgres 15" })
      const served = yield* call("memory_context", { query: "which staging database?" })
      const native = yield* Effect.gen(function*() {
        const agent = yield* StablePrefix.buildAgent(AgentContext.agentConfigOf({ memory: withoutSections }))
        const plan = yield* Agent.planTurn(agent, {
          sessionId: "mcp-s",
          turn: 1,
          query: "which staging database?",
          mode: "external",
          scopes: agent.scopes,
          record: false
        })
        return yield* Effect.flatMap(ContextProjection.ContextProjection, (p) => p.project(plan.request))
      }).pipe(
        Effect.provide(Layer.succeedContext(server.context)),
        Effect.provide(RoutingSpecs.layerPresets)
      )
      expect(served.structuredContent?.["projection"]).toBe(native.text)
      expect(native.text).toContain("The staging database runs Postgres 15")
      // Reported to the PromptObserver as a native call is: one snapshot per context turn (the
      // session's instructions were turn 1; turns are counted from 1, as the native loop counts).
      const captured = yield* Effect.provide(PromptObserver.captured, server.context)
      expect(captured.map((snapshot) => [snapshot.sessionId, snapshot.turn])).toEqual([
        ["mcp-s", 1],
        ["mcp-s", 2]
      ])
    })))
})

describe("a session per MCP connection", () => {
  it.live("two clients in a row: two sessions, each numbered from turn 1 with a snapshot per call; instructions on an empty store", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withoutSections })
      for (const query of ["who am I?", "what do I like?"]) {
        const { call, client } = yield* server.connect
        // Nothing is stored yet, and the client is still told what Engram is and how to save.
        expect(client.getInstructions()).toBe(AgentContext.USAGE)
        expect(client.getInstructions()).toContain("memory_save")
        expect((yield* call("memory_context", { query })).isError).toBe(false)
      }
      const captured = yield* Effect.provide(PromptObserver.captured, server.context)
      const sessions = [...new Set(captured.map((snapshot) => snapshot.sessionId))]
      expect(sessions).toHaveLength(2)
      for (const sessionId of sessions) expect(sessionId).toMatch(/^engram-test-[0-9a-f]{8}$/)
      expect(captured.map((snapshot) => [snapshot.sessionId, snapshot.turn, snapshot.call])).toEqual([
        [sessions[0], 1, 0],
        [sessions[0], 2, 0],
        [sessions[1], 1, 0],
        [sessions[1], 2, 0]
      ])
    })))

  it.live("a configured session resumes after its stored turns", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withoutSections, sessionId: "desk" })
      for (let n = 0; n < 2; n++) {
        const { call } = yield* server.connect
        yield* call("memory_context", { query: "who am I?" })
      }
      const captured = yield* Effect.provide(PromptObserver.captured, server.context)
      expect(captured.map((snapshot) => [snapshot.sessionId, snapshot.turn])).toEqual([
        ["desk", 1],
        ["desk", 2],
        ["desk", 3],
        ["desk", 4]
      ])
    })))
})

describe("the HTTP transport's Host and Origin check", () => {
  const initialize = JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "page", version: "1" } }
  })
  // node:http, not fetch: fetch does not let a caller set Host, and a rebinding attacker's does.
  const post = (url: string, headers: Record<string, string>) =>
    Effect.async<{ readonly status: number; readonly body: string }>((resume) => {
      const request = httpRequest(url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers }
      }, (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => (body += chunk))
        response.on("end", () => resume(Effect.succeed({ status: response.statusCode ?? 0, body })))
      })
      request.on("error", (error) => resume(Effect.die(error)))
      request.end(initialize)
    })

  it.live("refuses a foreign Origin and a foreign Host (DNS rebinding) before anything runs; serves loopback", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withSections })
      const foreign = yield* post(server.url, { origin: "http://evil.example" })
      expect(foreign.status).toBe(403)
      expect(JSON.parse(foreign.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
      expect(foreign.body).toContain("evil.example")
      const rebound = yield* post(server.url, { host: `evil.example:${server.port}` })
      expect(rebound.status).toBe(403)
      const nullOrigin = yield* post(server.url, { origin: "null" })
      expect(nullOrigin.status).toBe(403)
      const page = yield* post(server.url, { origin: `http://localhost:${server.port}` })
      expect(page.status).toBe(200)
      expect(page.body).toContain("\"serverInfo\"")
      const tool = yield* post(server.url, {})
      expect(tool.status).toBe(200)
    })))

  it.live("with a bearer token, a request without it (or with another) is 401 before anything runs", () =>
    Effect.scoped(Effect.gen(function*() {
      const server = yield* serving({ memory: withSections }, { bearerToken: "s3cret-token" })
      const bare = yield* post(server.url, {})
      expect(bare.status).toBe(401)
      expect(JSON.parse(bare.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
      expect((yield* post(server.url, { authorization: "Bearer s3cret-tokem" })).status).toBe(401)
      const signed = yield* post(server.url, { authorization: "Bearer s3cret-token" })
      expect(signed.status).toBe(200)
      expect(signed.body).toContain("\"serverInfo\"")
    })))

  it("an allow-list replaces the defaults: listed hosts and origins only", () => {
    const policy = { allowedHosts: ["mcp.internal"], allowedOrigins: ["https://app.example"] }
    expect(EngramMcp.refusal({ host: "mcp.internal:8787", origin: undefined }, policy)).toBeUndefined()
    expect(EngramMcp.refusal({ host: "mcp.internal", origin: "https://app.example" }, policy)).toBeUndefined()
    expect(EngramMcp.refusal({ host: "127.0.0.1:8787", origin: undefined }, policy)).toContain("Host")
    expect(EngramMcp.refusal({ host: "mcp.internal", origin: "http://mcp.internal" }, policy)).toContain("Origin")
    expect(EngramMcp.refusal({ host: undefined, origin: undefined }, {})).toContain("no Host")
    expect(EngramMcp.refusal({ host: "[::1]:9", origin: "http://[::1]:3000" }, {})).toBeUndefined()
  })
})
