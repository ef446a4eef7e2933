import { describe, expect, it } from "@effect/vitest"
import { type MemoryQuery, MemoryRecord } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { failure, idsOf, iso, listAll, plain, type Provide, sortedIds, store } from "./harness.js"

const at = (text: string): DateTime.Utc => DateTime.unsafeMake(text)
const NOW = Date.UTC(2026, 0, 15, 12, 0, 0)

/**
 * A user's address over time, written now (2026-01-15): Elm Street from 2024-01-01, superseded by
 * Oak Avenue from 2025-03-01; the office phone, superseded with no world time on either; an
 * always-true fact with no bounds; a closed interval (a 2024 trip); a fact that starts next month;
 * a rejected one.
 */
const writeHistory = Effect.gen(function*() {
  const s = yield* store
  yield* TestClock.setTime(NOW - 3_600_000)
  yield* s.write([
    {
      id: "elm",
      content: "The user's address is Elm Street",
      kind: "fact",
      sourceType: "operator",
      validFrom: at("2024-01-01T00:00:00Z")
    },
    {
      id: "phone-old",
      content: "The office phone address book entry is 555-0100",
      kind: "fact",
      sourceType: "operator"
    },
    { id: "always", content: "The user's birth address is Riga", kind: "fact", sourceType: "operator" },
    {
      id: "trip",
      content: "The user's holiday address is Lisbon",
      kind: "fact",
      sourceType: "operator",
      validFrom: at("2024-07-01T00:00:00Z"),
      validTo: at("2024-08-01T00:00:00Z")
    },
    {
      id: "future",
      content: "The user's work address is Berlin",
      kind: "fact",
      sourceType: "operator",
      validFrom: at("2026-02-01T00:00:00Z")
    },
    {
      id: "rejected",
      content: "The user's address is Nowhere",
      kind: "fact",
      sourceType: "extracted",
      validFrom: at("2024-01-01T00:00:00Z")
    }
  ])
  yield* s.setReviewState("rejected", "rejected")
  yield* TestClock.setTime(NOW - 60_000)
  // Said in January 2026 about March 2025: world time earlier than the record's creation.
  yield* s.supersede("elm", {
    id: "oak",
    content: "The user's address is Oak Avenue",
    kind: "fact",
    sourceType: "operator",
    validFrom: at("2025-03-01T00:00:00.000Z")
  })
  yield* s.supersede("phone-old", {
    id: "phone-new",
    content: "The office phone address book entry is 555-0199",
    kind: "fact",
    sourceType: "operator"
  })
  yield* TestClock.setTime(NOW)
})

/** Ids a deliverable listing and a deliverable keyword search both give, as of `asOf` (now when absent). */
const readAll = (keyword: boolean) => (asOf?: DateTime.Utc) =>
  Effect.gen(function*() {
    const s = yield* store
    const filters: MemoryQuery.MemoryFilters = { deliverable: true, ...(asOf !== undefined ? { asOf } : {}) }
    const listed = sortedIds((yield* listAll(filters)).records)
    if (!keyword) return listed
    const searched = sortedIds((yield* s.search("address", { ...filters, limit: 50 })).hits.map((h) => h.record))
    const newest = sortedIds(
      (yield* s.search("address", { ...filters, limit: 50, order: "newest" })).hits.map((h) => h.record)
    )
    expect(searched).toEqual(listed)
    expect(newest).toEqual(listed)
    return listed
  })

/**
 * World time (decision 0173): `validFrom` / `validTo` round-trip on every backend, "current" (a
 * deliverable read) means valid now, and `asOf` reads the records valid at an instant — the same
 * ids from a listing and a search, on every backend.
 */
