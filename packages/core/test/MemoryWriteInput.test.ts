/**
 * Write inputs decode through a hand-written fast path (the record's field rules) and, for
 * anything it refuses, the `MemoryWriteInput` schema. Both must accept and reject the same inputs,
 * and give the same decoded value.
 */
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryRecord, MemoryStore, MemoryWrite } from "@engram/core"
import * as Arbitrary from "effect/Arbitrary"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"

// World time out of order is refused after the schema decodes (validFrom before validTo), so the
// schema alone accepts it: the arbitrary keeps to inputs both agree on, and a test below covers it.
const inputArbitrary = Arbitrary.make(MemoryRecord.MemoryWriteInput).filter((input) =>
  MemoryRecord.validityProblem(input.validFrom, input.validTo) === undefined
)
const bySchema = Schema.decodeUnknownEither(MemoryRecord.MemoryWriteInput)

const keys = [...Object.keys(MemoryRecord.MemoryWriteInput.fields), "extra"]

// Values a sloppy caller might pass in any field, at the edges of every rule.
const oddValue = fc.constantFrom<unknown>(
  undefined,
  null,
  "",
  " ",
  "\t",
  "note",
  "episode",
  "global",
  "project:",
  "project:a b",
  "session:x",
  "global ",
  `project:${"p".repeat(200)}`,
  `project:${"p".repeat(201)}`,
  "x".repeat(128),
  "x".repeat(129),
  "-x",
  "a b",
  "l".repeat(64),
  "l".repeat(65),
  "a\u2028b",
  "a\u0085b",
  "\ud800",
  "a\u0000b",
  [],
  [""],
  ["ok"],
  ["a\nb"],
  ["t".repeat(64)],
  ["t".repeat(65)],
  [1],
  "operator",
  "always",
  "on_demand",
  0,
  -1,
  1.5,
  36_500,
  36_500.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  {},
  true
)

const decodeOne = (input: unknown) => Effect.runSync(Effect.either(MemoryWrite.decodeInputs([input])))

describe("write input decoding", () => {
  it("world time is decoded from a DateTime or ISO text, and validFrom at or after validTo is refused", () => {
    const from = "2024-01-01T00:00:00.000Z"
    const decoded = Either.getOrThrow(decodeOne({ content: "x", kind: "fact", validFrom: from }))[0]!
    expect(decoded.validFrom?.toJSON()).toBe(from)
    const same = decodeOne({ content: "x", kind: "fact", validFrom: from, validTo: from })
    expect(Either.isLeft(same) && same.left.message).toContain("validFrom must be before validTo")
    expect(Either.isRight(decodeOne({ content: "x", kind: "fact", validTo: from }))).toBe(true)
  })

  it("the fast path and the schema agree, field by field", () => {
    fc.assert(
      fc.property(inputArbitrary, fc.constantFrom(...keys), oddValue, (input, key, value) => {
        const candidate = { ...input, [key]: value }
        const fast = decodeOne(candidate)
        const slow = bySchema(candidate, { onExcessProperty: "error" })
        expect(Either.isRight(fast)).toBe(Either.isRight(slow))
        if (Either.isRight(fast) && Either.isRight(slow)) expect(fast.right[0]).toEqual(slow.right)
      }),
      { numRuns: 3_000 }
    )
  })

  it("valid inputs decode to what the schema gives", () => {
    fc.assert(
      fc.property(inputArbitrary, (input) => {
        const fast = decodeOne(input)
        expect(Either.isRight(fast)).toBe(true)
        expect(Either.getOrThrow(fast)[0]).toEqual(Either.getOrThrow(bySchema(input)))
      }),
      { numRuns: 500 }
    )
  })

  it("an input with a symbol key or a hidden extra key is judged as the schema judges it", () => {
    const withSymbol = { content: "x", kind: "note", [Symbol("extra")]: 1 }
    const withHidden = Object.defineProperty({ content: "x", kind: "note" }, "extra", { value: 1, enumerable: false })
    const withHiddenField = Object.defineProperty({ kind: "note" }, "content", { value: "x", enumerable: false })
    for (const input of [withSymbol, withHidden, withHiddenField]) {
      const fast = decodeOne(input)
      const slow = bySchema(input, { onExcessProperty: "error" })
      expect(Either.isRight(fast)).toBe(Either.isRight(slow))
      if (Either.isRight(fast) && Either.isRight(slow)) expect(fast.right[0]).toEqual(slow.right)
    }
    // Refused with the key named, not a defect (the path used to throw on the symbol).
    expect(Either.flip(decodeOne(withSymbol))).toMatchObject({
      right: { index: 0, problem: expect.stringMatching(/Symbol\(extra\)/) }
    })
  })

  it("a class instance goes to the schema", () => {
    class Input {
      content = "x"
      kind = "note"
    }
    expect(Either.isRight(decodeOne(new Input()))).toBe(
      Either.isRight(bySchema(new Input(), { onExcessProperty: "error" }))
    )
  })

  it("a written record holds what the schema decodes of its input, for any valid input", () => {
    // prepareRecords builds records from the fields as read, without the decoded copy
    // decodeInputs makes: the records must be the ones a decoded input builds.
    fc.assert(
      fc.property(fc.array(inputArbitrary, { maxLength: 8 }), (inputs) => {
        const unique = inputs.filter((input, i) =>
          input.id === undefined || inputs.findIndex((o) => o.id === input.id) === i
        )
        const records = Effect.runSync(
          MemoryWrite.prepareRecords(unique).pipe(Effect.provide(IdGenerator.sequential("w")))
        )
        records.forEach((record, i) => {
          const decoded = Either.getOrThrow(bySchema(unique[i]))
          expect(record).toEqual(MemoryRecord.fromWriteInput(decoded, { id: record.id, now: record.createdAt }))
        })
      }),
      { numRuns: 300 }
    )
  })

  it("a record holds the content it checked: an input's accessor is read once", () => {
    let reads = 0
    // A content accessor that answers a NUL the second time it is asked.
    const input = Object.defineProperty({ kind: "note" }, "content", {
      get: () => (reads++ === 0 ? "checked content" : "unchecked\u0000content"),
      enumerable: true
    })
    const [record] = Effect.runSync(MemoryWrite.prepareRecords([input]).pipe(Effect.provide(IdGenerator.sequential())))
    expect(record!.content).toBe("checked content")
    expect(reads).toBe(1)
  })

  it.effect("a written record keeps its own tags: the caller's array stays the caller's", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const tags = ["fine"]
      const [written] = yield* store.write([{ content: "tagged", kind: "note", tags }])
      tags.push("added after the write")
      const { records: [stored] } = yield* store.get([written!.id])
      expect(written!.tags).toEqual(["fine"])
      expect(stored!.tags).toEqual(["fine"])
    }).pipe(Effect.provide(MemoryStore.layerMemory)))
})
