/**
 * The scope matrix on what answers carry: two scopes' data (records, a supersession chain across
 * the two scopes in each direction, forgotten records linked across them, stored model calls —
 * one of them a call whose projection read scope B but whose prefix was composed from a scope A
 * memory), a token for each, every HTTP route and every MCP tool called as each token against its
 * own and the other scope's ids and sessions. Every answer body is scanned for the other scope's
 * ids and text: a foreign id or fragment may appear only where the request itself named it.
 * Prints the figures.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, MemoryStore, RoutingPresets } from "@engram/core"
import { EngramMcp } from "@engram/mcp"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createServer } from "node:http"
import { routes, seed, seedSession, serve, type Served, sessionOf } from "../packages/server/test/utilities.js"

const A = "project:a"
const B = "project:b"
// Every id and text of a scope carries its marker, so a leak is a substring search.
const marker = (scope: string) => (scope === A ? "alpha" : "bravo")
const other = (scope: string) => (scope === A ? B : A)

/** The other scope's markers the body carries that the request did not name itself. */
const leaksIn = (body: string, request: string, scope: string): ReadonlyArray<string> => {
  const foreign = marker(other(scope))
  const found = body.toLowerCase().match(new RegExp(`[\\w:-]*${foreign}[\\w-]*`, "g")) ?? []
  return [...new Set(found)].filter((word) => !request.toLowerCase().includes(word))
}

/** Both scopes' fixtures, linked across the two scopes in every way the store allows. */
const seedScopes = (served: Served) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (const scope of [A, B]) {
      const m = marker(scope)
      yield* store.write([
        { id: `${m}-note`, content: `the ${m} secret note`, kind: "fact", scope },
        { id: `${m}-old`, content: `the ${m} old value`, kind: "fact", scope },
        { id: `${m}-gone`, content: `the ${m} forgotten value`, kind: "fact", scope }
      ])
    }
    // Supersession across scopes, both ways: alpha-old is superseded by a successor in B, and
    // bravo-old by one in A.
    for (const scope of [A, B]) {
      const m = marker(scope)
      const n = marker(other(scope))
      yield* store.supersede(`${m}-old`, {
        id: `${n}-new`,
        content: `the ${n} new value`,
        kind: "fact",
        scope: other(scope)
      })
      yield* store.supersede(`${m}-gone`, {
        id: `${n}-after`,
        content: `the ${n} value after`,
        kind: "fact",
        scope: other(scope)
      })
      // Forgotten: its tombstone keeps the link to the other scope's successor.
      yield* store.forget({ ids: [`${m}-gone`] }, { by: "test" })
    }
    const { records } = yield* store.get(["alpha-note", "bravo-note"])
    const [alpha, bravo] = records
    for (const [scope, note] of [[A, alpha!], [B, bravo!]] as const) {
      const m = marker(scope)
      yield* seedSession(served, {
        sessionId: sessionOf(scope),
        scope,
        secret: `the ${m} session`,
        memoryId: note.id,
        prefixMemory: { id: note.id, text: note.content },
        recall: [note]
      })
    }
    // The call of the report: its projection read B only, its prefix composed an A memory.
    yield* seedSession(served, {
      sessionId: "s-mixed",
      scope: B,
      secret: "the bravo mixed session",
      memoryId: "bravo-note",
      prefixMemory: { id: "alpha-note", text: alpha!.content },
      recall: [bravo!]
    })
  }).pipe(Effect.provide(served.context), Effect.orDie)

interface Figures {
  requests: number
  leaks: Array<string>
}

/** Calls `request`, scans its answer, and returns it. */
const scanned = (
  served: Served,
  figures: Figures,
  token: "a" | "b",
  method: string,
  path: string,
  body?: unknown
) =>
  Effect.gen(function*() {
    const scope = token === "a" ? A : B
    const answer = yield* served.request(method, path, { token: served.tokens[token], body })
    figures.requests++
    const leaks = leaksIn(answer.text, `${path} ${JSON.stringify(body ?? null)}`, scope)
    if (leaks.length > 0) figures.leaks.push(`${token} ${method} ${path} -> ${answer.status}: ${leaks.join(", ")}`)
    expect(answer.status, `${method} ${path}: ${answer.text}`).toBeLessThan(500)
    return answer
  })

let counter = 0