export const worldTime = <RExtra, LE>(provide: Provide<RExtra, LE>, keyword: boolean) => {
  const readBoth = readAll(keyword)
  describe("round trip", () => {
    it.effect("validFrom and validTo come back as written, from a DateTime or from ISO text, and absent stays absent", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(NOW)
        const written = yield* s.write([
          { id: "w1", content: "one", kind: "fact", validFrom: at("2024-01-01T00:00:00.007Z") },
          {
            id: "w2",
            content: "two",
            kind: "fact",
            // ISO text, as a caller holding the encoded input sends it: the store decodes it.
            validFrom: "2023-05-01T10:00:00.000Z" as unknown as DateTime.Utc,
            validTo: "2024-05-01T10:00:00.000Z" as unknown as DateTime.Utc
          },
          { id: "w3", content: "three", kind: "fact" }
        ])
        const read = (yield* s.get(["w1", "w2", "w3"])).records
        expect(read.map(plain)).toEqual(written.map(plain))
        expect(read.map((r) => r.validFrom === undefined ? null : iso(DateTime.toEpochMillis(r.validFrom)))).toEqual([
          "2024-01-01T00:00:00.007Z",
          "2023-05-01T10:00:00.000Z",
          null
        ])
        expect(read.map((r) => r.validTo === undefined ? null : iso(DateTime.toEpochMillis(r.validTo)))).toEqual([
          null,
          "2024-05-01T10:00:00.000Z",
          null
        ])
        expect((yield* listAll()).records.map(plain)).toEqual([...written].reverse().map(plain))
      })))

    it.effect("restore keeps a record's world time; a successor carries its own", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        yield* TestClock.setTime(NOW)
        const record = new MemoryRecord.MemoryRecord({
          id: "r1",
          content: "restored",
          kind: "fact",
          tags: [],
          sourceType: "operator",
          scope: "global",
          deliveryPolicy: "retrieved",
          reviewState: "confirmed",
          createdAt: DateTime.unsafeMake(NOW),
          validFrom: at("2020-01-01T00:00:00Z"),
          validTo: at("2021-01-01T00:00:00Z")
        })
        yield* s.restore([record])
        expect((yield* s.get(["r1"])).records.map(plain)).toEqual([plain(record)])
        const { successor } = yield* s.supersede("r1", {
          id: "r2",
          content: "next",
          kind: "fact",
          validFrom: at("2021-01-01T00:00:00Z")
        })
        expect((yield* s.get(["r2"])).records.map(plain)).toEqual([plain(successor)])
        expect(successor.validTo).toBeUndefined()
      })))

    it.effect("validFrom at or after validTo is refused with its index, and nothing is stored", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const error = yield* failure(s.write([
          { id: "ok", content: "fine", kind: "fact" },
          {
            id: "bad",
            content: "bad",
            kind: "fact",
            validFrom: at("2024-02-01T00:00:00Z"),
            validTo: at("2024-01-01T00:00:00Z")
          }
        ]))
        expect(error).toMatchObject({ _tag: "InvalidMemoryInput", index: 1 })
        expect(String((error as { problem?: string }).problem)).toContain("validFrom must be before validTo")
        expect((yield* listAll()).records).toEqual([])
      })))
  })

  describe("current and as-of reads", () => {
    it.effect("a deliverable read is current: a fact not yet valid or no longer valid is left out; a plain listing keeps them", () =>
      provide(Effect.gen(function*() {
        yield* writeHistory
        expect(yield* readBoth()).toEqual(["always", "oak", "phone-new"])
        expect(sortedIds((yield* listAll()).records)).toEqual([
          "always",
          "future",
          "oak",
          "phone-new",
          "rejected",
          "trip"
        ])
        // A month on, the Berlin address has started.
        yield* TestClock.setTime(Date.UTC(2026, 1, 2))
        expect(yield* readBoth()).toEqual(["always", "future", "oak", "phone-new"])
      })))

    it.effect("as of an instant: the value that held then, superseded or not, and unknown bounds open", () =>
      provide(Effect.gen(function*() {
        yield* writeHistory
        // Before Elm Street: only facts with no start (the phone's first entry ends when it was replaced).
        expect(yield* readBoth(at("2023-06-01T00:00:00Z"))).toEqual(["always", "phone-old"])
        // Elm Street held, and the trip; the rejected record never is delivered.
        expect(yield* readBoth(at("2024-07-15T00:00:00Z"))).toEqual(["always", "elm", "phone-old", "trip"])
        // Its end is exclusive.
        expect(yield* readBoth(at("2024-08-01T00:00:00Z"))).toEqual(["always", "elm", "phone-old"])
        // Oak Avenue from its validFrom, before it was written: Elm Street ends where Oak Avenue starts.
        expect(yield* readBoth(at("2025-03-01T00:00:00Z"))).toEqual(["always", "oak", "phone-old"])
        expect(yield* readBoth(at("2025-02-28T23:59:59.999Z"))).toEqual(["always", "elm", "phone-old"])
        // The phone's successor carries no world time: it starts when it was written.
        expect(yield* readBoth(at(iso(NOW - 60_000)))).toEqual(["always", "oak", "phone-new"])
        expect(yield* readBoth(at(iso(NOW - 60_001)))).toEqual(["always", "oak", "phone-old"])
        // Next month.
        expect(yield* readBoth(at("2026-03-01T00:00:00Z"))).toEqual(["always", "future", "oak", "phone-new"])
      })))

    it.effect("as of, without deliverable: review filters still apply, rejected records are listed", () =>
      provide(Effect.gen(function*() {
        yield* writeHistory
        const s = yield* store
        const asOf = at("2024-07-15T00:00:00Z")
        expect(sortedIds((yield* listAll({ asOf })).records)).toEqual([
          "always",
          "elm",
          "phone-old",
          "rejected",
          "trip"
        ])
        expect(sortedIds((yield* listAll({ asOf, reviewStates: ["pending", "rejected"] })).records)).toEqual([
          "rejected"
        ])
        const page = yield* s.list({ asOf, limit: 2 })
        expect(idsOf(page.records).length).toBe(2)
      })))
  })
}
