/**
 * The server serves its OpenAPI document (generated from the API's schemas), Swagger UI and the
 * console page without a token; the API itself needs one.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord } from "@engram/core"
import * as Effect from "effect/Effect"
import { serve } from "./utilities.js"

describe("documents", () => {
  it.live("serves /openapi.json with every route, /docs and the console at /", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serve
      const openapi = yield* served.request("GET", "/openapi.json")
      expect(openapi.status).toBe(200)
      const paths = Object.keys((openapi.json as { paths: Record<string, unknown> }).paths).sort()
      expect(paths).toEqual([
        "/api/access",
        "/api/agent",
        "/api/forget",
        "/api/memories",
        "/api/memories/batch",
        "/api/memories/browse",
        "/api/memories/review",
        "/api/memories/search",
        "/api/memories/{id}",
        "/api/memories/{id}/expire",
        "/api/memories/{id}/explain",
        "/api/memories/{id}/review",
        "/api/memories/{id}/supersede",
        "/api/projection",
        "/api/promotions",
        "/api/sessions",
        "/api/sessions/{session}/inspect",
        "/api/sessions/{session}/snapshots",
        "/api/tombstones"
      ])
      expect(openapi.text).toContain("bearer")
      const docs = yield* served.request("GET", "/docs")
      expect(docs.status).toBe(200)
      expect(docs.text).toContain("swagger-ui")
      const page = yield* served.request("GET", "/")
      expect(page.status).toBe(200)
      expect(page.text).toContain("Engram console")
      // The page loads the console's bundled module and its style sheet, files of their own; any
      // other name is 404.
      const linked = [...page.text.matchAll(/(?:src|href)="(\/console\/[^"]+)"/g)].map((m) => m[1]!).sort()
      expect(linked).toEqual(["/console/app.js", "/console/console.css"])
      for (const path of linked) expect((yield* served.request("GET", path)).status, path).toBe(200)
      // One module bundled from the TypeScript sources: the views and the client, no import left.
      const app = yield* served.request("GET", "/console/app.js")
      expect(app.text).toContain("engram-token")
      expect(app.text).toContain("Review queue")
      expect(app.text).not.toMatch(/^\s*import[\s{*]/m)
      // The kinds the forms offer are core's, handed over by the build (no copy in the console).
      expect(app.text).toContain(JSON.stringify(MemoryRecord.MemoryKind.literals).replaceAll(",", ", "))
      expect((yield* served.request("GET", "/console/nothing.js")).status).toBe(404)
      expect((yield* served.request("GET", "/api/access")).status).toBe(401)
    })))
})