describe("scope matrix: what answers carry", () => {
  it.live("every HTTP route, as each scope's token, on its own and the other scope's ids: 0 foreign ids or text", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* seedScopes(served)
      const figures: Figures = { requests: 0, leaks: [] }
      // The report's cases, one by one.
      const a = (method: string, path: string, body?: unknown) => scanned(served, figures, "a", method, path, body)
      const b = (method: string, path: string, body?: unknown) => scanned(served, figures, "b", method, path, body)
      // Inspect and snapshots of the call whose prefix composed an A memory: not for B's token.
      expect((yield* b("GET", "/api/sessions/s-mixed/inspect")).status).toBe(404)
      expect((yield* b("GET", "/api/sessions/s-mixed/snapshots")).status).toBe(404)
      expect((yield* b("GET", "/api/sessions/s-project-b/inspect")).text).toContain("the bravo session")
      expect((yield* a("GET", "/api/sessions/s-project-a/inspect")).text).toContain("the alpha secret note")
      // A record superseded across scopes: superseded, never saying by what.
      const old = (yield* a("GET", "/api/memories/alpha-old")).json as {
        record: { supersededBy?: string; invalidatedAt?: string; invalidationReason?: string }
        history: Array<{ id: string }>
      }
      expect(old.record.invalidatedAt).toBeDefined()
      expect(old.record.supersededBy).toBeUndefined()
      expect(old.record.invalidationReason).toBe("superseded")
      expect(old.history.map((link) => link.id)).toEqual(["alpha-old"])
      const successor = (yield* a("GET", "/api/memories/alpha-new")).json as { history: Array<{ id: string }> }
      expect(successor.history.map((link) => link.id)).toEqual(["alpha-new"])
      const graves = (yield* a("GET", "/api/tombstones")).json as {
        tombstones: Array<{ memoryId: string; supersededBy?: string }>
      }
      expect(graves.tombstones).toEqual([expect.objectContaining({ memoryId: "alpha-gone" })])
      expect(graves.tombstones[0]!.supersededBy).toBeUndefined()
      // Creating with an id: one refusal whatever the id — taken in the other scope, in one's own,
      // or free — so it says nothing of what exists.
      const attempts = []
      for (const id of ["bravo-note", "alpha-note", "never-used-9"]) {
        attempts.push(yield* a("POST", "/api/memories", { id, content: "x", kind: "note", scope: A }))
      }
      expect(attempts.map((answer) => answer.status)).toEqual([400, 400, 400])
      expect(new Set(attempts.map((answer) => answer.text)).size).toBe(1)
      const supersedeWithId = yield* a("POST", "/api/memories/alpha-note/supersede", {
        id: "bravo-note",
        content: "y",
        kind: "note"
      })
      expect(supersedeWithId.status).toBe(400)
      expect(supersedeWithId.text).toBe(attempts[0]!.text)

      for (const token of ["a", "b"] as const) {
        const own = token === "a" ? A : B
        for (const target of [own, other(own)]) {
          // The shared fixtures, read every way a route can reach them.
          const m = marker(target)
          for (const id of [`${m}-note`, `${m}-old`, `${m}-gone`, `${m}-new`, `${m}-after`]) {
            yield* scanned(served, figures, token, "GET", `/api/memories/${id}`)
            yield* scanned(served, figures, token, "GET", `/api/memories/${id}/explain`)
            yield* scanned(served, figures, token, "GET", `/api/memories/${id}/explain?session=${sessionOf(target)}`)
          }
          for (const session of [sessionOf(target), "s-mixed"]) {
            yield* scanned(served, figures, token, "GET", `/api/sessions/${session}/snapshots`)
            yield* scanned(served, figures, token, "GET", `/api/sessions/${session}/inspect`)
            yield* scanned(served, figures, token, "GET", `/api/memories/bravo-note/explain?session=${session}`)
          }
        }
        const q = `scope=${encodeURIComponent(own)}`
        for (
          const path of [
            `/api/memories?includeSuperseded=true&limit=200&${q}`,
            `/api/memories/search?q=value+new+after+old+secret&includeSuperseded=true&${q}`,
            `/api/tombstones?${q}`
          ]
        ) yield* scanned(served, figures, token, "GET", path)
      }

      // Then every route, on records made for each call (the writes among them change or forget
      // what they touch, forgetting a whole scope included, so they come last).
      for (const token of ["a", "b"] as const) {
        const own = token === "a" ? A : B
        for (const target of [own, other(own)]) {
          for (const route of routes) {
            const m = marker(target)
            const id = `${m}-fresh-${++counter}`
            yield* seed(served, [{ id, content: `the ${m} fresh secret ${counter}`, kind: "standing", scope: target }])
            const { body, method, path } = route.request(target, id)
            yield* scanned(served, figures, token, method, path, body)
          }
        }
      }

      console.log(
        `scope matrix (answers): ${figures.requests} HTTP requests, ${figures.leaks.length} foreign ids or text`
      )
      expect(figures.leaks).toEqual([])
      expect(figures.requests).toBeGreaterThan(routes.length * 4)
    })))

  it.live("every MCP tool, on a server for each scope over the same stores: 0 foreign ids or text", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* seedScopes(served)
      const connect = (scope: string) =>
        Effect.gen(function*() {
          const memory = {
            scope,
            background: RoutingPresets.userBackgroundSections,
            spec: RoutingPresets.userBackground
          } as const
          const context = yield* Layer.build(
            EngramMcp.layerHttpServe({ memory }).pipe(
              Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })),
              Layer.provide(IdGenerator.sequential(`mcp${scope === A ? "x" : "y"}`)),
              Layer.provide(ContextProjection.layer),
              Layer.provide(Layer.succeedContext(served.context))
            )
          )
          const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
          if (address._tag !== "TcpAddress") return yield* Effect.die("expected a TCP address")
          const client = new Client({ name: "engram-scope-matrix", version: "1.0.0" })
          const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`))
          yield* Effect.acquireRelease(
            Effect.promise(() => client.connect(transport)),
            () => Effect.promise(() => client.close())
          )
          return client
        })
      let requests = 0
      const leaks: Array<string> = []
      const toolsSeen = new Set<string>()
      for (const scope of [A, B]) {
        const client = yield* connect(scope)
        const call = (name: string, args: Record<string, unknown>) =>
          Effect.gen(function*() {
            const result = yield* Effect.promise(() => client.callTool({ name, arguments: args }))
            requests++
            toolsSeen.add(name)
            const found = leaksIn(JSON.stringify(result), JSON.stringify(args), scope)
            if (found.length > 0) leaks.push(`${scope} ${name} ${JSON.stringify(args)}: ${found.join(", ")}`)
            return result as { isError?: boolean; content: Array<{ text?: string }> }
          })
        const m = marker(scope)
        for (const target of [scope, other(scope)]) {
          const t = marker(target)
          for (const id of [`${t}-note`, `${t}-old`, `${t}-gone`, `${t}-new`, `${t}-after`]) {
            yield* call("memory_save", { kind: "fact", content: `${m} correction ${id}`, supersedes: id })
            yield* call("memory_review", { id, state: "confirmed" })
          }
          yield* call("memory_forget", { ids: [`${t}-gone`, `${t}-new`] })
        }
        yield* call("memory_save", { kind: "fact", content: `the ${m} saved fact` })
        yield* call("memory_recall", { query: "value new after old secret note", includeSuperseded: true })
        yield* call("memory_recall", { query: "value new after old secret note" })
        yield* call("memory_list", { includeSuperseded: true, limit: 200 })
        yield* call("memory_list", {})
        // The context the server delivers: the tool, the resource and initialize's instructions.
        yield* call("memory_context", { query: "value new after old secret note" })
        yield* call("memory_context", {})
        const resource = yield* Effect.promise(() => client.readResource({ uri: "engram://context" }))
        const instructions = client.getInstructions() ?? ""
        for (const [channel, text] of [["resource", JSON.stringify(resource)], ["instructions", instructions]]) {
          const found = leaksIn(text!, "", scope)
          if (found.length > 0) leaks.push(`${scope} ${channel}: ${found.join(", ")}`)
        }
        // Superseding a record another scope's successor superseded: refused, not naming it.
        const refused = yield* call("memory_save", {
          kind: "fact",
          content: "again",
          supersedes: `${m}-old`
        })
        expect(refused.isError).toBe(true)
        expect(refused.content[0]?.text).toMatch(/already superseded/)
        const tools = (yield* Effect.promise(() => client.listTools())).tools.map((tool) => tool.name)
        expect([...toolsSeen].sort()).toEqual([...tools].sort())
      }
      console.log(
        `scope matrix (MCP): ${requests} tool calls over ${toolsSeen.size} tools, ${leaks.length} foreign ids or text`
      )
      expect(leaks).toEqual([])
    })))
})
