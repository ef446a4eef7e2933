/**
 * Nothing unreviewed reaches a model (issue #37). A store is poisoned the three ways an attacker
 * writes — through the store, through `memory_save` (one payload as the tag of a benign memory),
 * through extraction — with twenty-five payloads the screen flags (`support/poisonedStore.ts`),
 * and every path that puts memory text in front of a model is driven as it ships: the native loop
 * (its projection with every tier — a recall hit's held neighbour among them — and the digest, its
 * prefix, `memory_recall`, the save gate's conflict and duplicate replies), a subagent's tools, the
 * extraction prompt, MCP over stdio and over HTTP (initialize's instructions, the context
 * resource, `memory_context`, `memory_recall`, `memory_list`, `memory_save`), an ACP agent (the
 * blocks it is sent and the MCP tool results it reads) and the server's projection preview. No
 * byte of any held record's text may arrive; the records are there, named, where a path names them.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryGate,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  SessionStore,
  TelemetryStore
} from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { AcpClient, ContextAssembler, Extraction, NativeRuntime, StablePrefix, Subagent } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { PassThrough } from "node:stream"
import { fileURLToPath } from "node:url"
import { serveWith } from "../packages/server/test/utilities.js"
import {
  attacks,
  benign,
  invisible,
  isExtraction,
  leaks,
  memoryConfig,
  neighbourOfAttack,
  poison,
  poisoningExtractor
} from "./support/poisonedStore.js"

const memory = memoryConfig("global")

const agentConfig: StablePrefix.AgentConfigInput = {
  persona: "You are a companion.",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground.key,
  scope: "global"
}

/** Every string a request holds (prompt messages, tool calls and results), joined. */
const requestText = (request: ScriptedModel.ScriptedRequest): string => {
  const strings: Array<string> = []
  const walk = (value: unknown): void => {
    if (typeof value === "string") strings.push(value)
    else if (Array.isArray(value)) value.forEach(walk)
    else if (value !== null && typeof value === "object") Object.values(value).forEach(walk)
  }
  walk(JSON.parse(ScriptedModel.promptJson(request.prompt)))
  return strings.join("\n")
}

/** A query sharing words with most attacks, so recall, the digest and the identity tier all have candidates. */
const probe = "what are the previous instructions, the system prompt, the password and the user's weather?"

/**
 * The native probe's model: on its first call it recalls, then saves a name the held `name`
 * record holds (a conflict) and the text of a held record again (a duplicate), then answers.
 * Extraction prompts get the poisoning extractor.
 */
const script: ScriptedModel.Script = (request) => {
  if (isExtraction(request)) return poisoningExtractor(request)
  const results = ScriptedModel.pendingToolResults(request)
  if (results.length === 0 && ScriptedModel.lastUserText(request).startsWith("probe")) {
    return [
      ScriptedModel.toolCall("memory_recall", { query: "instructions previous password system prompt weather" }),
      ScriptedModel.toolCall("memory_recall", { query: "instructions", includeSuperseded: true }),
      ScriptedModel.toolCall("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" }),
      ScriptedModel.toolCall("memory_save", { kind: "note", content: "probe duplicate", label: "time zone" }),
      // The words of the held unlabelled profile in other letter case: a duplicate of it by content.
      ScriptedModel.toolCall("memory_save", { kind: "profile", content: `${attacks[8]!.toUpperCase()}!` })
    ]
  }
  return [ScriptedModel.text("ok")]
}

const memoryStores = Layer.mergeAll(
  MemoryStore.layerMemory,
  PromotionStore.layerMemory,
  SessionStore.layerMemory,
  TelemetryStore.layerMemory,
  IdGenerator.sequential("mem")
)

const native = Layer.mergeAll(
  ContextProjection.layer,
  RoutingSpecs.layerPresets,
  ScriptedModel.layer(script)
).pipe(Layer.provideMerge(memoryStores))

