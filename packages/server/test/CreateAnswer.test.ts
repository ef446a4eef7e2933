/**
 * `POST /api/memories` answers the record it stored and its promotion rows, serialised as the
 * handler holds them (decision 0228, as the batch answer since decision 0223): the body must be
 * exactly the JSON `CreatedAnswer`'s own encode gives. And the create route's refusals come in the
 * order they always did — a read-only token, then input by input a caller-chosen id, then a scope
 * the token does not hold — now that they are plain checks (`creatable`).
 */
import { describe, expect, it } from "@effect/vitest"
import { RoutingPresets } from "@engram/core"
import { StablePrefix } from "@engram/runtime"
import { EngramApi } from "@engram/server"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { created } from "../src/internal/handlers/batchAnswer.js"
import { creatable } from "../src/internal/handlers/shared.js"
import { everyFieldAnswer, serveWith } from "./utilities.js"

/** The JSON `CreatedAnswer`'s own encode gives: what the answer's body must equal. */
const encodedJson = (answer: typeof EngramApi.CreatedAnswer.Type) =>
  JSON.parse(JSON.stringify(Schema.encodeSync(EngramApi.CreatedAnswer)(answer)))

const agent = { background: RoutingPresets.userBackgroundSections, spec: RoutingPresets.userBackground.key }

describe("HTTP single create answer", () => {
  it.live("answers 201 with the record and its promotion rows, the body the answer schema encodes", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({ agent: yield* StablePrefix.decodeConfig({ ...agent, scope: "project:a" }) })
      const answer = yield* served.request("POST", "/api/memories", {
        token: served.tokens.a,
        body: { content: "The user's name is Ada", kind: "profile", label: "name", sourceType: "operator" }
      })
      expect(answer.status, answer.text).toBe(201)
      const decoded = Schema.decodeUnknownSync(EngramApi.CreatedAnswer, { onExcessProperty: "error" })(answer.json)
      expect(decoded.record.content).toBe("The user's name is Ada")
      expect(decoded.record.scope).toBe("project:a")
      expect(decoded.promotions.map((row) => row.recordId)).toEqual([decoded.record.id])
      expect(answer.json).toEqual(encodedJson(decoded))
      const read = yield* served.request("GET", `/api/memories/${decoded.record.id}`, { token: served.tokens.a })
      expect(read.status).toBe(200)
    })))

  it("serialises to the JSON the answer schema encodes, for a record with every field set", () => {
    const { promotion, record } = everyFieldAnswer()
    const answer = { record, promotions: [promotion] }
    const response = created(answer)
    expect(response.status).toBe(201)
    const body = response.body._tag === "Uint8Array" ? new TextDecoder().decode(response.body.body) : ""
    expect(JSON.parse(body)).toEqual(encodedJson(answer))
  })

  it("refuses a read-only token first, then input by input a caller's id, then a scope the token lacks", () => {
    const writer = { tokenId: "t", label: "w", scopes: ["project:a"], readOnly: false }
    const both = { ...writer, scopes: ["project:a", "project:b"] }
    const tagOf = (result: ReturnType<typeof creatable>) => Either.isLeft(result) ? result.left._tag : "Right"
    expect(tagOf(creatable({ ...writer, readOnly: true }, [{ content: "x", kind: "note", id: "mine" }])))
      .toBe("ReadOnlyToken")
    expect(tagOf(creatable(writer, [{ content: "x", kind: "note", id: "mine", scope: "project:b" }]))).toBe(
      "BadRequest"
    )
    expect(
      tagOf(
        creatable(writer, [{ content: "x", kind: "note", scope: "project:b" }, {
          content: "y",
          kind: "note",
          id: "mine"
        }])
      )
    )
      .toBe("NotFound")
    // A token of two scopes must name one.
    expect(tagOf(creatable(both, [{ content: "x", kind: "note" }]))).toBe("BadRequest")
    // Each stored input carries its scope: the requested one, or the token's only one.
    expect(creatable(writer, [{ content: "x", kind: "note" }])).toEqual(
      Either.right([{ content: "x", kind: "note", scope: "project:a" }])
    )
    expect(creatable(both, [{ content: "x", kind: "note", scope: "project:b" }])).toEqual(
      Either.right([{ content: "x", kind: "note", scope: "project:b" }])
    )
  })
})
