/**
 * Bodies the server must not accept as they are: a body that never finishes is answered 408 and
 * its connection closed (RequestLimits.requestTimeoutMs), and a body with a field the OpenAPI
 * document does not declare is refused with 400 naming the field — nothing stored either way.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as NodeNet from "node:net"
import { serveWith } from "./utilities.js"

const storedCount = (served: Effect.Effect.Success<ReturnType<typeof serveWith>>) =>
  Effect.provide(
    Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({ scopes: ["project:a"] })),
    served.context
  ).pipe(Effect.map((page) => page.records.length), Effect.orDie)

describe("request bodies", () => {
  it.live("a half-sent body is answered 408 and its connection closed once requestTimeoutMs passes", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({ limits: { requestTimeoutMs: 500 } })
      const port = Number(new URL(served.base).port)
      const outcomes = yield* Effect.forEach(
        Array.from({ length: 10 }),
        () =>
          Effect.promise(() =>
            new Promise<{ readonly answer: string; readonly closedAfterMs: number }>((resolve) => {
              const began = Date.now()
              let answer = ""
              const socket = NodeNet.connect(port, "127.0.0.1", () => {
                socket.write(
                  "POST /api/memories HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
                    `Authorization: Bearer ${served.tokens.a}\r\nContent-Length: 100\r\n\r\n{"content": "half`
                )
              })
              socket.on("data", (chunk) => (answer += chunk.toString("utf8")))
              socket.on("error", () => undefined)
              socket.on("close", () => resolve({ answer, closedAfterMs: Date.now() - began }))
            })
          ),
        { concurrency: "unbounded" }
      )
      for (const outcome of outcomes) {
        expect(outcome.answer).toMatch(/^HTTP\/1\.1 408/)
        // Within the limit plus Node's one-second check, not the platform default of 300 s.
        expect(outcome.closedAfterMs).toBeLessThan(5_000)
      }
      expect(yield* storedCount(served)).toBe(0)
    })))

  it.live("a field the API does not declare is refused with 400 naming it, on every body", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({})
      const create = yield* served.request("POST", "/api/memories", {
        token: served.tokens.a,
        body: { content: "keep me", kind: "note", lable: "typo" }
      })
      expect(create.status).toBe(400)
      expect(create.text).toContain(`"path":["lable"]`)
      const batch = yield* served.request("POST", "/api/memories/batch", {
        token: served.tokens.a,
        body: { records: [{ content: "keep me", kind: "note", extra: 1 }] }
      })
      expect(batch.status).toBe(400)
      expect(batch.text).toContain(`"path":["records",0,"extra"]`)
      expect(yield* storedCount(served)).toBe(0)
      // The declared fields alone are stored as before.
      const fine = yield* served.request("POST", "/api/memories", {
        token: served.tokens.a,
        body: { content: "keep me", kind: "note", label: "fine" }
      })
      expect(fine.status).toBe(201)
    })))
})
