import { expect, it } from "@effect/vitest"
import type { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import { idsOf, type Provide, store } from "./harness.js"

export const badRows = <RExtra, LE>(
  provide: Provide<RExtra, LE>,
  corruptRecord: (id: string) => Effect.Effect<void, unknown, MemoryStore.MemoryStore | RExtra>,
  keywordSearch: boolean
) => {
  const writeAndCorrupt = Effect.gen(function*() {
    const s = yield* store
    yield* s.write([
      { id: "row-a", content: "Shared word alpha", kind: "note" },
      { id: "row-b", content: "Shared word beta", kind: "note" },
      { id: "row-c", content: "Shared word gamma", kind: "note" }
    ])
    yield* corruptRecord("row-b")
  })

  it.effect("a listing skips the undecodable row, returns the others and counts it", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* writeAndCorrupt
      const page = yield* s.list()
      expect(idsOf(page.records)).toEqual(["row-a", "row-c"])
      expect(page.skipped).toBe(1)
    }).pipe(provide))

  it.effect("get skips the undecodable row and counts it", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* writeAndCorrupt
      const result = yield* s.get(["row-c", "row-b", "row-a"])
      expect(idsOf(result.records)).toEqual(["row-c", "row-a"])
      expect(result.skipped).toBe(1)
    }).pipe(provide))

  if (!keywordSearch) return

  it.effect("search skips the undecodable row and counts it", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* writeAndCorrupt
      const result = yield* s.search("shared")
      expect(idsOf(result.hits.map((hit) => hit.record)).slice().sort()).toEqual(["row-a", "row-c"])
      expect(result.skipped).toBe(1)
    }).pipe(provide))
}