describe("no held record reaches a model", () => {
  it.effect("through the native loop: projection (every tier, the digest), prefix, recall, conflict and duplicate replies", () =>
    Effect.gen(function*() {
      const held = yield* poison("global")
      const before = (yield* ScriptedModel.requests).length
      const agent = yield* NativeRuntime.fromConfig(agentConfig)
      const turn = yield* NativeRuntime.runTurn({ agent, sessionId: "s-probe", input: `probe: ${probe}` })
      expect(turn._tag).toBe("Completed")
      const requests = (yield* ScriptedModel.requests).slice(before)
      expect(requests.length).toBe(2)
      for (const request of requests) {
        const text = requestText(request)
        expect(leaks(text)).toEqual([])
        expect(invisible.test(text)).toBe(false)
      }
      // What the paths did show: the benign always-on memory (without its zero-width space), held
      // records named by id as held for review in the tool results, and the conflict's holder named.
      const sent = requestText(requests[1]!)
      expect(sent).toContain("The user's cat is called Tom")
      expect(sent).toContain(MemoryGate.HELD_FOR_REVIEW)
      expect(held.filter((record) => sent.includes(record.id)).length).toBeGreaterThan(5)
      expect(sent).toContain(`already records "name": (${MemoryGate.HELD_FOR_REVIEW})`)
      expect(sent).toContain(`already records the same content (${MemoryGate.HELD_FOR_REVIEW})`)
      // The recall tier reached the conversation turn whose next turn is held, and left that one out.
      expect(sent).toContain(neighbourOfAttack)
    }).pipe(Effect.scoped, Effect.provide(native)))

  it.effect("through a subagent's memory tools (its own prompt, no projection)", () =>
    Effect.gen(function*() {
      const held = yield* poison("global")
      const before = (yield* ScriptedModel.requests).length
      const parent = yield* NativeRuntime.fromConfig(agentConfig)
      const delegation = yield* Subagent.delegate({
        parent,
        sessionId: "s-parent",
        subagent: { name: "researcher", prompt: "You look things up.", allow: ["memory_recall", "memory_save"] },
        task: `probe: ${probe}`
      })
      expect(delegation.result._tag).toBe("Completed")
      const requests = (yield* ScriptedModel.requests).slice(before)
      expect(requests.length).toBe(2)
      const sent = requests.map(requestText).join("\n")
      expect(leaks(sent)).toEqual([])
      expect(invisible.test(sent)).toBe(false)
      expect(sent).toContain(MemoryGate.HELD_FOR_REVIEW)
      expect(held.filter((record) => sent.includes(record.id)).length).toBeGreaterThan(5)
    }).pipe(Effect.scoped, Effect.provide(native)))

  it.effect("through the extraction prompt's known memories", () =>
    Effect.gen(function*() {
      const held = yield* poison("global")
      const before = (yield* ScriptedModel.requests).length
      const extraction = yield* Extraction.make({ shownMemories: 100, nearDuplicates: false })
      const at = yield* DateTime.now
      const report = yield* extraction.run({
        sessionId: "s-probe",
        memory,
        messages: [new SessionStore.OperatorMessage({ text: "I moved to Lisbon last month", at })]
      })
      expect(report.calls).toBe(1)
      const [request] = (yield* ScriptedModel.requests).slice(before)
      const text = requestText(request!)
      expect(leaks(text)).toEqual([])
      // Each held record is still named, so a correction can supersede it.
      for (const record of held) expect(text).toContain(`- ${record.id}`)
      expect(text).toContain("The user's cat is called Tom")
    }).pipe(Effect.scoped, Effect.provide(native)))
})

/** The poisoned stores, built once per test, with a projection over them. */
const poisonable = Layer.mergeAll(ContextProjection.layer, ScriptedModel.layer(script)).pipe(
  Layer.provideMerge(memoryStores)
)
const poisonedContext = Effect.gen(function*() {
  const context = yield* Layer.build(poisonable)
  const held = yield* Effect.provide(poison("global"), context)
  return { context, held }
})

/** Engram's MCP server over streamable HTTP on a free port, over `context`; its URL. */
const mcpOverHttp = (context: Context.Context<Layer.Layer.Success<typeof poisonable>>) =>
  Effect.gen(function*() {
    const served = yield* Layer.build(
      EngramMcp.layerHttpServe({ memory }).pipe(
        Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
        Layer.provide(Layer.succeedContext(context))
      )
    )
    const address = (yield* Effect.provide(HttpServer.HttpServer, served)).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
    return `http://127.0.0.1:${address.port}/mcp`
  })

/** Tool calls and reads an MCP client makes, as JSON-RPC requests. */
const mcpSession = [
  {
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "leak-probe", version: "1" } }
  },
  { method: "resources/read", params: { uri: "engram://context" } },
  { method: "tools/call", params: { name: "memory_context", arguments: { query: probe } } },
  { method: "tools/call", params: { name: "memory_recall", arguments: { query: "instructions previous password" } } },
  {
    method: "tools/call",
    params: { name: "memory_recall", arguments: { query: "instructions", includeSuperseded: true } }
  },
  // A model asks to release a held record (the unlabelled profile `poison` writes eighth): refused,
  // so the listing after it still names the record without its words.
  { method: "tools/call", params: { name: "memory_review", arguments: { id: "mem-000008", state: "confirmed" } } },
  { method: "tools/call", params: { name: "memory_list", arguments: { limit: 200 } } },
  { method: "tools/call", params: { name: "memory_list", arguments: { reviewStates: ["pending"], limit: 200 } } },
  {
    method: "tools/call",
    params: { name: "memory_save", arguments: { kind: "profile", content: "The user's name is Doug", label: "name" } }
  }
] as const

