/**
 * `POST /api/memories/batch`: many records in one request and one transaction, one result per
 * record in order; whole or nothing (one refused record stores none); at most MAX_BATCH_WRITE.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, RoutingPresets } from "@engram/core"
import { StablePrefix } from "@engram/runtime"
import { EngramApi } from "@engram/server"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { batchWritten } from "../src/internal/handlers/batchAnswer.js"
import { everyFieldAnswer, serveWith } from "./utilities.js"

/** The JSON `BatchWriteAnswer`'s own encode gives: what the answer's body must equal. */
const encodedJson = (answer: typeof EngramApi.BatchWriteAnswer.Type) =>
  JSON.parse(JSON.stringify(Schema.encodeSync(EngramApi.BatchWriteAnswer)(answer)))

const agent = { background: RoutingPresets.userBackgroundSections, spec: RoutingPresets.userBackground.key }

const stored = (served: Effect.Effect.Success<ReturnType<typeof serveWith>>) =>
  Effect.provide(
    Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({ scopes: ["project:a", "project:b"] })),
    served.context
  ).pipe(Effect.map((page) => page.records), Effect.orDie)

interface Results {
  readonly results: ReadonlyArray<{
    readonly record: { readonly id: string; readonly content: string; readonly scope: string }
    readonly promotions: ReadonlyArray<{ readonly recordId: string }>
  }>
}

describe("HTTP batch write", () => {
  it.live("stores every record in order, each with its assigned id and its promotion rows", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({ agent: yield* StablePrefix.decodeConfig({ ...agent, scope: "project:a" }) })
      const answer = yield* served.request("POST", "/api/memories/batch", {
        token: served.tokens.a,
        body: {
          records: [
            { content: "The user's name is Ada", kind: "profile", label: "name", sourceType: "operator" },
            { content: "deploys run on Fridays", kind: "note" },
            { content: "the build uses esbuild", kind: "fact" }
          ]
        }
      })
      expect(answer.status, answer.text).toBe(201)
      const { results } = answer.json as Results
      expect(results.map((result) => result.record.content)).toEqual([
        "The user's name is Ada",
        "deploys run on Fridays",
        "the build uses esbuild"
      ])
      expect(results.every((result) => result.record.scope === "project:a")).toBe(true)
      // Records the routing spec places are answered with their own promotion rows.
      expect(results[0]!.promotions.map((row) => row.recordId)).toEqual([results[0]!.record.id])
      for (const result of results) {
        expect(result.promotions.every((row) => row.recordId === result.record.id)).toBe(true)
      }
      const ids = (yield* stored(served)).map((record) => record.id).sort()
      expect(ids).toEqual(results.map((result) => result.record.id).sort())
      // The body is what the documented answer schema encodes, no field more or less.
      const decoded = Schema.decodeUnknownSync(EngramApi.BatchWriteAnswer, { onExcessProperty: "error" })(answer.json)
      expect(answer.json).toEqual(encodedJson(decoded))
    })))

  it("answers the JSON the answer schema encodes, for a record with every field set", () => {
    const { promotion, record } = everyFieldAnswer()
    const answer = { results: [{ record, promotions: [promotion] }] }
    const response = batchWritten(answer)
    expect(response.status).toBe(201)
    const body = response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : ""
    expect(JSON.parse(body)).toEqual(encodedJson(answer))
  })

  it.live("one refused record stores none of the batch, and the refusal names it", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({})
      const invalid = yield* served.request("POST", "/api/memories/batch", {
        token: served.tokens.a,
        body: { records: [{ content: "fine", kind: "note" }, { content: "", kind: "note" }] }
      })
      expect(invalid.status).toBe(400)
      expect(invalid.text).toContain(`"path":["records",1,"content"]`)
      const foreign = yield* served.request("POST", "/api/memories/batch", {
        token: served.tokens.a,
        body: { records: [{ content: "fine", kind: "note" }, { content: "theirs", kind: "note", scope: "project:b" }] }
      })
      expect(foreign.status).toBe(404)
      const readOnly = yield* served.request("POST", "/api/memories/batch", {
        token: served.tokens.ro,
        body: { records: [{ content: "fine", kind: "note" }] }
      })
      expect(readOnly.status).toBe(403)
      expect(yield* stored(served)).toEqual([])
    })))

  it.live("refuses more than MAX_BATCH_WRITE records, naming the limit", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({})
      const records = Array.from(
        { length: EngramApi.MAX_BATCH_WRITE + 1 },
        (_, i) => ({ content: `r${i}`, kind: "note" })
      )
      const answer = yield* served.request("POST", "/api/memories/batch", { token: served.tokens.a, body: { records } })
      expect(answer.status).toBe(400)
      expect(answer.text).toContain("MAX_BATCH_WRITE")
      expect(yield* stored(served)).toEqual([])
      const full = yield* served.request("POST", "/api/memories/batch", {
        token: served.tokens.a,
        body: { records: records.slice(0, EngramApi.MAX_BATCH_WRITE) }
      })
      expect(full.status).toBe(201)
      expect((full.json as Results).results).toHaveLength(EngramApi.MAX_BATCH_WRITE)
    })))
})
