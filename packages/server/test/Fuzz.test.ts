/**
 * A schema-driven fuzz of every route: requests drawn from the API's own schemas (path, query and
 * body, valid or mangled), with every kind of token. No answer may be a 5xx, and no 2xx may carry a
 * record of a scope the token does not hold. Prints the figures.
 */
import * as HttpApi from "@effect/platform/HttpApi"
import { describe, expect, it } from "@effect/vitest"
import { EngramApi } from "@engram/server"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as fc from "effect/FastCheck"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { seed, seedSession, serve } from "./utilities.js"

interface EndpointShape {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly pathSchema: Option.Option<Schema.Schema.Any>
  readonly urlParamsSchema: Option.Option<Schema.Schema.Any>
  readonly payloadSchema: Option.Option<Schema.Schema.Any>
}

const endpoints: Array<EndpointShape> = []
HttpApi.reflect(EngramApi.EngramApi, {
  onGroup: () => {},
  onEndpoint: ({ endpoint }) => {
    endpoints.push({
      name: endpoint.name,
      method: endpoint.method,
      path: endpoint.path,
      pathSchema: endpoint.pathSchema as unknown as Option.Option<Schema.Schema.Any>,
      urlParamsSchema: endpoint.urlParamsSchema as unknown as Option.Option<Schema.Schema.Any>,
      payloadSchema: endpoint.payloadSchema as unknown as Option.Option<Schema.Schema.Any>
    })
  }
})

/** Values valid for `schema`, in their wire (encoded) form. */
const wire = (schema: Schema.Schema.Any): fc.Arbitrary<unknown> => {
  const encode = Schema.encodeUnknownSync(schema as Schema.Schema<unknown, unknown>)
  return (Arbitrary.make(schema as Schema.Schema<unknown, unknown>) as fc.Arbitrary<unknown>).map((value) => {
    try {
      return encode(value)
    } catch {
      return value
    }
  })
}

const SCOPES = ["project:a", "project:b", "global", "session:x"] as const
const ownIds = ["a-1", "a-2", "a-3", "a-4", "a-5"]
const otherIds = ["b-1", "b-2", "b-3", "b-4", "b-5"]

const junkString = fc.oneof(fc.string(), fc.constantFrom("", " ", "..", "%", "a/b", "null", "-1", "1e999", "\u0000"))

const sessionArb = fc.oneof(fc.constantFrom("s-a", "s-b", "s-none"), junkString)

const idArb = fc.oneof(fc.constantFrom(...ownIds, ...otherIds), junkString, fc.stringMatching(/^[a-z0-9]{1,8}$/))

const urlParamsArb = (shape: EndpointShape) =>
  fc.oneof(
    Option.match(shape.urlParamsSchema, { onNone: () => fc.constant({}), onSome: wire }),
    fc.dictionary(
      fc.constantFrom("scope", "q", "limit", "cursor", "kind", "review", "deliverable", "session", "turn", "call"),
      junkString
    ),
    fc.record({ session: fc.constantFrom("s-a", "s-b"), turn: fc.constantFrom("0", "1", "2") }),
    fc.record({ scope: fc.constantFrom(...SCOPES), q: fc.constantFrom("secret", "shared") })
  )

const payloadArb = (shape: EndpointShape) =>
  fc.oneof(
    Option.match(shape.payloadSchema, { onNone: () => fc.constant(undefined), onSome: wire }),
    Option.match(shape.payloadSchema, {
      onNone: () => fc.constant(undefined),
      onSome: (schema) =>
        wire(schema).map((
          value
        ) => (typeof value === "object" && value !== null ? { ...value, scope: "project:b" } : value))
    }),
    fc.jsonValue(),
    fc.constantFrom("{", "not json", "[]", "{\"ids\":[\"b-1\"]}", "{\"scope\":\"project:b\"}")
  )

const tokenArb = fc.constantFrom("a", "b", "ro", "none", "junk")

const toSearch = (params: unknown): string => {
  if (typeof params !== "object" || params === null) return ""
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) {
    for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item))
  }
  const text = search.toString()
  return text.length === 0 ? "" : `?${text}`
}

/** Every string under a `scope` key, anywhere in a JSON answer. */
const scopesIn = (json: unknown, out: Set<string> = new Set()): Set<string> => {
  if (Array.isArray(json)) { for (const item of json) scopesIn(item, out) }
  else if (typeof json === "object" && json !== null) {
    for (const [key, value] of Object.entries(json)) {
      if (key === "scope" && typeof value === "string") out.add(value)
      else scopesIn(value, out)
    }
  }
  return out
}

