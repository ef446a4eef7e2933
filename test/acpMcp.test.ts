/**
 * An external (ACP) agent writes through Engram's MCP server: `AcpClient` passes the server in
 * `session/new`, and the agent — a real ACP agent process, calling the server with the official
 * MCP SDK client — saves through the same toolkit, gate and routing a native agent uses.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  PromptFragment,
  RoutingPresets,
  RoutingSpecs,
  SessionStore,
  TelemetryStore
} from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { AcpClient, ContextAssembler, NativeRuntime, Promotion, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:http"
import { tmpdir } from "node:os"
import * as Path from "node:path"
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
  ContextAssembler.layer({ scopes: ["global"] }),
  RoutingSpecs.layerPresets
).pipe(
  Layer.provideMerge(ContextProjection.layer),
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
      expect(saved).toEqual({ status: "saved", id: "mem-000001", key: "name" })
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

const repoRoot = fileURLToPath(new URL("..", import.meta.url))
/** `engram …` from source, as `npm run engram` runs it. */
const engramCli = (args: ReadonlyArray<string>) =>
  EngramMcp.acpStdioServer({
    command: process.execPath,
    args: [
      "--conditions=engram-source",
      "--import",
      "tsx",
      fileURLToPath(new URL("../packages/cli/src/bin.ts", import.meta.url)),
      ...args
    ],
    env: { NO_COLOR: "1" }
  })

describe("an ACP agent writes through `engram mcp` over stdio", () => {
  it.live(
    "session/new names the engram mcp command; the agent's save routes, and composes into the next prompt's prefix",
    () =>
      Effect.gen(function*() {
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(Path.join(tmpdir(), "engram-acp-"))),
          (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
        )
        const db = Path.join(dir, "engram.db")
        const sqlite = Layer.mergeAll(
          SqlitePromotionStore.layer,
          SqliteTelemetryStore.layer,
          RoutingSpecs.layerPresets
        )
          .pipe(
            Layer.provideMerge(
              SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db })))
            )
          )
        const context = yield* Layer.build(
          Layer.merge(ContextProjection.layer, IdGenerator.sequential("mem")).pipe(
            Layer.provideMerge(sqlite)
          )
        )
        const build = Effect.flatMap(StablePrefix.decodeConfig(parityConfig), StablePrefix.buildAgent)
        const assembler = yield* Effect.provide(ContextAssembler.make({ scopes: ["global"], agent: build }), context)
        const acp = yield* AcpClient.spawn(
          { ...echoAgent, cwd: repoRoot },
          { mcpServers: [engramCli(["mcp", "--db", db])] }
        ).pipe(Effect.provideService(ContextAssembler.ContextAssembler, assembler))
        const session = yield* acp.newSession({ sessionId: "s-stdio" })

        const before = yield* acp.prompt(session, "hello")
        expect(before.sent[0]).toEqual({ type: "text", text: "You are a companion." })

        const args = { kind: "profile", content: "The user's name is Doug", label: "name" }
        const saved = mcpResult(yield* acp.prompt(session, `mcp memory_save ${JSON.stringify(args)}`))
        expect(saved).toMatchObject({ status: "saved" })
        const id = (saved as { readonly id: string }).id

        // Saved by the engram mcp process, through the gate and routing: promoted into the
        // Background, so the next prompt carries the rebuilt prefix — the name once, there.
        const next = yield* acp.prompt(session, "What is my name?")
        const built = yield* Effect.provide(build, context)
        expect(built.composedIds).toEqual([id])
        expect(next.sent[0]).toEqual({ type: "text", text: built.text })
        expect(built.text).toContain("- **name**: The user's name is Doug")
        expect(JSON.stringify(next.sent.slice(1))).not.toContain("The user's name is Doug")
        const stored = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({})),
          context
        )
        expect(stored.records.map((r) => [r.id, r.content, r.sourceType, r.scope])).toEqual([
          [id, "The user's name is Doug", "conversation", "global"]
        ])
      }).pipe(Effect.scoped),
    120_000
  )
})

/**
 * What a native agent built now (from the current store) sends the model for `input`, on a fresh
 * session: its system message and its projection message.
 */
const nativeContext = (input: string, config: StablePrefix.AgentConfigInput = parityConfig) =>
  Effect.gen(function*() {
    const agent = yield* NativeRuntime.fromConfig(config)
    const sessionId = `s-native-${++nativeSessions}`
    yield* NativeRuntime.runTurn({ agent, sessionId, input })
    const request = (yield* ScriptedModel.requests).at(-1)!
    return {
      system: ScriptedModel.systemText(request),
      projection: ScriptedModel.userTexts(request).find((text) => text.startsWith("<")) ?? ""
    }
  })
let nativeSessions = 0

