import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import { describe, expect, it } from "@effect/vitest"
import { ErrorClass } from "@engram/core"
import {
  BadRequest,
  Conflict,
  InsufficientStorage,
  NotFound,
  ReadOnlyToken,
  Unauthorized,
  Unavailable
} from "@engram/server/EngramApi"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { toHttp } from "../src/internal/handlers/shared.js"

// Each HTTP error with the status it is answered with: the one table `httpError` reads.
const errors = [
  [Unauthorized, 401],
  [ReadOnlyToken, 403],
  [BadRequest, 400],
  [NotFound, 404],
  [Conflict, 409],
  [Unavailable, 503],
  [InsufficientStorage, 507]
] as const

describe("HTTP errors", () => {
  it("each answers its status, carries its message and encodes as its tag and message", () => {
    for (const [ErrorType, status] of errors) {
      expect(HttpApiSchema.getStatusError(ErrorType)).toBe(status)
      const error = new ErrorType({ message: "why" })
      expect(error.message).toBe("why")
      expect(Schema.encodeSync(ErrorType as Schema.Schema<typeof error, unknown>)(error)).toEqual({
        _tag: error._tag,
        message: "why"
      })
    }
  })

  it.effect("toHttp answers each class of failure with its HTTP error", () =>
    Effect.gen(function*() {
      const expected: { readonly [C in ErrorClass.ErrorClass]: string } = {
        InvalidInput: "BadRequest",
        NotFound: "NotFound",
        Conflict: "Conflict",
        Misconfigured: "Unavailable",
        Unavailable: "Unavailable",
        StorageFull: "InsufficientStorage"
      }
      for (const errorClass of ErrorClass.all) {
        const answered = yield* Effect.flip(toHttp({ _tag: "Probe", message: "m", errorClass }))
        expect([answered._tag, answered.message]).toEqual([expected[errorClass], "m"])
      }
    }))
})
