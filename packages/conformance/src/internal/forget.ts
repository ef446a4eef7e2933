import { expect, it } from "@effect/vitest"
import { MemoryForget, PromotionStore, Routing } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as TestClock from "effect/TestClock"
import { failure, idsOf, listAll, type Provide, store, T0 } from "./harness.js"

// The kit's signature asks for a PromotionStore on the same backend beside the MemoryStore.
const promotions = PromotionStore.PromotionStore

const placed = (recordId: string, scope: string, key: string): PromotionStore.PromotionRow => {
  const placement = Routing.background("about_user", key)
  return {
    recordId,
    scope,
    placement,
    placementKey: Routing.placementKey(placement),
    keySource: "label",
    specKey: "user-background",
    specVersion: "1",
    promotedAt: DateTime.unsafeMake(T0),
    tier: "auto"
  }
}

const encodeTombstone = (tombstone: MemoryForget.Tombstone) => Schema.encodeSync(MemoryForget.Tombstone)(tombstone)

/** Forget: hard deletion with a tombstone, on every backend (Tier 1). */
export const forget = <RExtra, LE>(provide: Provide<PromotionStore.PromotionStore | RExtra, LE>) => {
  it.effect("forget by id removes the record from get, list and search, and leaves a tombstone without content", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      yield* s.write([
        { id: "keep", content: "Doug drinks tea", kind: "profile", scope: "project:a" },
        {
          id: "gone",
          content: "Doug's passport number is zebra42",
          kind: "profile",
          label: "passport",
          tags: ["secret"],
          scope: "project:a"
        }
      ])
      yield* TestClock.adjust("1 hour")
      const result = yield* s.forget({ ids: ["gone"] }, { by: "operator:ana" })
      expect(result.tombstones.map(encodeTombstone)).toEqual([
        {
          memoryId: "gone",
          scope: "project:a",
          forgottenAt: new Date(T0 + 3_600_000).toISOString(),
          forgottenBy: "operator:ana"
        }
      ])
      expect(JSON.stringify(result.tombstones.map(encodeTombstone))).not.toMatch(/zebra|passport|secret/)
      expect(idsOf((yield* s.get(["gone", "keep"])).records)).toEqual(["keep"])
      expect(idsOf((yield* listAll({ includeSuperseded: true })).records)).toEqual(["keep"])
      if (s.capabilities.search === "keyword") {
        expect((yield* s.search("zebra42 passport secret")).hits).toEqual([])
      }
      expect((yield* s.tombstones({ ids: ["gone"] })).map(encodeTombstone)).toEqual(
        result.tombstones.map(encodeTombstone)
      )
      expect(yield* s.tombstones({ scopes: ["global"] })).toEqual([])
    }).pipe(provide))

  it.effect("a forgotten record's index entries are gone: a new record under its id does not match its old words", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* s.write([{ id: "x", content: "the vault code is kumquat", kind: "note" }])
      yield* s.forget({ ids: ["x"] }, { by: "cli" })
      yield* s.write([{ id: "x", content: "nothing to see", kind: "note" }])
      expect((yield* s.get(["x"])).records.map((r) => r.content)).toEqual(["nothing to see"])
      if (s.capabilities.search === "keyword") {
        expect((yield* s.search("kumquat vault")).hits).toEqual([])
        expect((yield* s.search("nothing")).hits.map((h) => h.record.id)).toEqual(["x"])
      }
    }).pipe(provide))

  it.effect("forget by scope removes every record of that scope and only those", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* s.write([
        { id: "a1", content: "alpha one", kind: "note", scope: "project:a" },
        { id: "a2", content: "alpha two", kind: "note", scope: "project:a", sourceType: "operator" },
        { id: "b1", content: "alpha bee", kind: "note", scope: "project:b" },
        { id: "g1", content: "alpha global", kind: "note" }
      ])
      const result = yield* s.forget({ scope: "project:a" }, { by: "api:token-1" })
      expect(result.tombstones.map((t) => t.memoryId)).toEqual(["a1", "a2"])
      expect(idsOf((yield* listAll()).records).slice().sort()).toEqual(["b1", "g1"])
      if (s.capabilities.search === "keyword") {
        expect((yield* s.search("alpha")).hits.map((h) => h.record.id).sort()).toEqual(["b1", "g1"])
      }
      expect((yield* s.tombstones({ scopes: ["project:a"] })).map((t) => t.memoryId)).toEqual(["a1", "a2"])
    }).pipe(provide))

  it.effect("forget by id within scopes leaves records outside them; unknown ids are ignored", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* s.write([
        { id: "a", content: "one", kind: "note", scope: "project:a" },
        { id: "b", content: "two", kind: "note", scope: "project:b" }
      ])
      const result = yield* s.forget({ ids: ["a", "b", "ghost"], scopes: ["project:a"] }, { by: "t" })
      expect(result.tombstones.map((t) => t.memoryId)).toEqual(["a"])
      expect(idsOf((yield* listAll()).records)).toEqual(["b"])
      expect((yield* s.forget({ ids: ["a", "ghost"] }, { by: "t" })).tombstones).toEqual([])
    }).pipe(provide))

  it.effect("an invalid request (blank by, bad id) deletes nothing and fails with InvalidMemoryQuery", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* s.write([{ id: "a", content: "one", kind: "note" }])
      const blank = yield* failure(s.forget({ ids: ["a"] }, { by: "  " }))
      expect(blank._tag).toBe("InvalidMemoryQuery")
      expect(blank.message).toContain("who forgot")
      const badId = yield* failure(s.forget({ ids: ["a", "not an id"] }, { by: "t" }))
      expect(badId._tag).toBe("InvalidMemoryQuery")
      expect(idsOf((yield* listAll()).records)).toEqual(["a"])
      expect(yield* s.tombstones()).toEqual([])
    }).pipe(provide))

  it.effect("a supersession chain through a forgotten record stays readable", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      yield* s.write([{ id: "v1", content: "Doug lives in Lisbon", kind: "profile" }])
      yield* TestClock.adjust("1 minute")
      yield* s.supersede("v1", { id: "v2", content: "Doug lives in Porto", kind: "profile" })
      yield* TestClock.adjust("1 minute")
      yield* s.supersede("v2", { id: "v3", content: "Doug lives in Faro", kind: "profile" })
      yield* s.forget({ ids: ["v2"] }, { by: "operator" })
      const { records } = yield* s.get(["v1", "v3"])
      expect(records.map((r) => [r.id, r.supersedes, r.supersededBy])).toEqual([
        ["v1", undefined, "v2"],
        ["v3", "v2", undefined]
      ])
      const graves = yield* s.tombstones()
      const byId = new Map(records.map((r) => [r.id, r]))
      const chain = MemoryForget.supersessionChain("v3", (id): MemoryForget.ChainLink => {
        const record = byId.get(id)
        if (record !== undefined) return { _tag: "Record", record }
        const tombstone = graves.find((t) => t.memoryId === id)
        return tombstone !== undefined ? { _tag: "Forgotten", tombstone } : { _tag: "Missing", id }
      })
      expect(chain.map((link) =>
        link._tag === "Record" ? link.record.id : link._tag === "Forgotten" ? `(${link.tombstone.memoryId})` : "?"
      ))
        .toEqual(["v1", "(v2)", "v3"])
    }).pipe(provide))

  it.effect("forget deletes the record's promotion rows and no one else's", () =>
    Effect.gen(function*() {
      const s = yield* store
      const rows = yield* promotions
      yield* s.write([
        { id: "p1", content: "Ana", kind: "profile", label: "name" },
        { id: "p2", content: "tea", kind: "profile", label: "drink" }
      ])
      yield* rows.commit([placed("p1", "global", "name"), placed("p2", "global", "drink")])
      yield* s.forget({ ids: ["p1"] }, { by: "t" })
      expect((yield* rows.getByRecords(["p1", "p2"])).rows.map((r) => r.recordId)).toEqual(["p2"])
      expect((yield* rows.lookup("global", Routing.placementKey(Routing.background("about_user", "name")))).rows)
        .toEqual([])
    }).pipe(provide))

  it.effect("when deleting promotion rows fails, nothing is forgotten", () =>
    Effect.gen(function*() {
      const s = yield* store
      const rows = yield* promotions
      yield* s.write([{ id: "p1", content: "Ana", kind: "profile", label: "name" }])
      yield* rows.commit([placed("p1", "global", "name")])
      // The store took this promotion store when it was built (decision 0164): its forget fails
      // for the length of this call.
      const mutable = rows as { forget: PromotionStore.Service["forget"] }
      const working = mutable.forget
      const error = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          mutable.forget = () =>
            Effect.fail(
              new PromotionStore.PromotionStoreFailure({ operation: "forget", cause: new Error("disk full") })
            )
        }),
        () => failure(s.forget({ ids: ["p1"] }, { by: "t" })),
        () => Effect.sync(() => (mutable.forget = working))
      )
      expect(error._tag).toBe("MemoryStoreFailure")
      expect(idsOf((yield* s.get(["p1"])).records)).toEqual(["p1"])
      expect(yield* s.tombstones()).toEqual([])
      expect((yield* rows.getByRecords(["p1"])).rows.length).toBe(1)
    }).pipe(provide))
}
