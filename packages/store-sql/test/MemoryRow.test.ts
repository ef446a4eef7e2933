/**
 * Row decoding has a fast path (the record's field checks on decoded values) and a reference path
 * (the row schema into the record schema). They must accept and reject the same rows.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryRecord, MemoryWrite } from "@engram/core"
import { MemoryRow } from "@engram/store-sql"
import * as Arbitrary from "effect/Arbitrary"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as Schema from "effect/Schema"

const recordArbitrary = Arbitrary.make(MemoryRecord.MemoryRecord)

const rowOf = (record: MemoryRecord.MemoryRecord): Record<string, unknown> => MemoryRow.toRow(record)

// Values a damaged or foreign row might hold in any column.
const oddValue = fc.constantFrom<unknown>(
  null,
  "",
  " ",
  "bogus",
  "note",
  "global",
  "project:",
  "[]",
  "[1]",
  "[\"a\\nb\"]",
  "{}",
  "not json",
  0,
  -1,
  1.5,
  Number.NaN,
  8.64e15,
  8.64e15 + 1,
  1_700_000_000_000,
  "1700000000000",
  "2024-01-01",
  // At the edges of the field rules the hand-written check repeats (lengths, line breaks, lone
  // surrogates, NUL, patterns).
  "[\"\"]",
  `["${"t".repeat(64)}"]`,
  `["${"t".repeat(65)}"]`,
  "[\"a\\u2028b\"]",
  "[\"\\ud800\"]",
  "[\"a\\u0000\"]",
  "l".repeat(64),
  "l".repeat(65),
  "a\u2028b",
  "a\u0085b",
  "\ud800",
  "a\u0000b",
  "\t",
  "x".repeat(128),
  "x".repeat(129),
  "-x",
  "a b",
  "project:a b",
  "session:x",
  "global ",
  `project:${"p".repeat(200)}`,
  `project:${"p".repeat(201)}`
)

describe("stored row decoding", () => {
  it("decodes every row written from a valid record back to that record", () => {
    fc.assert(
      fc.property(recordArbitrary, (record) => {
        const decoded = MemoryRow.fromRow(rowOf(record))
        expect(Either.isRight(decoded)).toBe(true)
        expect(MemoryWrite.encodeStoredRecord(Either.getOrThrow(decoded))).toEqual(
          MemoryWrite.encodeStoredRecord(record)
        )
      }),
      { numRuns: 300 }
    )
  })

  it("builds what the class constructor builds from the same fields (decision 0110)", () => {
    const isRecord = Schema.is(MemoryRecord.MemoryRecord)
    fc.assert(
      fc.property(recordArbitrary, (record) => {
        const decoded = Either.getOrThrow(MemoryRow.fromRow(rowOf(record)))
        const expected = new MemoryRecord.MemoryRecord({ ...decoded }, { disableValidation: true })
        expect(Object.getPrototypeOf(decoded)).toBe(MemoryRecord.MemoryRecord.prototype)
        expect(decoded).toStrictEqual(expected)
        expect(Reflect.ownKeys(decoded)).toEqual(Reflect.ownKeys(expected))
        expect(isRecord(decoded)).toBe(true)
        expect(String(decoded)).toBe(String(expected))
        expect([decoded.trustTier, decoded.flagged]).toEqual([expected.trustTier, expected.flagged])
      }),
      { numRuns: 300 }
    )
  })

  it("the fast path and the row schema agree on damaged rows", () => {
    fc.assert(
      fc.property(recordArbitrary, fc.constantFrom(...MemoryRow.COLUMNS), oddValue, (record, column, value) => {
        const row = { ...rowOf(record), [column]: value }
        const fast = MemoryRow.fromRow(row)
        const slow = MemoryRow.fromRowSlowly(row)
        expect(Either.isRight(fast)).toBe(Either.isRight(slow))
        if (Either.isRight(fast) && Either.isRight(slow)) {
          expect(MemoryWrite.encodeStoredRecord(fast.right)).toEqual(MemoryWrite.encodeStoredRecord(slow.right))
        }
        if (Either.isLeft(fast)) expect(fast.left.length).toBeGreaterThan(0)
      }),
      { numRuns: 2_000 }
    )
  })
})