const parityConfig: StablePrefix.AgentConfigInput = {
  persona: "You are a companion.",
  spec: "user-background",
  background: memory.background
}

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
      const config = yield* StablePrefix.decodeConfig(parityConfig)
      const build = StablePrefix.buildAgent(config)
      const built = yield* build
      expect(built.composedIds).toEqual([name!.id])
      const query = "Which staging database does Doug use?"

      // Native: what the model received.
      const { projection: nativeProjection, system: nativeSystem } = yield* nativeContext(query)

      // External: what a real ACP agent process received. The assembler builds the agent again
      // for every turn: the prefix it sends and the ids its projection withholds come from one build.
      const assembler = yield* ContextAssembler.make({ scopes: built.scopes, agent: build })
      const acp = yield* AcpClient.spawn(echoAgent).pipe(
        Effect.provideService(ContextAssembler.ContextAssembler, assembler)
      )
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

      // A newly promoted memory changes the prefix: it is sent again, with the memory in it, and
      // the projection is the one a native agent built now would get — Lisbon once, in the prefix.
      const [home] = yield* store.write([
        { content: "The user lives in Lisbon", kind: "profile", label: "home", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([home!], memory)
      const later = "Does Doug still use the staging database from Lisbon?"
      const third = received(yield* acp.prompt(session, later))
      const native2 = yield* nativeContext(later)
      expect(third).toEqual([native2.system, native2.projection, later])
      expect(third[0]).toContain("The user lives in Lisbon")
      expect(third[1]).toContain("db-2")
      expect(third[1]).not.toContain("Lisbon")
    }).pipe(Effect.scoped, Effect.provide(parityWorld)))

  it.live("a prefix rebuilt mid-session: the projection withholds what the new prefix holds and delivers what left it", () =>
    Effect.gen(function*() {
      // The overlay budget holds one entry: a newly promoted, more important memory (the name comes
      // before a home in the vocabulary's order) pushes the older one out.
      const tight = { ...parityConfig, overlayBudget: { totalChars: 45 } }
      const store = yield* MemoryStore.MemoryStore
      const [home] = yield* store.write([
        { content: "The user lives in Lisbon", kind: "profile", label: "home", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([home!], memory)
      const build = Effect.flatMap(StablePrefix.decodeConfig(tight), StablePrefix.buildAgent)
      const assembler = yield* ContextAssembler.make({ scopes: ["global"], agent: build })
      const acp = yield* AcpClient.spawn(echoAgent).pipe(
        Effect.provideService(ContextAssembler.ContextAssembler, assembler)
      )
      const session = yield* acp.newSession({ sessionId: "s-rebuilt" })
      const received = (outcome: AcpClient.PromptOutcome) =>
        (JSON.parse(outcome.text) as ReadonlyArray<{ readonly text: string }>).map((block) => block.text)
      const query = "What is Doug's name and where does he live?"
      const first = received(yield* acp.prompt(session, query))
      expect(first[0]).toContain("The user lives in Lisbon")

      yield* Effect.sleep("10 millis")
      const [name] = yield* store.write([
        { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([name!], memory)
      const second = received(yield* acp.prompt(session, query))
      const native = yield* nativeContext(query, tight)
      // The new prefix holds Doug's name and no longer Lisbon…
      expect(second[0]).toContain("The user's name is Doug")
      expect(second[0]).not.toContain("The user lives in Lisbon")
      // …so the projection delivers Lisbon (it left the prefix) and never the name (it is in it).
      expect(second[1]).toContain("The user lives in Lisbon")
      expect(second[1]).not.toContain("The user's name is Doug")
      expect(second).toEqual([native.system, native.projection, query])
    }).pipe(Effect.scoped, Effect.provide(parityWorld)))

  it.live("an incognito ACP prompt sends the authored prefix and a projection without memory", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const [name] = yield* store.write([
        { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" },
        { content: "The staging database is db-2", kind: "fact", sourceType: "operator" }
      ])
      yield* Promotion.promoteNew([name!], memory)
      const build = Effect.flatMap(StablePrefix.decodeConfig(parityConfig), StablePrefix.buildAgent)
      const built = yield* build
      expect(built.text).toContain("The user's name is Doug")
      const assembler = yield* ContextAssembler.make({ scopes: ["global"], agent: build })
      const acp = yield* AcpClient.spawn(echoAgent).pipe(
        Effect.provideService(ContextAssembler.ContextAssembler, assembler)
      )
      const session = yield* acp.newSession({ sessionId: "s-incognito" })
      const query = "Which staging database is the user's?"
      const outcome = yield* acp.prompt(session, query, { mode: "incognito", workingState: "step 1" })
      const blocks = (JSON.parse(outcome.text) as ReadonlyArray<{ readonly text: string }>).map((b) => b.text)
      expect(blocks).toEqual([
        PromptFragment.joinPrompt(built.authoredPrefix),
        "<working_state>\nstep 1\n</working_state>",
        query
      ])
      expect(blocks.join("\n")).not.toContain("Doug")
      expect(blocks.join("\n")).not.toContain("db-2")
      const rows = yield* Effect.flatMap(TelemetryStore.TelemetryStore, (t) => t.listInjections("s-incognito"))
      expect(rows.rows).toMatchObject([{ mode: "incognito", memoryIds: [] }])

      // A prefix holding memory with no authored prefix to send instead is refused, as natively.
      const bare = yield* ContextAssembler.make({ scopes: ["global"], agent: { prefix: built.prefix } })
      const error = yield* Effect.flip(bare.compose("s-incognito-2", query, { mode: "incognito" }))
      expect(error._tag).toBe("IncognitoPrefixHoldsMemory")
    }).pipe(Effect.scoped, Effect.provide(parityWorld)))
})
