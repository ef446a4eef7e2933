/**
 * The server's door, request by request: what a malformed request gets (a 4xx JSON body naming the
 * problem and the limit), the security headers on every answer, and a console with no inline script
 * or style under a policy that admits only this origin's files.
 */
import { describe, expect, it } from "@effect/vitest"
import { EngramServer } from "@engram/server"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import { seed, serve, serveWith } from "./utilities.js"

const raw = (base: string, path: string, init: RequestInit = {}) =>
  Effect.promise(async () => {
    const response = await fetch(base + path, { ...init, signal: AbortSignal.timeout(10_000) })
    const text = await response.text()
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch {
      json = undefined
    }
    return {
      status: response.status,
      headers: response.headers,
      text,
      json: json as { _tag?: string; message?: string }
    }
  })

describe("the request guard", () => {
  it.live("refuses each malformed body with a 4xx JSON body naming the problem; the store sees none of them", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      const auth = { authorization: `Bearer ${served.tokens.a}` }
      const post = (body: string, contentType?: string) =>
        raw(served.base, "/api/memories", {
          method: "POST",
          headers: { ...auth, ...(contentType !== undefined ? { "content-type": contentType } : {}) },
          body
        })
      const { maxBodyBytes, maxJsonDepth } = EngramServer.defaultRequestLimits

      const deep = yield* post("[".repeat(5_000) + "]".repeat(5_000), "application/json")
      expect(deep.status).toBe(400)
      expect(deep.json.message).toBe(
        `the request body nests deeper than ${maxJsonDepth} levels (RequestLimits.maxJsonDepth)`
      )
      const atDepth = yield* post("[".repeat(maxJsonDepth) + "]".repeat(maxJsonDepth), "application/json")
      expect(atDepth.status).toBe(400)
      expect(atDepth.json._tag).toBe("HttpApiDecodeError")

      const multipart = yield* post("--b\r\n\r\nx\r\n--b--\r\n", "multipart/form-data; boundary=b")
      expect(multipart.status).toBe(415)
      expect(multipart.json.message).toContain("this API takes application/json")
      const noBody = yield* raw(served.base, "/api/memories", {
        method: "POST",
        headers: { ...auth, "content-type": "multipart/form-data" }
      })
      expect(noBody.status).toBe(415)
      expect((yield* post("content=x", "application/x-www-form-urlencoded")).status).toBe(415)

      const big = yield* post(JSON.stringify({ content: "x".repeat(maxBodyBytes), kind: "note" }), "application/json")
      expect(big.status).toBe(413)
      expect(big.json.message).toContain(`over the limit of ${maxBodyBytes} bytes (RequestLimits.maxBodyBytes)`)
      // A chunked body declares no length: it is refused unread, with an answer (not a reset).
      const chunks = new ReadableStream({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new TextEncoder().encode("x".repeat(100_000)))
          controller.close()
        }
      })
      const chunked = yield* raw(served.base, "/api/memories", {
        method: "POST",
        headers: { ...auth, "content-type": "application/json" },
        body: chunks,
        duplex: "half"
      } as RequestInit)
      expect(chunked.status).toBe(411)
      expect(chunked.json.message).toContain("Content-Length")

      const broken = yield* post("{\"content\":", "application/json")
      expect(broken.status).toBe(400)
      expect(broken.json.message).toMatch(/^the request body is not valid JSON: /)

      // The named limits of a record reach the HTTP API unchanged.
      const tags = yield* post(
        JSON.stringify({
          content: "hi",
          kind: "note",
          scope: "project:a",
          tags: Array.from({ length: 33 }, (_, i) => `t${i}`)
        }),
        "application/json"
      )
      expect(tags.status).toBe(400)
      expect(tags.json.message).toContain("tags has 33 entries, over the limit of 32 (MemoryLimits.maxTags)")

      // A decode error does not echo a large value back whole.
      const echo = yield* post(JSON.stringify({ content: 7, kind: ["x".repeat(50_000)] }), "application/json")
      expect(echo.status).toBe(400)
      expect(echo.text.length).toBeLessThan(10_000)

      const list = yield* raw(served.base, "/api/memories?scope=project:a", { headers: auth })
      expect(list.status).toBe(200)
      expect(list.json).toEqual({ records: [], skipped: 0 })
    })))

  it.live("an unknown route or method answers 404 with a JSON body; every answer carries the security headers", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* seed(served, [{ id: "a-1", content: "one", kind: "note", scope: "project:a" }])
      const auth = { authorization: `Bearer ${served.tokens.a}` }
      const unknown = yield* raw(served.base, "/api/nowhere", { headers: auth })
      expect(unknown.status).toBe(404)
      expect(unknown.json).toEqual({ _tag: "NotFound", message: "no route answers GET /api/nowhere" })
      const put = yield* raw(served.base, "/api/memories", { method: "PUT", headers: auth })
      expect(put.json.message).toBe("no route answers PUT /api/memories")
      const unauthorized = yield* raw(served.base, "/api/memories")
      expect(unauthorized.status).toBe(401)
      expect(typeof unauthorized.json.message).toBe("string")

      for (const path of ["/api/memories/a-1", "/api/nowhere", "/", "/docs", "/openapi.json"]) {
        const answer = yield* raw(served.base, path, { headers: auth })
        expect(answer.headers.get("x-content-type-options"), path).toBe("nosniff")
        expect(answer.headers.get("x-frame-options"), path).toBe("DENY")
        expect(answer.headers.get("referrer-policy"), path).toBe("no-referrer")
        expect(answer.headers.get("content-security-policy"), path).toContain("frame-ancestors 'none'")
      }
      const record = yield* raw(served.base, "/api/memories/a-1", { headers: auth })
      expect(record.headers.get("cache-control")).toBe("no-store")
      expect(record.headers.get("content-security-policy")).toBe(
        "default-src 'none'; frame-ancestors 'none'; base-uri 'none'"
      )
    })))

  it.live("the console runs no inline script or style: its policy admits this origin's files only", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      const page = yield* raw(served.base, "/")
      expect(page.text).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i)
      const policy = page.headers.get("content-security-policy")!
      expect(policy).toContain("script-src 'self'; style-src 'self'; ")
      expect(policy).not.toContain("unsafe-inline")
      expect(policy).not.toContain("sha256-")
      const module = yield* raw(served.base, "/console/app.js")
      expect(module.headers.get("content-type")).toContain("text/javascript")
      expect(module.headers.get("x-content-type-options")).toBe("nosniff")
      // Swagger UI keeps its inline scripts, each admitted by its hash, and only those.
      const docs = yield* raw(served.base, "/docs")
      const scripts = [
        ...docs.text.matchAll(/<script(?![^>]*\b(?:src=|type="application\/json"))[^>]*>([\s\S]*?)<\/script>/g)
      ]
        .map((m) => m[1]!)
      expect(scripts.length).toBeGreaterThan(0)
      const allowed = [...docs.headers.get("content-security-policy")!.matchAll(/'sha256-([^']+)'/g)].map((m) => m[1])
      expect(allowed).toEqual(scripts.map((script) => createHash("sha256").update(script).digest("base64")))
    })))

  it.live("the limits are settings", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({ limits: { maxBodyBytes: 100, maxJsonDepth: 1 } })
      const headers = { authorization: `Bearer ${served.tokens.a}`, "content-type": "application/json" }
      const body = JSON.stringify({ content: "x".repeat(200), kind: "note" })
      const big = yield* raw(served.base, "/api/memories", { method: "POST", headers, body })
      expect(big.status).toBe(413)
      expect(big.json.message).toContain("over the limit of 100 bytes (RequestLimits.maxBodyBytes)")
      const deep = yield* raw(served.base, "/api/memories", { method: "POST", headers, body: "{\"tags\":[]}" })
      expect(deep.json.message).toBe("the request body nests deeper than 1 levels (RequestLimits.maxJsonDepth)")
    })))
})
