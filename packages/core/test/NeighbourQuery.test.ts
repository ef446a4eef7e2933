/**
 * A neighbour read's query decodes through a hand-written fast path (the record's field rules)
 * and, for anything it refuses, the `NeighbourQuery` schema. Both must accept and reject the same
 * queries, and give the same decoded value.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryQuery, MemoryWrite } from "@engram/core"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"

const queryArbitrary = Arbitrary.make(MemoryQuery.NeighbourQuery)
const bySchema = Schema.decodeUnknownEither(MemoryQuery.NeighbourQuery)
const decode = (input: unknown) => Effect.runSync(Effect.either(MemoryWrite.decodeNeighbourQuery(input)))

const keys = [...Object.keys(MemoryQuery.NeighbourQuery.fields), "extra"]
const positionKeys = ["scope", "thread", "turn", "extra"]

// Values a sloppy caller might pass in any field or position field, at the edges of every rule.
const oddValue = fc.constantFrom<unknown>(
  undefined,
  null,
  "",
  " ",
  "global",
  "project:",
  "project:a b",
  "session:x",
  `project:${"p".repeat(200)}`,
  `project:${"p".repeat(201)}`,
  "t",
  "t".repeat(200),
  "t".repeat(201),
  "a\nb",
  "a\u2028b",
  "\ud800",
  "a\u0000b",
  "x".repeat(128),
  "x".repeat(129),
  "-x",
  "a') OR 1=1 --",
  [],
  [""],
  ["global"],
  ["mem-1", "mem-2"],
  ["mem 1"],
  [1],
  ["note"],
  ["always"],
  ["confirmed"],
  [{ scope: "global", thread: "t", turn: 0 }],
  [{ scope: "global", thread: "t", turn: -1 }],
  [{ scope: "global", thread: "t" }],
  [{ scope: "global", thread: "t", turn: 0, extra: 1 }],
  [null],
  0,
  -0,
  -1,
  1,
  1.5,
  10_000,
  10_001,
  2_147_483_647,
  2_147_483_648,
  2 ** 53,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  false,
  {}
)

const agree = (candidate: unknown) => {
  const fast = decode(candidate)
  const slow = bySchema(candidate)
  expect(Either.isRight(fast)).toBe(Either.isRight(slow))
  if (Either.isRight(fast) && Either.isRight(slow)) expect(fast.right).toEqual(slow.right)
}

describe("neighbour query decoding", () => {
  it("the fast path and the schema agree, field by field", () => {
    fc.assert(
      fc.property(
        queryArbitrary,
        fc.constantFrom(...keys),
        oddValue,
        (query, key, value) => agree({ ...query, [key]: value })
      ),
      { numRuns: 3_000 }
    )
  })

  it("the fast path and the schema agree on each position's fields", () => {
    fc.assert(
      fc.property(
        queryArbitrary,
        fc.constantFrom(...positionKeys),
        oddValue,
        fc.nat(),
        (query, key, value, at) => {
          const positions = [...query.positions, { scope: "global", thread: "t", turn: 1 }]
          const index = at % positions.length
          agree({ ...query, positions: positions.map((p, i) => (i === index ? { ...p, [key]: value } : p)) })
        }
      ),
      { numRuns: 3_000 }
    )
  })

  it("valid queries decode to what the schema gives, in copies of the caller's arrays", () => {
    fc.assert(
      fc.property(queryArbitrary, (query) => {
        const fast = Either.getOrThrow(decode(query))
        expect(fast).toEqual(Either.getOrThrow(bySchema(query)))
        if (query.positions.length > 0) {
          expect(fast.positions).not.toBe(query.positions)
          expect(fast.positions[0]).not.toBe(query.positions[0])
        }
      }),
      { numRuns: 500 }
    )
  })

  it("a hidden or symbol key, and a class instance, are judged as the schema judges them", () => {
    const base = { positions: [{ scope: "global", thread: "t", turn: 1 }], window: 1 }
    class Query {
      positions = base.positions
      window = 1
    }
    const hiddenPosition = Object.defineProperty({ scope: "global", thread: "t" }, "turn", {
      value: 1,
      enumerable: false
    })
    for (
      const input of [
        { ...base, [Symbol("extra")]: 1 },
        Object.defineProperty({ ...base }, "extra", { value: 1, enumerable: false }),
        new Query(),
        { ...base, positions: [hiddenPosition] }
      ]
    ) agree(input)
    // A refusal names the field.
    expect(Either.flip(decode({ ...base, exclude: ["a b"] }))).toMatchObject({
      right: { _tag: "InvalidMemoryQuery", problem: expect.stringMatching(/exclude/) }
    })
  })
})
