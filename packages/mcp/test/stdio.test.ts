/**
 * The stdio transport under hostile input: `EngramMcp.layerStdio` on a pipe, fed raw lines. Every
 * malformed line is answered per JSON-RPC 2.0 and the next one is served; a schema-blind fuzz of
 * 2,000 lines (a ping after every 20th) leaves every ping answered and every reply well-formed.
 */
import { describe, expect, it } from "@effect/vitest"
import { EngramMcp } from "@engram/mcp"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fc from "fast-check"
import { PassThrough } from "node:stream"
import { memory, stores } from "./fixtures.js"

interface Reply {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly result?: unknown
  readonly error?: { readonly code?: unknown; readonly message?: unknown }
}

/** A server on a pipe: `send` writes raw text, `replies` holds every line it wrote, parsed. */
const piped = Effect.gen(function*() {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const replies: Array<Reply> = []
  const raw: Array<string> = []
  let rest = ""
  stdout.on("data", (chunk: Buffer) => {
    const lines = (rest + chunk.toString("utf8")).split("\n")
    rest = lines.pop()!
    for (const line of lines) {
      raw.push(line)
      replies.push(JSON.parse(line) as Reply)
    }
  })
  yield* Layer.build(EngramMcp.layerStdio({ memory }, { stdin, stdout }).pipe(Layer.provide(stores)))
  const send = (text: string) => Effect.sync(() => stdin.write(text))
  /** Waits until a reply with this id arrives (or fails after a few seconds: a wedged transport). */
  const answer = (id: string | number) =>
    Effect.gen(function*() {
      for (let waited = 0; waited < 5_000; waited += 5) {
        const found = replies.find((reply) => reply.id === id)
        if (found !== undefined) return found
        yield* Effect.sleep("5 millis")
      }
      return yield* Effect.die(`no reply to ${id}: the transport is wedged`)
    })
  const ping = (id: string) =>
    Effect.zipRight(send(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }) + "\n"), answer(id))
  return { send, answer, ping, replies, raw, stdin }
})

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "fuzz", version: "1" } }
}) + "\n"

