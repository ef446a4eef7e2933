/**
 * An external (ACP) agent writes through Engram's MCP server: `AcpClient` passes the server in
 * `session/new`, and the agent — a real ACP agent process, calling the server with the official
 * MCP SDK client — saves through the same toolkit, gate and routing a native agent uses.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { describe, expect, it } from "@effect/vitest"
import {
  IdGenerator,
  SessionStore,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  TelemetryStore
} from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { AcpClient, ContextAssembler, ContextProjection, NativeRuntime, Promotion, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { fileURLToPath } from "node:url"

const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/echoAcpAgent.ts", import.meta.url))
const echoAgent: AcpClient.AgentProcess = { command: process.execPath, args: ["--import", "tsx", fixture] }

const memory = {
  scope: "global",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
} as const

const stores = Layer.mergeAll(
  MemoryStore.layerMemory,
  PromotionStore.layerMemory,
  TelemetryStore.layerMemory,
  IdGenerator.sequential("mem")
)

/** Engram's MCP server over HTTP on a free port, over the stores; its URL. */
const mcpUrl = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  const address = server.address
  if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
  return `http://127.0.0.1:${address.port}/mcp`
})

const world = Layer.mergeAll(
  EngramMcp.layerHttpServe({ memory }),
  ContextAssembler.layer({ scopes: ["global"] }).pipe(Layer.provideMerge(ContextProjection.layer)),
  RoutingSpecs.layerPresets
).pipe(
  Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
  Layer.provideMerge(stores)
)

const thoughts = (outcome: AcpClient.PromptOutcome) =>
  outcome.updates.flatMap((update) =>
    update.sessionUpdate === "agent_thought_chunk" && update.content.type === "text" ? [update.content.text] : []
  )

const mcpResult = (outcome: AcpClient.PromptOutcome): unknown => {
  const line = thoughts(outcome).find((text) => text.startsWith("mcp: "))
  return line === undefined ? undefined : JSON.parse(line.slice("mcp: ".length))
}

describe("an ACP agent writes through Engram's MCP server", () => {
  it.live("session/new carries the server; the agent's save is gated and routed like a native save", () =>
    Effect.gen(function*() {
      const url = yield* mcpUrl
      const agent = yield* AcpClient.spawn(echoAgent, { mcpServers: [EngramMcp.acpHttpServer(url)] })
      const session = yield* agent.newSession({ sessionId: "s-ext" })
      const save = (args: Record<string, unknown>) => agent.prompt(session, `mcp memory_save ${JSON.stringify(args)}`)

      const saved = mcpResult(yield* save({ kind: "profile", content: "The user's name is Doug", label: "name" }))
      expect(saved).toEqual({ status: "saved", id: "mem-000001" })
      const conflict = mcpResult(yield* save({ kind: "profile", content: "The user's name is Douglas", label: "name" }))
      expect(conflict).toMatchObject({ status: "conflict", holder: { id: "mem-000001", label: "name" } })

      // Routed and promoted at save time, as native: the next build composes it into the prefix.
      const built = yield* StablePrefix.buildAgent(
        yield* StablePrefix.decodeConfig({ spec: "user-background", background: memory.background })
      )
      expect(built.text).toContain("The user's name is Doug")
      expect(built.composedIds).toEqual(["mem-000001"])
      const stored = yield* Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({}))
      expect(stored.records.map((record) => [record.content, record.sourceType])).toEqual([
        ["The user's name is Doug", "conversation"]
      ])
    }).pipe(Effect.scoped, Effect.provide(world)))

  it.live("a server over a transport the agent did not advertise is refused before session/new", () =>
    Effect.gen(function*() {
      const agent = yield* AcpClient.spawn(echoAgent, {
        mcpServers: [{ type: "sse", name: "engram", url: "http://127.0.0.1:1/sse", headers: [] }]
      })
      const error = yield* Effect.flip(agent.newSession())
      expect(error.message).toContain("does not accept MCP servers over these transports: engram (sse)")
    }).pipe(Effect.scoped, Effect.provide(world)))

  it("describes `engram mcp` as a stdio server for session/new", () => {
    expect(EngramMcp.acpStdioServer({ args: ["mcp", "--db", "/data/engram.db"], env: { NO_COLOR: "1" } })).toEqual({
      name: "engram",
      command: "engram",
      args: ["mcp", "--db", "/data/engram.db"],
      env: [{ name: "NO_COLOR", value: "1" }]
    })
  })
})

describe("ACP parity: the full model-visible context, native vs external", () => {
  const parityWorld = Layer.mergeAll(
    RoutingSpecs.layerPresets,
    SessionStore.layerMemory,
    ScriptedModel.layer(() => [ScriptedModel.text("ok")]),
    ContextProjection.layer
  ).pipe(Layer.provideMerge(stores))

  it.live("an ACP agent process receives the native prefix and projection byte for byte; the prefix again when it changes", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const [name] = yield* store.write([
        { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" },
        { content: "The staging database is db-2", kind: "fact", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([name!], memory)
      const config = yield* StablePrefix.decodeConfig({
        persona: "You are a companion.",
        spec: "user-background",
        background: memory.background
      })
      const build = StablePrefix.buildAgent(config)
      const built = yield* build
      expect(built.composedIds).toEqual([name!.id])
      const query = "Which staging database does Doug use?"

      // Native: what the model received.
      const agent = yield* NativeRuntime.make({ ...built, memory })
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-native", input: query })
      const [request] = yield* ScriptedModel.requests
      const nativeSystem = ScriptedModel.systemText(request!)
      const nativeProjection = ScriptedModel.userTexts(request!).find((text) => text.startsWith("<"))!

      // External: what a real ACP agent process received.
      const context = yield* Effect.context<MemoryStore.MemoryStore | PromotionStore.PromotionStore | RoutingSpecs.RoutingSpecs>()
      const assembler = yield* ContextAssembler.make(ContextAssembler.configFromAgent(built))
      const acp = yield* AcpClient.spawn(echoAgent, {
        prefix: Effect.map(Effect.orDie(build), (rebuilt) => rebuilt.text).pipe(Effect.provide(context))
      }).pipe(Effect.provideService(ContextAssembler.ContextAssembler, assembler))
      const session = yield* acp.newSession({ sessionId: "s-external" })
      const received = (outcome: AcpClient.PromptOutcome) =>
        (JSON.parse(outcome.text) as ReadonlyArray<{ readonly text: string }>).map((block) => block.text)

      const first = received(yield* acp.prompt(session, query))
      expect(first).toEqual([nativeSystem, nativeProjection, query])
      expect(nativeSystem).toContain("The user's name is Doug")
      expect(nativeProjection).toContain("db-2")

      // Unchanged prefix: not sent again.
      const second = received(yield* acp.prompt(session, query))
      expect(second).toEqual([nativeProjection, query])

      // A newly promoted memory changes the prefix: it is sent again, with the memory in it.
      const [home] = yield* store.write([
        { content: "The user lives in Lisbon", kind: "profile", label: "home", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([home!], memory)
      const third = received(yield* acp.prompt(session, "hello"))
      expect(third[0]).toContain("The user lives in Lisbon")
      expect(third[0]).toBe((yield* build).text)
    }).pipe(Effect.scoped, Effect.provide(parityWorld)))
})