const NUM_RUNS = 1_200

describe("schema-driven fuzz", () => {
  it.live(
    `${NUM_RUNS} requests from the API's schemas: 0 cross-scope 2xx, 0 5xx`,
    () =>
      Effect.scoped(Effect.gen(function*() {
        // Every route of the API, /api/sessions, browse, bulk review and batch write included.
        expect(endpoints.length).toBe(21)
        const served = yield* serve
        yield* seedSession(served, { sessionId: "s-a", scope: "project:a", secret: "ASECRET-session", memoryId: "a-1" })
        yield* seedSession(served, { sessionId: "s-b", scope: "project:b", secret: "BSECRET-session", memoryId: "b-1" })
        const reseed = Effect.forEach(
          [
            ...ownIds.map((id) => ({
              id,
              content: `ASECRET ${id} shared`,
              kind: "standing" as const,
              label: id,
              scope: "project:a"
            })),
            ...otherIds.map((id) => ({
              id,
              content: `BSECRET ${id} shared`,
              kind: "standing" as const,
              label: id,
              scope: "project:b"
            }))
          ],
          (input) => Effect.exit(seed(served, [input])),
          { discard: true }
        )
        const held: Record<string, ReadonlyArray<string>> = { a: ["project:a"], b: ["project:b"], ro: ["project:a"] }
        const secrets: Record<string, string> = { a: "BSECRET", b: "ASECRET", ro: "BSECRET" }
        const figures = { requests: 0, crossScope2xx: 0, fiveXx: 0, byStatus: new Map<number, number>() }
        const failures: Array<string> = []
        const request = fc.constantFrom(...endpoints).chain((shape) =>
          fc.record({
            shape: fc.constant(shape),
            id: idArb,
            session: sessionArb,
            params: urlParamsArb(shape),
            body: payloadArb(shape),
            token: tokenArb
          })
        )
        const samples = fc.sample(request, { numRuns: NUM_RUNS, seed: 11 })
        for (const [index, sample] of samples.entries()) {
          if (index % 100 === 0) yield* reseed
          const path = sample.shape.path.replace(":id", encodeURIComponent(sample.id))
            .replace(":session", encodeURIComponent(sample.session)) + toSearch(sample.params)
          const token = sample.token === "none"
            ? undefined
            : sample.token === "junk"
            ? "egm_not-a-token"
            : served.tokens[sample.token as "a" | "b" | "ro"]
          const withBody = sample.shape.method !== "GET" && sample.body !== undefined
          const answer = yield* served.request(sample.shape.method, path, {
            token,
            ...(withBody ? { body: sample.body } : {})
          })
          figures.requests++
          figures.byStatus.set(answer.status, (figures.byStatus.get(answer.status) ?? 0) + 1)
          const describe = `${sample.shape.method} ${path} (${sample.token}) ${
            JSON.stringify(sample.body)
          } -> ${answer.status} ${answer.text.slice(0, 300)}`
          if (answer.status >= 500) {
            figures.fiveXx++
            failures.push(describe)
          }
          const scopes = held[sample.token]
          if (answer.status < 300 && scopes !== undefined) {
            const foreign = [...scopesIn(answer.json)].filter((scope) => !scopes.includes(scope))
            if (foreign.length > 0 || answer.text.includes(secrets[sample.token]!)) {
              figures.crossScope2xx++
              failures.push(describe)
            }
          }
        }
        const statuses = [...figures.byStatus.entries()].sort(([a], [b]) => a - b).map(([s, n]) => `${s}:${n}`).join(
          " "
        )
        console.log(
          `fuzz: ${figures.requests} requests over ${endpoints.length} routes, cross-scope 2xx ${figures.crossScope2xx}, ` +
            `5xx ${figures.fiveXx} (statuses ${statuses})`
        )
        expect(failures).toEqual([])
        expect(figures.requests).toBeGreaterThanOrEqual(1_000)
        // The fuzz reached past the door: some requests succeeded and some were refused as invalid.
        expect(figures.byStatus.get(200) ?? 0).toBeGreaterThan(50)
        expect(figures.byStatus.get(400) ?? 0).toBeGreaterThan(50)
      })),
    300_000
  )
})
