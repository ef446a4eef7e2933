/**
 * A schema-blind fuzz of the whole server: requests that know the routes' shapes but not their
 * schemas — any method, mangled paths and queries, any content type, bodies that are deep, huge,
 * not JSON, not UTF-8 or multipart — with every kind of token. No answer may be a 5xx or hang;
 * every refusal is a JSON body naming the problem; every answer carries the security headers.
 * Prints the figures.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { describe, expect, it } from "@effect/vitest"
import { EngramApi, EngramServer } from "@engram/server"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import { seed, serve } from "./utilities.js"

const templates: Array<{ readonly method: string; readonly path: string }> = []
HttpApi.reflect(EngramApi.EngramApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => templates.push({ method: endpoint.method, path: endpoint.path })
})

const NUM_REQUESTS = 2_100
const { maxBodyBytes, maxJsonDepth } = EngramServer.defaultRequestLimits

const junk = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.constantFrom("", " ", "..", "%", "%00", "%ZZ", "a/b", "null", "-1", "1e999", "\u0000", "ü", "😀", "a-1", "b-1"),
  fc.stringMatching(/^[a-z0-9:._-]{1,12}$/)
)
const segment = junk.map((s) => encodeURIComponent(s))

const pathArb = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.constantFrom(...templates).chain((t) =>
      fc.tuple(segment, segment).map(([a, b]) => t.path.replace(":id", a).replace(":session", b))
    )
  },
  { weight: 1, arbitrary: fc.array(segment, { minLength: 0, maxLength: 5 }).map((parts) => `/api/${parts.join("/")}`) },
  { weight: 1, arbitrary: fc.constantFrom("/", "/docs", "/openapi.json", "/api", "/favicon.ico", "/api/../api/access") }
)

const queryArb = fc.oneof(
  fc.constant(""),
  fc.array(fc.tuple(fc.constantFrom("scope", "q", "limit", "cursor", "kind", "review", "session", "turn", "x"), junk), {
    maxLength: 4
  }).map((pairs) => `?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`),
  fc.constantFrom(
    "?limit=999999999999",
    "?limit=-1",
    "?scope=project:b",
    "?q=" + "w".repeat(9_000),
    "?%zz=1",
    "?a=1&a=2&a=3"
  )
)

const nested = (depth: number, open: string, close: string, inner = "1") =>
  open.repeat(depth) + inner + close.repeat(depth)

const bodyArb: fc.Arbitrary<string | Uint8Array | undefined> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  {
    weight: 3,
    arbitrary: fc.record({
      content: fc.oneof(fc.string(), junk),
      kind: fc.constantFrom("note", "fact", "x", 5),
      tags: fc.array(junk, { maxLength: 40 }),
      scope: fc.constantFrom("project:a", "project:b", "global", "x")
    }, { requiredKeys: [] }).map((v) => JSON.stringify(v))
  },
  { weight: 2, arbitrary: fc.string({ maxLength: 200 }) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(maxJsonDepth + 1, 2_000, 5_000, 100_000).chain((depth) =>
      fc.constantFrom(
        nested(depth, "[", "]"),
        nested(depth, "{\"a\":", "}"),
        `{"content":${nested(depth, "[", "]")},"kind":"note"}`
      )
    )
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "x".repeat(maxBodyBytes + 1),
      JSON.stringify({ content: "x".repeat(maxBodyBytes), kind: "note" }),
      JSON.stringify({ content: "hi", kind: "note", tags: Array.from({ length: 60_000 }, (_, i) => `t${i}`) }),
      "--b\r\nContent-Disposition: form-data; name=\"content\"\r\n\r\nhello\r\n--b--\r\n",
      "--b\r\n",
      "{\"content\":\"\\ud800\",\"kind\":\"note\"}",
      "{\"content\":\"a\\u0000b\",\"kind\":\"note\"}",
      "\"" + "\\".repeat(10_001) + "\"",
      "[" + "1,".repeat(100_000) + "1]"
    )
  }
)

const contentTypeArb = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(undefined, "application/json", "application/json; charset=utf-8", "APPLICATION/JSON")
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "application/json; boundary=b",
      "text/plain",
      "text/html",
      "multipart/form-data; boundary=b",
      "multipart/form-data",
      "application/x-www-form-urlencoded",
      "application/octet-stream",
      "application/xml",
      ";;;",
      "json"
    )
  }
)

const tokenArb = fc.constantFrom("a", "b", "ro", "none", "junk", "empty", "basic")
const methodArb = fc.constantFrom("GET", "GET", "POST", "POST", "POST", "DELETE", "PUT", "PATCH", "OPTIONS", "HEAD")

const SECURITY_HEADERS = ["content-security-policy", "x-content-type-options", "x-frame-options", "referrer-policy"]

describe("schema-blind fuzz", () => {
  it.live(
    `${NUM_REQUESTS} schema-blind requests over every route: 0 5xx, 0 hangs, every refusal a JSON body`,
    () =>
      Effect.scoped(Effect.gen(function*() {
        const served = yield* serve
        yield* seed(served, [
          { id: "a-1", content: "ASECRET one", kind: "note", scope: "project:a" },
          { id: "b-1", content: "BSECRET one", kind: "note", scope: "project:b" }
        ])
        const request = fc.record({
          method: methodArb,
          path: pathArb,
          query: queryArb,
          body: bodyArb,
          contentType: contentTypeArb,
          token: tokenArb
        })
        const samples = fc.sample(request, { numRuns: NUM_REQUESTS, seed: 26 })
        const figures = { requests: 0, fiveXx: 0, hangs: 0, byStatus: new Map<number, number>() }
        const failures: Array<string> = []
        const started = performance.now()
        for (const sample of samples) {
          const headers: Record<string, string> = {}
          const token = sample.token === "none"
            ? undefined
            : sample.token === "junk"
            ? "Bearer egm_not-a-token"
            : sample.token === "empty"
            ? "Bearer "
            : sample.token === "basic"
            ? "Basic YTpi"
            : `Bearer ${served.tokens[sample.token as "a" | "b" | "ro"]}`
          if (token !== undefined) headers.authorization = token
          if (sample.contentType !== undefined) headers["content-type"] = sample.contentType
          const withBody = sample.body !== undefined && sample.method !== "GET" && sample.method !== "HEAD"
          const describe = `${sample.method} ${sample.path}${
            sample.query.slice(0, 80)
          } (${sample.token}, ${sample.contentType}) ${withBody ? String(sample.body).slice(0, 80) : ""}`
          const answer = yield* Effect.promise(async () => {
            try {
              const response = await fetch(served.base + sample.path + sample.query, {
                method: sample.method,
                headers,
                ...(withBody && sample.body !== undefined
                  ? { body: sample.body as string | Uint8Array<ArrayBuffer> }
                  : {}),
                signal: AbortSignal.timeout(15_000)
              })
              return { status: response.status, headers: response.headers, text: await response.text() }
            } catch (error) {
              return { status: -1, headers: new Headers(), text: String(error) }
            }
          })
          figures.requests++
          figures.byStatus.set(answer.status, (figures.byStatus.get(answer.status) ?? 0) + 1)
          if (answer.status === -1) {
            figures.hangs++
            failures.push(`${describe} -> no answer: ${answer.text}`)
            continue
          }
          if (answer.status >= 500) {
            figures.fiveXx++
            failures.push(`${describe} -> ${answer.status} ${answer.text.slice(0, 200)}`)
          }
          const missing = SECURITY_HEADERS.filter((name) => !answer.headers.has(name))
          if (missing.length > 0) failures.push(`${describe} -> ${answer.status} without ${missing.join(", ")}`)
          if (answer.status >= 400 && sample.method !== "HEAD") {
            let json: unknown
            try {
              json = JSON.parse(answer.text)
            } catch {
              json = undefined
            }
            const message = typeof json === "object" && json !== null && "message" in json ? json.message : undefined
            if (typeof message !== "string" || message.length === 0) {
              failures.push(`${describe} -> ${answer.status} with no JSON message: ${answer.text.slice(0, 200)}`)
            }
            if (answer.text.length > 20_000) {
              failures.push(`${describe} -> ${answer.status} echoes ${answer.text.length} characters`)
            }
          }
        }
        const seconds = ((performance.now() - started) / 1000).toFixed(1)
        const statuses = [...figures.byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(
          " "
        )
        console.log(
          `blind fuzz: ${figures.requests} requests over ${templates.length} routes in ${seconds} s, ` +
            `5xx ${figures.fiveXx}, hangs ${figures.hangs} (statuses ${statuses})`
        )
        expect(failures.slice(0, 20)).toEqual([])
        expect(figures.requests).toBeGreaterThanOrEqual(2_000)
        // The fuzz reached every kind of answer: successes, refusals at the door and past it.
        for (const status of [200, 400, 401, 404, 413, 415]) {
          expect(figures.byStatus.get(status) ?? 0).toBeGreaterThan(0)
        }
      })),
    180_000
  )
})
