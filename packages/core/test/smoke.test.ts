import { it, expect } from "@effect/vitest"
import { Effect } from "effect"
import { MemoryStore, IdGenerator } from "@engram/core"

it.effect("writes and lists", () =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    yield* store.write([{ content: "My name is Doug", kind: "profile", label: "name", sourceType: "operator" }, { content: "x", kind: "note" }])
    const page = yield* store.list()
    expect(page.records.map((r) => r.id)).toEqual(["mem-000001", "mem-000002"])
    expect(page.records[0]!.trustTier).toBe(3)
    const s = yield* store.search("DOUG? am")
    expect(s.hits.map((h) => h.record.id)).toEqual(["mem-000001"])
  }).pipe(Effect.provide(MemoryStore.layerMemory), Effect.provide(IdGenerator.sequential())))
