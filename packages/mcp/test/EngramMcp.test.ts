/**
 * The MCP server through the official MCP SDK client, over streamable HTTP (the stdio transport
 * is tested through `engram mcp` in the CLI's tests): what an editor or desktop agent sees.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, MemoryStore, PromotionStore, RoutingSpecs } from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { Extraction, StablePrefix } from "@engram/runtime"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { connectedTo, memory, stores } from "./fixtures.js"

const connected = connectedTo(stores)

const run = <A, E>(self: (env: Effect.Effect.Success<typeof connected>) => Effect.Effect<A, E, never>) =>
  Effect.scoped(Effect.flatMap(connected, self))

describe("EngramMcp over streamable HTTP", () => {
  it.live("initializes as engram and lists the memory tools and the operator tools", () =>
    run(({ client }) =>
      Effect.gen(function*() {
        expect(client.getServerVersion()?.name).toBe("engram")
        const tools = (yield* Effect.promise(() => client.listTools())).tools
        expect(tools.map((tool) => tool.name)).toEqual(EngramMcp.toolNames({ memory }))
        expect(tools.map((tool) => tool.name)).toEqual([
          "memory_context",
          "memory_save",
          "memory_recall",
          "memory_list",
          "memory_review",
          "memory_forget"
        ])
        const save = tools.find((tool) => tool.name === "memory_save")!
        expect(Object.keys(save.inputSchema.properties ?? {}).sort()).toEqual(
          ["content", "kind", "label", "supersedes", "tags"]
        )
        expect(save.inputSchema.required).toEqual(["kind", "content"])
        expect(tools.find((tool) => tool.name === "memory_list")!.annotations?.readOnlyHint).toBe(true)
      })
    ))

  it.live("tool schemas carry no internal titles and describe every parameter; a bad argument is one short line", () =>
    run(({ call, client }) =>
      Effect.gen(function*() {
        const tools = (yield* Effect.promise(() => client.listTools())).tools
        for (const tool of tools) {
          // Effect's refinements title themselves "maxLength(64)", "between(1, 200)": not for a client.
          expect(JSON.stringify(tool.inputSchema)).not.toMatch(/"title":"[A-Za-z]+\(/)
          for (const [name, property] of Object.entries(tool.inputSchema.properties ?? {})) {
            expect((property as { description?: string }).description, `${tool.name}.${name}`).toEqual(
              expect.stringMatching(/\w/)
            )
          }
        }
        const content = tools.find((tool) => tool.name === "memory_save")!.inputSchema.properties!["content"]
        expect(content).toMatchObject({ type: "string", minLength: 1 })

        const bad = yield* call("memory_save", { kind: "nope", content: 5 })
        expect(bad.isError).toBe(true)
        const text = bad.content[0]!.text!
        expect(text.length).toBeLessThan(600)
        const error = (JSON.parse(text) as { error: string }).error
        expect(error).toBe(
          "invalid arguments for memory_save: kind: Expected \"profile\" | \"standing\" | \"fact\" | \"decision\" | " +
            "\"note\" | \"episode\" | \"reference\" | \"legacy\", actual \"nope\""
        )
      })
    ))

  it.live("GET /mcp without a session answers 405 and names the method to use", () =>
    run(({ url }) =>
      Effect.gen(function*() {
        const response = yield* Effect.promise(() => fetch(url, { headers: { accept: "text/event-stream" } }))
        expect(response.status).toBe(405)
        expect(response.headers.get("allow")).toBe("POST")
        const body = (yield* Effect.promise(() => response.json())) as { error: { message: string } }
        expect(body.error.message).toContain("initialize with POST first")
      })
    ))

  it.live("a save routes like a native save: it composes into the next prefix, and a fact into the next projection", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        const saved = yield* call("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })
        expect(saved.isError).toBe(false)
        expect(saved.structuredContent).toEqual({ status: "saved", id: "mem-000001", key: "name" })
        const fact = yield* call("memory_save", { kind: "fact", content: "The staging database runs Postgres 15" })
        expect(fact.structuredContent).toMatchObject({ status: "saved" })

        const next = yield* Effect.gen(function*() {
          // Routed and promoted at save time: the next agent build composes it into its Background.
          const agent = yield* StablePrefix.buildAgent(
            yield* StablePrefix.decodeConfig({ spec: "user-background", background: memory.background })
          )
          const projection = yield* Effect.flatMap(ContextProjection.ContextProjection, (service) =>
            service.project({
              sessionId: "s-1",
              turn: 1,
              query: "which staging database?",
              scopes: ["global"],
              mode: "native",
              inPrefix: agent.composedIds
            }))
          return { agent, projection }
        }).pipe(
          Effect.provide(RoutingSpecs.layerPresets),
          Effect.provide(context)
        )
        expect(next.agent.text).toContain("## About the User")
        expect(next.agent.text).toContain("The user's name is Doug")
        expect(next.agent.composedIds).toEqual(["mem-000001"])
        expect(next.projection.text).toContain("The staging database runs Postgres 15")
        expect(next.projection.injection.memoryIds).toEqual(["mem-000002"])
      })
    ))

  it.live("a restatement writes nothing and counts on the holder with the connection's session", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        yield* call("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })
        const again = yield* call("memory_save", { kind: "profile", content: "Like I said, my name is Doug." })
        expect(again.structuredContent).toMatchObject({ status: "corroborated", holder: "mem-000001" })
        const stored = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({})),
          context
        )
        expect(stored.records.map((record) => [record.content, record.corroboration?.count])).toEqual([
          ["The user's name is Doug", 1]
        ])
        // The session is the connection's: the client's name and a connection id (decision 0191).
        expect(stored.records[0]!.corroboration!.sessions).toEqual([expect.stringMatching(/.+/)])
      })
    ))

  it.live("a save takes the world time its words state, and none when they state none (decision 0178)", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        yield* call("memory_save", { kind: "fact", content: "Since March 2025 the user lives on Oak Avenue" })
        yield* call("memory_save", { kind: "fact", content: "Until 2024-05-03 the user worked at Acme" })
        yield* call("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })
        const stored = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({})),
          context
        )
        const iso = (at: DateTime.Utc | undefined) => at === undefined ? undefined : DateTime.formatIso(at)
        const bounds = new Map(stored.records.map((r) => [r.content, [iso(r.validFrom), iso(r.validTo)]] as const))
        expect(bounds.get("Since March 2025 the user lives on Oak Avenue")).toEqual([
          "2025-03-01T00:00:00.000Z",
          undefined
        ])
        expect(bounds.get("Until 2024-05-03 the user worked at Acme")).toEqual([undefined, "2024-05-03T00:00:00.000Z"])
        expect(bounds.get("The user's name is Doug")).toEqual([undefined, undefined])
      })
    ))

  it.live("a conflicting save returns the conflict envelope and writes nothing", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        yield* call("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })
        const conflict = yield* call("memory_save", {
          kind: "profile",
          content: "The user's name is Douglas",
          label: "name"
        })
        expect(conflict.isError).toBe(false)
        expect(conflict.structuredContent).toEqual({
          status: "conflict",
          holder: { id: "mem-000001", label: "name", key: "name", content: "The user's name is Doug" },
          retry: {
            tool: "memory_save",
            arguments: {
              kind: "profile",
              content: "The user's name is Douglas",
              label: "name",
              supersedes: "mem-000001"
            }
          },
          message: expect.stringContaining("\"supersedes\":\"mem-000001\"")
        })
        const stored = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({})),
          context
        )
        expect(stored.records.map((record) => record.content)).toEqual(["The user's name is Doug"])

        const replaced = yield* call("memory_save", {
          kind: "profile",
          content: "The user's name is Douglas",
          label: "name",
          supersedes: "mem-000001"
        })
        expect(replaced.structuredContent).toMatchObject({ status: "saved", superseded: "mem-000001" })
      })
    ))

  it.live("arguments are decoded before anything is written: a refused call is an error result", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        const refused = yield* call("memory_save", { kind: "gossip", content: "x" })
        expect(refused.isError).toBe(true)
        expect(refused.content[0]?.text).toContain("kind")
        const unknown = yield* call("memory_review", { id: "mem-404", state: "confirmed" })
        expect(unknown.isError).toBe(true)
        expect(unknown.structuredContent).toMatchObject({ message: "there is no memory mem-404 in scope global" })
        const stored = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({})),
          context
        )
        expect(stored.records).toEqual([])
      })
    ))

  it.live("memory_review confirming an extracted supersede proposal carries it out: the next context shows the new name", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        yield* call("memory_save", { kind: "profile", content: "The user's name is Doug", label: "name" })
        // What an extraction run writes when the conversation corrects the name.
        yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) =>
            store.write([{
              id: "m-proposal",
              content: "The user's name is Douglas",
              kind: "profile",
              label: "name",
              tags: ["from-session:s-1", "from-turns:2", Extraction.proposalTag("mem-000001")],
              scope: "global",
              sourceType: "extracted",
              deliveryPolicy: "on_demand"
            }])),
          context
        )
        const reviewed = yield* call("memory_review", { id: "m-proposal", state: "confirmed" })
        expect(reviewed.structuredContent).toMatchObject({
          status: "reviewed",
          memory: { reviewState: "confirmed", content: "The user's name is Douglas" }
        })
        const holder = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.get(["mem-000001"])),
          context
        )
        expect(holder.records[0]?.invalidatedAt).toBeDefined()
        const who = yield* call("memory_context", { query: "who am I?" })
        const text = who.content.map((c) => c.text ?? "").join("\n")
        expect(text).toContain("The user's name is Douglas")
        expect(text).not.toMatch(/The user's name is Doug(?!las)/)
      })
    ))

  it.live("operators list what waits for review and confirm it; recall finds it", () =>
    run(({ call }) =>
      Effect.gen(function*() {
        yield* call("memory_save", { kind: "standing", content: "Answer in short sentences", label: "length" })
        const pending = yield* call("memory_list", { reviewStates: ["pending"] })
        expect(pending.structuredContent).toMatchObject({
          memories: [{ id: "mem-000001", reviewState: "pending", sourceType: "conversation", scope: "global" }]
        })
        const reviewed = yield* call("memory_review", { id: "mem-000001", state: "confirmed" })
        expect(reviewed.structuredContent).toMatchObject({ status: "reviewed", memory: { reviewState: "confirmed" } })
        const stillPending = yield* call("memory_list", { reviewStates: ["pending"] })
        expect(stillPending.structuredContent).toEqual({ memories: [] })
        const recalled = yield* call("memory_recall", { query: "short sentences" })
        expect(recalled.structuredContent).toMatchObject({
          memories: [{ id: "mem-000001", content: "Answer in short sentences", reviewState: "confirmed" }]
        })
      })
    ))

  it.live("operators forget a memory of the scope: gone from recall, its promotion row gone, a tombstone left", () =>
    run(({ call, context }) =>
      Effect.gen(function*() {
        yield* call("memory_save", { kind: "profile", content: "The user's name is Douglas", label: "name" })
        yield* call("memory_save", { kind: "standing", content: "Answer in short sentences", label: "length" })
        const inspect = <A, E>(self: Effect.Effect<A, E, MemoryStore.MemoryStore | PromotionStore.PromotionStore>) =>
          Effect.provide(self, context)
        const rowsOf = inspect(Effect.flatMap(PromotionStore.PromotionStore, (p) => p.getByRecords(["mem-000001"])))
        expect((yield* rowsOf).rows.length).toBe(1)
        const forgotten = yield* call("memory_forget", { ids: ["mem-000001"] })
        expect(forgotten.structuredContent).toEqual({ status: "forgotten", forgotten: ["mem-000001"] })
        const recalled = yield* call("memory_recall", { query: "Douglas name" })
        expect(JSON.stringify(recalled.structuredContent)).not.toContain("Douglas")
        expect((yield* rowsOf).rows).toEqual([])
        const graves = yield* inspect(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.tombstones()))
        expect(graves.map((t) => [t.memoryId, t.forgottenBy])).toEqual([["mem-000001", "mcp:operator"]])
        const again = yield* call("memory_forget", { ids: ["mem-000001"] })
        expect(again.isError).toBe(true)
      })
    ))

  it.live("a server without operator tools offers the memory toolkit only", () =>
    Effect.gen(function*() {
      const context = yield* Layer.build(
        EngramMcp.layerHttpServe({ memory, operator: false }).pipe(
          Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
          Layer.provide(stores)
        )
      )
      const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
      if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
      const client = new Client({ name: "engram-test", version: "1.0.0" })
      yield* Effect.promise(() =>
        client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`)))
      )
      const names = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
      yield* Effect.promise(() => client.close())
      expect(names).toEqual(["memory_context", "memory_save", "memory_recall"])
    }).pipe(Effect.scoped))
})
