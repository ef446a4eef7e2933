import { describe, expect, it } from "@effect/vitest"
import { MemoryQuery, MemoryRecord } from "@engram/core"
import { Arbitrary, DateTime, Either, FastCheck as fc } from "effect"

const T0 = Date.UTC(2025, 2, 14, 9, 26, 53, 589)

// Few distinct instants and short ids, so ties on createdAt are common.
const instant = fc.constantFrom(0, 1, T0 - 1, T0, T0 + 1, -1_000)
const shortId = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,3}$/)

const recordAt = (id: string, millis: number) =>
  MemoryRecord.fromWriteInput({ content: "x", kind: "note" }, { id, now: DateTime.unsafeMake(millis) })

const record = fc.tuple(shortId, instant).map(([id, millis]) => recordAt(id, millis))
// A store never holds two records with one id.
const records = fc.uniqueArray(record, { selector: (r) => r.id, maxLength: 25 })

const sign = (n: number) => (n > 0 ? 1 : n < 0 ? -1 : 0)
const key = (r: MemoryRecord.MemoryRecord) => `${DateTime.toEpochMillis(r.createdAt)}~${r.id}`

describe("compareListOrder", () => {
  it.prop("is antisymmetric, and zero only for the same instant and id", [record, record], ([a, b]) => {
    // `+ 0` folds -0 into 0: two equal records compare 0 both ways, and toBe tells 0 from -0.
    expect(sign(MemoryQuery.compareListOrder(a, b))).toBe(-sign(MemoryQuery.compareListOrder(b, a)) + 0)
    expect(MemoryQuery.compareListOrder(a, b) === 0).toBe(key(a) === key(b))
  })

  it.prop("is transitive", [record, record, record], ([a, b, c]) => {
    if (MemoryQuery.compareListOrder(a, b) <= 0 && MemoryQuery.compareListOrder(b, c) <= 0) {
      expect(MemoryQuery.compareListOrder(a, c)).toBeLessThanOrEqual(0)
    }
  })

  it.prop(
    "sorts every permutation of a set of records into the same list",
    [records.chain((rs) => fc.tuple(fc.constant(rs), fc.shuffledSubarray(rs, { minLength: rs.length })))],
    ([[original, shuffled]]) => {
      const a = [...original].sort(MemoryQuery.compareListOrder).map((r) => r.id)
      const b = [...shuffled].sort(MemoryQuery.compareListOrder).map((r) => r.id)
      expect(b).toEqual(a)
    }
  )

  it.prop("puts newer records first and breaks ties by raw id order", [records], ([rs]) => {
    const sorted = [...rs].sort(MemoryQuery.compareListOrder)
    for (let i = 1; i < sorted.length; i++) {
      const [prev, next] = [sorted[i - 1]!, sorted[i]!]
      const [tp, tn] = [DateTime.toEpochMillis(prev.createdAt), DateTime.toEpochMillis(next.createdAt)]
      expect(tp).toBeGreaterThanOrEqual(tn)
      if (tp === tn) expect(prev.id < next.id).toBe(true)
    }
  })

  it("compares ids by code units, not by locale", () => {
    const ids = ["a", "B", "10", "9", "a_1", "a-1", "a.1"]
    const sorted = ids.map((id) => recordAt(id, T0)).sort(MemoryQuery.compareListOrder).map((r) => r.id)
    expect(sorted).toEqual(["10", "9", "B", "a", "a-1", "a.1", "a_1"])
  })
})

describe("cursors", () => {
  const memoryId = Arbitrary.make(MemoryRecord.MemoryId)
  const millis = fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 })

  it.prop("decode what encode produced", [millis, memoryId], ([createdAtMillis, id]) => {
    const decoded = MemoryQuery.decodeCursor(MemoryQuery.encodeCursor({ createdAtMillis, id }))
    expect(decoded).toEqual(Either.right({ createdAtMillis, id }))
  })

  it.prop("reject text that no listing produced", [fc.string().filter((s) => !s.includes("~"))], ([s]) => {
    const decoded = MemoryQuery.decodeCursor(s)
    expect(Either.isLeft(decoded) && decoded.left._tag).toBe("InvalidCursor")
  })

  it.prop("resume exactly after the record a page ended on", [record, record], ([end, r]) => {
    expect(MemoryQuery.isAfter(r, MemoryQuery.positionOf(end))).toBe(MemoryQuery.compareListOrder(end, r) < 0)
  })
})
