import { expect, it } from "@effect/vitest"
import { MemoryRecord } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { failure, iso, listAll, plain, type Provide, store, T0 } from "./harness.js"

/** A record's corroboration as plain data: count, sessions and when last, or null. */
const corroborationOf = (record: MemoryRecord.MemoryRecord | undefined) =>
  record?.corroboration === undefined ? null : {
    count: record.corroboration.count,
    sessions: record.corroboration.sessions,
    lastAt: iso(DateTime.toEpochMillis(record.corroboration.lastAt))
  }

/** A record as stored without its corroboration: what a corroboration must leave unchanged. */
const withoutCorroboration = (record: MemoryRecord.MemoryRecord) => {
  const { corroboration: _, ...rest } = plain(record)
  return rest
}

/**
 * Corroboration (decision 0174): a restatement counts on its holder — count, distinct sessions
 * (the newest `MAX_CORROBORATION_SESSIONS`), when last — and the same answers come back from
 * every read on every backend; nothing else about the record changes.
 */
export const corroboration = <RExtra, LE>(provide: Provide<RExtra, LE>, keyword: boolean) => {
  it.effect("counts each restatement, names each session once, stamps the last time; every read agrees", () =>
    provide(Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      const [written] = yield* s.write([
        { id: "c1", content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator" }
      ])
      expect(written!.corroboration).toBeUndefined()
      yield* TestClock.setTime(T0 + 1_000)
      const once = yield* s.corroborate("c1", { session: "s-1" })
      expect(corroborationOf(once)).toEqual({ count: 1, sessions: ["s-1"], lastAt: iso(T0 + 1_000) })
      yield* TestClock.setTime(T0 + 2_000)
      yield* s.corroborate("c1", { session: "s-2" })
      yield* s.corroborate("c1", { session: "s-1" })
      yield* TestClock.setTime(T0 + 3_000)
      const last = yield* s.corroborate("c1")
      const expected = { count: 4, sessions: ["s-1", "s-2"], lastAt: iso(T0 + 3_000) }
      expect(corroborationOf(last)).toEqual(expected)
      expect(withoutCorroboration(last)).toEqual(withoutCorroboration(written!))

      const [got] = (yield* s.get(["c1"])).records
      expect(plain(got!)).toEqual(plain(last))
      expect((yield* listAll()).records.map(plain)).toEqual([plain(last)])
      if (keyword) {
        expect((yield* s.search("Doug")).hits.map((h) => plain(h.record))).toEqual([plain(last)])
      }
    })))

  it.effect("keeps the newest sessions, oldest first, while the count keeps counting", () =>
    provide(Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      yield* s.write([{ id: "c2", content: "The standup is at 9am", kind: "fact", sourceType: "operator" }])
      const max = MemoryRecord.MAX_CORROBORATION_SESSIONS
      for (let i = 0; i < max + 3; i++) yield* s.corroborate("c2", { session: `session-${i}` })
      const [read] = (yield* s.get(["c2"])).records
      expect(read!.corroboration!.count).toBe(max + 3)
      expect(read!.corroboration!.sessions).toEqual(Array.from({ length: max }, (_, i) => `session-${i + 3}`))
    })))

  it.effect("an unknown id is not found, a session that is no session id is refused, and nothing changes", () =>
    provide(Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      const [written] = yield* s.write([{ id: "c3", content: "The deploy day is Tuesday", kind: "fact" }])
      expect((yield* failure(s.corroborate("nope")))._tag).toBe("MemoryNotFound")
      expect((yield* failure(s.corroborate("not an id!")))._tag).toBe("MemoryNotFound")
      for (const session of ["", "two words", "x".repeat(201), "a\u0000b"]) {
        const error = yield* failure(s.corroborate("c3", { session }))
        expect(error._tag).toBe("InvalidMemoryInput")
      }
      expect((yield* s.get(["c3"])).records.map(plain)).toEqual([plain(written!)])
    })))

  it.effect("a pending, a rejected and a superseded record are corroborated alike; a successor starts uncorroborated", () =>
    provide(Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      yield* s.write([
        { id: "p1", content: "The pet's name is Rex", kind: "fact", sourceType: "extracted" },
        { id: "r1", content: "The pet's name is Max", kind: "fact", sourceType: "extracted" },
        { id: "o1", content: "The office is in Riga", kind: "fact", sourceType: "operator" }
      ])
      yield* s.setReviewState("r1", "rejected")
      yield* s.corroborate("o1", { session: "s-a" })
      const { successor, superseded } = yield* s.supersede("o1", {
        id: "o2",
        content: "The office is in Tallinn",
        kind: "fact",
        sourceType: "operator"
      })
      expect(corroborationOf(superseded)).toEqual({ count: 1, sessions: ["s-a"], lastAt: iso(T0) })
      expect(successor.corroboration).toBeUndefined()
      for (const id of ["p1", "r1", "o1"]) yield* s.corroborate(id, { session: "s-b" })
      const read = (yield* s.get(["p1", "r1", "o1", "o2"])).records
      expect(read.map((r) => [r.id, r.reviewState, r.corroboration?.count ?? 0, r.supersededBy ?? null])).toEqual([
        ["p1", "pending", 1, null],
        ["r1", "rejected", 1, null],
        ["o1", "confirmed", 2, "o2"],
        ["o2", "confirmed", 0, null]
      ])
    })))

  it.effect("restore keeps a corroboration verbatim", () =>
    provide(Effect.gen(function*() {
      const s = yield* store
      const record = new MemoryRecord.MemoryRecord({
        id: "k1",
        content: "The user's surname is Smith",
        kind: "profile",
        tags: [],
        sourceType: "operator",
        scope: "global",
        deliveryPolicy: "retrieved",
        reviewState: "confirmed",
        createdAt: DateTime.unsafeMake(T0),
        corroboration: { count: 7, sessions: ["s-x", "s-y"], lastAt: DateTime.unsafeMake(T0 + 5) }
      })
      yield* s.restore([record])
      expect((yield* s.get(["k1"])).records.map(plain)).toEqual([plain(record)])
    })))

  it.effect("corroborations racing on one record are all counted", () =>
    provide(Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      yield* s.write([{ id: "c4", content: "The team standup is at 10am", kind: "fact" }])
      yield* Effect.forEach(
        Array.from({ length: 24 }, (_, i) => i),
        (i) => s.corroborate("c4", { session: `race-${i % 4}` }),
        { concurrency: 8, discard: true }
      )
      const [read] = (yield* s.get(["c4"])).records
      expect(read!.corroboration!.count).toBe(24)
      expect([...read!.corroboration!.sessions].sort()).toEqual(["race-0", "race-1", "race-2", "race-3"])
    })))
}
