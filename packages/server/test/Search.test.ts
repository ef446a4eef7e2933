/**
 * Search over HTTP finds the forms of a word the query did not repeat (the shared tokenizer stems,
 * decision 0049): `GET /api/memories/search`, and `GET /api/memories/browse?q=`, which the
 * console's search box calls.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { serve } from "./utilities.js"

describe("search over HTTP", () => {
  it.live("`deploy` finds \"Deploys happen on Tuesdays after 10:00\"; an unrelated word finds nothing", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      const created = yield* served.request("POST", "/api/memories", {
        token: served.tokens.a,
        body: { content: "Deploys happen on Tuesdays after 10:00", kind: "note", scope: "project:a" }
      })
      expect(created.status).toBe(201)
      const ids = (json: unknown) =>
        (json as { hits: Array<{ record: { content: string } }> }).hits.map((h) => h.record.content)
      const found = yield* served.request("GET", "/api/memories/search?q=deploy", { token: served.tokens.a })
      expect(found.status).toBe(200)
      expect(ids(found.json)).toEqual(["Deploys happen on Tuesdays after 10:00"])
      const deploying = yield* served.request("GET", "/api/memories/search?q=deploying%20tuesday", {
        token: served.tokens.a
      })
      expect(ids(deploying.json)).toEqual(["Deploys happen on Tuesdays after 10:00"])
      const other = yield* served.request("GET", "/api/memories/search?q=weekend", { token: served.tokens.a })
      expect(ids(other.json)).toEqual([])
    })))

  it.live("the console's search box (`browse?q=deploy`) finds \"Deploys happen on Tuesdays after 10:00\"", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      yield* served.request("POST", "/api/memories", {
        token: served.tokens.a,
        body: { content: "Deploys happen on Tuesdays after 10:00", kind: "note", scope: "project:a" }
      })
      const contents = (json: unknown) =>
        (json as { rows: Array<{ record: { content: string } }> }).rows.map((row) => row.record.content)
      const found = yield* served.request("GET", "/api/memories/browse?q=deploy", { token: served.tokens.a })
      expect(found.status, found.text).toBe(200)
      expect(contents(found.json)).toEqual(["Deploys happen on Tuesdays after 10:00"])
      const other = yield* served.request("GET", "/api/memories/browse?q=weekend", { token: served.tokens.a })
      expect(contents(other.json)).toEqual([])
    })))
})