describe("engram mcp over stdio, under bad input", () => {
  it.live("answers each malformed line with the JSON-RPC error and keeps serving", () =>
    Effect.scoped(Effect.gen(function*() {
      const { answer, ping, replies, send } = yield* piped
      yield* send(initialize)
      const init = yield* answer(0)
      expect(init.result).toMatchObject({ serverInfo: { name: "engram" } })

      const malformed = ["", "   ", "garbage", "{\"jsonrpc\":", "\u0000", "{]", "\uFEFF{"]
      for (const [n, line] of malformed.entries()) {
        const before = replies.length
        yield* send(line + "\n")
        yield* ping(`after-${n}`)
        const [error, pong] = replies.slice(before)
        expect(error).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
        expect(pong).toMatchObject({ jsonrpc: "2.0", id: `after-${n}`, result: {} })
      }

      // JSON that is not a JSON-RPC message: invalid request, with the id when there is a usable one.
      yield* send(JSON.stringify({ id: 7, method: 3 }) + "\n")
      expect((yield* answer(7)).error).toMatchObject({ code: -32600 })
      yield* send("42\n[]\n[{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}]\n")
      yield* ping("after-batch")
      expect(replies.filter((reply) => reply.error?.code === -32600 && reply.id === null)).toHaveLength(3)

      // Unknown methods: -32601 in error.code, the id as sent (a string stays a string).
      yield* send(JSON.stringify({ jsonrpc: "2.0", id: "abc", method: "no/such" }) + "\n")
      const unknown = yield* answer("abc")
      expect(unknown.error).toMatchObject({ code: -32601 })
      expect(unknown.id).toBe("abc")

      // Notifications get no reply, known or not.
      const before = replies.length
      yield* send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
      yield* send(JSON.stringify({ jsonrpc: "2.0", method: "no/such/notification", params: { x: 1 } }) + "\n")
      yield* ping("after-notifications")
      expect(replies.slice(before).map((reply) => reply.id)).toEqual(["after-notifications"])

      // Arguments that are not an object: invalid params, not a defect.
      yield* send(
        JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "memory_save", arguments: 5 } }) +
          "\n"
      )
      const refused = yield* answer(9)
      expect(refused.error).toMatchObject({ code: -32602 })
      expect(JSON.stringify(refused)).not.toContain("stack")

      // A line over the limit is skipped to its newline and answered; the next line is served.
      yield* send("x".repeat(EngramMcp.MAX_LINE_BYTES + 10) + "\n")
      yield* ping("after-long")
      expect(replies.at(-2)).toMatchObject({ id: null, error: { code: -32700 } })

      // An over-size request whose start names its id is answered with that id (a client's
      // pending request fails at once instead of waiting for its timeout).
      yield* send(
        `{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"memory_save","arguments":{"content":"` +
          "y".repeat(EngramMcp.MAX_LINE_BYTES) + "\"}}}\n"
      )
      expect(yield* answer("big-1")).toMatchObject({ id: "big-1", error: { code: -32700 } })
      yield* send(
        `{"id":12,"jsonrpc":"2.0","method":"ping","params":{"pad":"${"z".repeat(EngramMcp.MAX_LINE_BYTES)}"}}\n`
      )
      expect(yield* answer(12)).toMatchObject({ id: 12, error: { code: -32700 } })
    })))

  it.live("refuses every request but initialize and ping before initialize, and records nothing for it", () =>
    Effect.scoped(Effect.gen(function*() {
      const { answer, ping, send } = yield* piped
      yield* send(
        JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "memory_context", arguments: {} }
        }) +
          "\n"
      )
      expect((yield* answer(1)).error).toMatchObject({ code: -32600, message: expect.stringContaining("initialize") })
      yield* send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }) + "\n")
      expect((yield* answer(2)).error).toMatchObject({ code: -32600 })
      yield* send(
        JSON.stringify({ jsonrpc: "2.0", id: 3, method: "resources/read", params: { uri: "engram://context" } }) + "\n"
      )
      expect((yield* answer(3)).error).toMatchObject({ code: -32600 })
      yield* ping("still-serving")
      yield* send(initialize)
      expect((yield* answer(0)).result).toMatchObject({ serverInfo: { name: "engram" } })
      yield* send(JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }) + "\n")
      expect((yield* answer(4)).result).toMatchObject({ tools: expect.arrayContaining([]) })
      // A second initialize on the same connection is refused: one connection, one session.
      yield* send(initialize.replace("\"id\":0", "\"id\":5"))
      expect((yield* answer(5)).error).toMatchObject({ code: -32600 })
    })))

  it.live(
    "a schema-blind fuzz of 2,000 lines: every ping answered, every reply well-formed, no reply to a notification",
    () =>
      Effect.scoped(Effect.gen(function*() {
        const { answer, ping, raw, replies, send } = yield* piped
        yield* send(initialize)
        yield* answer(0)
        const methods = [
          "ping",
          "initialize",
          "tools/list",
          "tools/call",
          "resources/list",
          "resources/read",
          "prompts/list",
          "logging/setLevel",
          "notifications/initialized",
          "notifications/cancelled",
          "completion/complete",
          "no/such"
        ]
        const toolNames = [...EngramMcp.toolNames({ memory }), "nope"]
        const id = fc.oneof(
          { arbitrary: fc.integer(), weight: 4 },
          { arbitrary: fc.string({ maxLength: 8 }), weight: 4 },
          fc.constant(null),
          fc.double(),
          fc.boolean()
        )
        const params = fc.oneof(
          fc.anything(),
          fc.record({ name: fc.constantFrom(...toolNames), arguments: fc.anything() }, { requiredKeys: [] }),
          fc.record({ uri: fc.oneof(fc.constant("engram://context"), fc.string()) })
        )
        const message = fc.record(
          {
            jsonrpc: fc.oneof({ arbitrary: fc.constant("2.0"), weight: 8 }, fc.anything()),
            id,
            method: fc.oneof({ arbitrary: fc.constantFrom(...methods), weight: 4 }, fc.string({ maxLength: 12 })),
            params,
            result: fc.anything(),
            error: fc.anything()
          },
          { requiredKeys: ["jsonrpc"] }
        )
        const line = fc.oneof(
          fc.string({ maxLength: 40 }).map((text) => text.replace(/\n/g, " ")),
          fc.string({ unit: "binary", maxLength: 40 }).map((text) => text.replace(/\n/g, " ")),
          fc.anything().map((value) => JSON.stringify(value) ?? "undefined"),
          message.map((value) => JSON.stringify(value)),
          // Well-formed requests and notifications with schema-blind params: what reaches the handlers.
          {
            arbitrary: fc.record({
              jsonrpc: fc.constant("2.0"),
              id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
              method: fc.constantFrom(...methods),
              params: fc.oneof(params, fc.dictionary(fc.string({ maxLength: 6 }), fc.anything()))
            }).map((value) => JSON.stringify(value)),
            weight: 4
          },
          fc.record({ jsonrpc: fc.constant("2.0"), method: fc.constantFrom(...methods), params: fc.object() }).map(
            (value) => JSON.stringify(value)
          )
        )
        const lines = fc.sample(line, { numRuns: 2_000, seed: 20_26 })
        let parseErrors = 0
        const sentIds = new Set<unknown>()
        for (const [n, text] of lines.entries()) {
          try {
            const value: unknown = JSON.parse(text)
            if (typeof value === "object" && value !== null && "id" in value) sentIds.add(value.id)
          } catch {
            parseErrors++
          }
          yield* send(text + "\n")
          if (n % 20 === 19) yield* ping(`probe-${n}`)
        }
        yield* ping("probe-last")
        // Every line written is one JSON-RPC 2.0 response: an id as sent (or null), a result or an
        // error with an integer code.
        for (const [n, reply] of replies.entries()) {
          expect(reply.jsonrpc, raw[n]).toBe("2.0")
          expect("result" in reply !== "error" in reply, raw[n]).toBe(true)
          if (reply.error !== undefined) expect(Number.isInteger(reply.error.code), raw[n]).toBe(true)
          const known = reply.id === null || sentIds.has(reply.id) || String(reply.id).startsWith("probe-") ||
            reply.id === 0
          expect(known, raw[n]).toBe(true)
        }
        const byCode = new Map<unknown, number>()
        for (const reply of replies) {
          byCode.set(reply.error?.code ?? "result", (byCode.get(reply.error?.code ?? "result") ?? 0) + 1)
        }
        console.log(
          `stdio fuzz: ${lines.length} lines, ${replies.length} replies (${
            [...byCode].map(([code, n]) => `${code}: ${n}`).join(", ")
          }), ${replies.filter((reply) => String(reply.id).startsWith("probe-")).length}/101 probes answered`
        )
        // No internal errors: every refusal names what was wrong with the request.
        expect(replies.filter((reply) => reply.error?.code === -32603)).toEqual([])
        expect(replies.filter((reply) => reply.error?.code === -32700)).toHaveLength(parseErrors)
        expect(replies.filter((reply) => String(reply.id).startsWith("probe-"))).toHaveLength(101)
      })),
    { timeout: 60_000 }
  )
})
