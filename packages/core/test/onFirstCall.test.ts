import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Schema from "effect/Schema"
import { onFirstCall } from "../src/internal/onFirstCall.js"

describe("onFirstCall", () => {
  it("makes the function on the first call, once, and answers as it does", () => {
    let made = 0
    const decode = onFirstCall(() => {
      made++
      return Schema.decodeUnknownSync(Schema.NumberFromString)
    })
    expect(made).toBe(0)
    fc.assert(fc.property(fc.integer(), (n) => decode(String(n)) === n))
    expect(made).toBe(1)
    expect(() => decode("not a number")).toThrow()
  })
})
