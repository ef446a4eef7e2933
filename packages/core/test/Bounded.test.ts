import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import * as fc from "fast-check"
import * as Bounded from "../src/Bounded.js"
import * as MemoryStore from "../src/MemoryStore.js"

const messageOf = <A, I>(schema: Schema.Schema<A, I>, value: unknown): string | undefined =>
  Either.match(Schema.decodeUnknownEither(schema)(value), {
    onLeft: (error) => ParseResult.TreeFormatter.formatErrorSync(error),
    onRight: () => undefined
  })

describe("Bounded", () => {
  it("accepts every number in the range, ends included, and refuses the rest naming field and range", () =>
    fc.assert(fc.property(fc.double({ min: -1e6, max: 1e6, noNaN: true }), (value) => {
      const message = messageOf(Bounded.number("weight", -1, 2.5), value)
      if (value >= -1 && value <= 2.5) expect(message).toBeUndefined()
      else expect(message).toBe("weight must be a number from -1 to 2.5")
    })))

  it("a value that is not a number at all gets the same message", () =>
    expect(messageOf(Bounded.number("k1", 0, 10), "high")).toBe("k1 must be a number from 0 to 10"))

  it("an integer range refuses fractions and out-of-range integers with the integer message", () => {
    const schema = Bounded.int("batchSize", 1, 256)
    expect(messageOf(schema, 1)).toBeUndefined()
    expect(messageOf(schema, 256)).toBeUndefined()
    expect(messageOf(schema, 257)).toBe("batchSize must be an integer from 1 to 256")
    expect(messageOf(schema, 2.5)).toBe("batchSize must be an integer from 1 to 256")
    expect(messageOf(schema, "3")).toBe("batchSize must be an integer from 1 to 256")
  })
})

describe("Bounded, through a store's search", () => {
  it.effect("a tuning value out of range fails the search naming the field and its range", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const error = yield* Effect.flip(store.search("ferry", { ranking: { k1: 50 } }))
      expect(error._tag).toBe("InvalidMemoryQuery")
      expect(error.message).toContain("k1 must be a number from 0 to 10")
    }).pipe(Effect.provide(MemoryStore.layerMemory)))
})
