/**
 * Every route × { own scope, other scope, no token, read-only token }: a token reaches only its own
 * scopes (another scope's records are "not found", 404), no token is 401, a read-only token reads
 * but never writes (403). Prints the matrix figures.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type Route, routes, seed, seedSession, serve, type Served, sessionOf } from "./utilities.js"

let counter = 0
const fresh = (served: Served, scope: string) =>
  Effect.map(
    seed(served, [{
      id: `${scope.replace(":", "-")}-${++counter}`,
      content: `${scope} secret number ${counter}`,
      kind: "standing",
      label: `l${counter}`,
      scope
    }]),
    ([record]) => record!.id
  )

describe("scope matrix", () => {
  it.live("every route: own scope 2xx, other scope 404, no token 401, read-only 403 on writes — zero cross-scope 2xx", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      for (const scope of ["project:a", "project:b"]) {
        yield* seedSession(served, { sessionId: sessionOf(scope), scope, secret: `${scope} secret`, memoryId: "mem-x" })
      }
      const call = (route: Route, token: string | undefined, scope: string) =>
        Effect.gen(function*() {
          const id = yield* fresh(served, scope)
          const { body, method, path } = route.request(scope, id)
          return yield* served.request(method, path, { token, body })
        })
      const figures = { requests: 0, crossScope2xx: 0, fiveXx: 0 }
      const rows: Array<string> = []
      for (const route of routes) {
        const own = yield* call(route, served.tokens.a, "project:a")
        const other = yield* call(route, served.tokens.a, "project:b")
        const none = yield* call(route, undefined, "project:a")
        const readOnly = yield* call(route, served.tokens.ro, "project:a")
        const readOnlyOther = yield* call(route, served.tokens.ro, "project:b")
        figures.requests += 5
        for (const answer of [own, other, none, readOnly, readOnlyOther]) if (answer.status >= 500) figures.fiveXx++
        for (const answer of [other, readOnlyOther]) {
          if (answer.status < 300) figures.crossScope2xx++
          expect(answer.text, `${route.name}: another scope's content`).not.toContain("project:b secret")
        }
        rows.push(
          `${
            route.name.padEnd(12)
          } own ${own.status} other ${other.status} none ${none.status} ro ${readOnly.status} ro-other ${readOnlyOther.status}`
        )
        expect(own.status, `${route.name} own: ${own.text}`).toBeLessThan(300)
        expect(other.status, `${route.name} other: ${other.text}`).toBe(404)
        expect(none.status, `${route.name} no token`).toBe(401)
        expect(readOnly.status, `${route.name} read-only: ${readOnly.text}`).toBe(route.writes ? 403 : 200)
        expect([403, 404], `${route.name} read-only other`).toContain(readOnlyOther.status)
      }
      // A token from no store at all, and a malformed header, are 401 too.
      const forged = yield* served.request("GET", "/api/memories", { token: "egm_forged" })
      expect(forged.status).toBe(401)
      console.log(
        `scope matrix\n${
          rows.join("\n")
        }\nrequests ${figures.requests}, cross-scope 2xx ${figures.crossScope2xx}, 5xx ${figures.fiveXx}`
      )
      expect(figures).toEqual({ requests: routes.length * 5, crossScope2xx: 0, fiveXx: 0 })
    })))

  it.live("list and search filter by the token's scopes; get of another scope's id is 404 like an unknown id", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* seed(served, [
        { id: "a1", content: "alpha shared word", kind: "note", scope: "project:a" },
        { id: "b1", content: "beta shared word", kind: "note", scope: "project:b" }
      ])
      const listed = yield* served.request("GET", "/api/memories", { token: served.tokens.a })
      expect((listed.json as { records: Array<{ id: string }> }).records.map((r) => r.id)).toEqual(["a1"])
      const found = yield* served.request("GET", "/api/memories/search?q=shared", { token: served.tokens.b })
      expect((found.json as { hits: Array<{ record: { id: string } }> }).hits.map((h) => h.record.id)).toEqual(["b1"])
      const foreign = yield* served.request("GET", "/api/memories/b1", { token: served.tokens.a })
      const unknown = yield* served.request("GET", "/api/memories/zz9", { token: served.tokens.a })
      expect([foreign.status, unknown.status]).toEqual([404, 404])
      expect(foreign.json).toEqual({ _tag: "NotFound", message: "no memory b1" })
    })))
})

describe("sessions, inspect and explain over HTTP", () => {
  it.live("a token sees the calls of sessions that read its scopes, rebuilt and explained; others are 404", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* seed(served, [{ id: "a-fact", content: "the alpha vault code", kind: "fact", scope: "project:a" }])
      yield* seedSession(served, {
        sessionId: "s-a",
        scope: "project:a",
        secret: "the alpha vault code",
        memoryId: "a-fact"
      })
      yield* seedSession(served, { sessionId: "s-b", scope: "project:b", secret: "beta", memoryId: "a-fact" })
      const inspected = yield* served.request("GET", "/api/sessions/s-a/inspect", { token: served.tokens.ro })
      expect(inspected.status).toBe(200)
      const calls = (inspected.json as { calls: Array<{ turn: number; call: number; verified: boolean }> }).calls
      expect(calls.map((c) => [c.turn, c.call, c.verified])).toEqual([[1, 0, true]])
      const snapshots = yield* served.request("GET", "/api/sessions/s-a/snapshots?turn=1", { token: served.tokens.a })
      expect((snapshots.json as { snapshots: Array<{ scopes: Array<string> }> }).snapshots.map((s) => s.scopes))
        .toEqual([["project:a"]])
      expect((yield* served.request("GET", "/api/sessions/s-a/snapshots?turn=7", { token: served.tokens.a })).json)
        .toEqual({ sessionId: "s-a", snapshots: [] })
      // Another scope's session and an unknown one answer alike.
      const foreign = yield* served.request("GET", "/api/sessions/s-b/inspect", { token: served.tokens.a })
      const unknown = yield* served.request("GET", "/api/sessions/s-zz/inspect", { token: served.tokens.a })
      expect([foreign.status, unknown.status]).toEqual([404, 404])
      expect(foreign.json).toEqual({ _tag: "NotFound", message: "no session s-b" })
      // Explain without a session reads the calls of the sessions this token may see, and only
      // those: s-b's call (another scope) is not among them. The seeded snapshot delivers nothing
      // (its log row is hand-made), and the snapshot is what decides: no "delivered in".
      const explained = yield* served.request("GET", "/api/memories/a-fact/explain", { token: served.tokens.a })
      expect(explained.status).toBe(200)
      const across = explained.json as {
        calls: Array<{ sessionId: string; verdict: string }>
        sessions: Array<{ sessionId: string }>
      }
      expect(across.calls.map((c) => [c.sessionId, c.verdict])).toEqual([["s-a", "not-recalled"]])
      expect(across.sessions).toEqual([])
      const inCall = yield* served.request("GET", "/api/memories/a-fact/explain?session=s-a", {
        token: served.tokens.a
      })
      expect((inCall.json as { calls: Array<{ verdict: string; injectionLogged: boolean }> }).calls)
        .toEqual([expect.objectContaining({ verdict: "not-recalled", injectionLogged: true })])
      const viaForeign = yield* served.request("GET", "/api/memories/a-fact/explain?session=s-b", {
        token: served.tokens.a
      })
      expect(viaForeign.status).toBe(404)
      const bad = yield* served.request("GET", "/api/sessions/s-a/inspect?turn=-1", { token: served.tokens.a })
      expect(bad.status).toBe(400)

      // Forget over the API takes the memory's text out of the stored calls too.
      expect((yield* served.request("GET", "/api/sessions/s-a/snapshots", { token: served.tokens.a })).text)
        .toContain("the alpha vault code")
      expect((yield* served.request("DELETE", "/api/memories/a-fact", { token: served.tokens.a })).status).toBe(200)
      const after = yield* served.request("GET", "/api/sessions/s-a/snapshots", { token: served.tokens.a })
      expect(after.text).not.toContain("the alpha vault code")
      const rebuilt = yield* served.request("GET", "/api/sessions/s-a/inspect", { token: served.tokens.a })
      expect(rebuilt.text).not.toContain("the alpha vault code")
      expect((rebuilt.json as { calls: Array<{ redacted: Array<string> }> }).calls.map((c) => c.redacted)).toEqual([[
        "a-fact"
      ]])
    })))
})