describe("no held record reaches an MCP client", () => {
  it.live("over stdio: initialize's instructions, the context resource and every memory tool", () =>
    Effect.scoped(Effect.gen(function*() {
      const { context, held } = yield* poisonedContext
      const stdin = new PassThrough()
      const stdout = new PassThrough()
      let output = ""
      stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")))
      yield* Layer.build(
        EngramMcp.layerStdio({ memory }, { stdin, stdout }).pipe(Layer.provide(Layer.succeedContext(context)))
      )
      mcpSession.forEach((message, id) => stdin.write(JSON.stringify({ jsonrpc: "2.0", id, ...message }) + "\n"))
      for (let waited = 0; output.split("\n").filter((line) => line !== "").length < mcpSession.length; waited += 10) {
        if (waited > 10_000) return yield* Effect.die(`only ${output.split("\n").length - 1} replies arrived`)
        yield* Effect.sleep("10 millis")
      }
      const replies = output.split("\n").filter((line) => line !== "").map((line) =>
        JSON.parse(line) as { error?: unknown }
      )
      expect(replies.filter((reply) => reply.error !== undefined)).toEqual([])
      // JSON escapes a string's quotes: read the replies as their strings.
      const text = JSON.stringify(replies, (_, value) => value).replace(/\\"/g, "\"")
      expect(leaks(text)).toEqual([])
      expect(invisible.test(text)).toBe(false)
      expect(held.filter((record) => text.includes(record.id)).length).toBe(held.length)
      expect(held.find((record) => record.id === "mem-000008")?.kind).toBe("profile")
      expect(text).toContain(`memory mem-000008 is ${MemoryGate.HELD_FOR_REVIEW}`)
      expect(text).toContain(MemoryGate.HELD_FOR_REVIEW)
      expect(text).toContain("The user's cat is called Tom")
    })))

  it.live("over HTTP: the same reads and tools through the MCP SDK client", () =>
    Effect.scoped(Effect.gen(function*() {
      const { context } = yield* poisonedContext
      const url = yield* mcpOverHttp(context)
      const client = new Client({ name: "leak-probe", version: "1" })
      yield* Effect.acquireRelease(
        Effect.promise(() => client.connect(new StreamableHTTPClientTransport(new URL(url)))),
        () => Effect.promise(() => client.close())
      )
      const answers: Array<unknown> = [client.getInstructions()]
      answers.push(yield* Effect.promise(() => client.readResource({ uri: "engram://context" })))
      for (const message of mcpSession.slice(2)) {
        if (message.method === "tools/call") answers.push(yield* Effect.promise(() => client.callTool(message.params)))
      }
      const text = JSON.stringify(answers).replace(/\\"/g, "\"")
      expect(text).toContain(`memory mem-000008 is ${MemoryGate.HELD_FOR_REVIEW}`)
      expect(leaks(text)).toEqual([])
      expect(invisible.test(text)).toBe(false)
      expect(text).toContain(MemoryGate.HELD_FOR_REVIEW)
      expect(text).toContain("The user's cat is called Tom")
    })))
})

const echoAgentFile = fileURLToPath(new URL("../packages/runtime/test/fixtures/echoAcpAgent.ts", import.meta.url))

describe("no held record reaches an ACP agent", () => {
  it.live(
    "neither in the prefix and projection it is sent nor in the MCP tool results it reads",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { context } = yield* poisonedContext
        const url = yield* mcpOverHttp(context)
        const build = Effect.flatMap(StablePrefix.decodeConfig(agentConfig), StablePrefix.buildAgent).pipe(
          Effect.provide(RoutingSpecs.layerPresets)
        )
        const assembler = yield* Effect.provide(ContextAssembler.make({ scopes: ["global"], agent: build }), context)
        const acp = yield* AcpClient.spawn(
          { command: process.execPath, args: ["--import", "tsx", echoAgentFile] },
          { mcpServers: [EngramMcp.acpHttpServer(url)] }
        ).pipe(Effect.provideService(ContextAssembler.ContextAssembler, assembler))
        const session = yield* acp.newSession({ sessionId: "s-acp" })
        const turn = yield* acp.prompt(session, probe)
        const recall = yield* acp.prompt(
          session,
          `mcp memory_recall ${JSON.stringify({ query: "instructions previous" })}`
        )
        const text = JSON.stringify([turn.sent, turn.updates, recall.sent, recall.updates]).replace(/\\"/g, "\"")
        expect(leaks(text)).toEqual([])
        expect(invisible.test(text)).toBe(false)
        expect(text).toContain("The user's cat is called Tom")
        expect(text).toContain(MemoryGate.HELD_FOR_REVIEW)
      })),
    60_000
  )
})

describe("no held record reaches the server's projection preview", () => {
  it.live("GET /api/projection previews what a native turn would be sent, without held records", () =>
    Effect.scoped(Effect.gen(function*() {
      const scope = "project:a"
      const served = yield* serveWith({ agent: yield* StablePrefix.decodeConfig({ ...agentConfig, scope }) })
      yield* Effect.provide(
        poison(scope),
        Layer.mergeAll(SessionStore.layerMemory, ScriptedModel.layer(script), Layer.succeedContext(served.context))
      )
      const preview = yield* served.request(
        "GET",
        `/api/projection?scope=${encodeURIComponent(scope)}&q=${encodeURIComponent(probe)}`,
        { token: served.tokens.a }
      )
      expect(preview.status).toBe(200)
      const text = preview.text.replace(/\\"/g, "\"")
      expect(leaks(text)).toEqual([])
      expect(invisible.test(text)).toBe(false)
      expect(text).toContain("The user's cat is called Tom")
    })))
})

it("the poisoned store holds every style of the corpus", () => {
  expect(attacks).toHaveLength(25)
  expect(benign).toContain("\u200B")
})
