import { expect, it } from "@effect/vitest"
import type { MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
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
      expect(idsOf(page.records)).toEqual(["row-c", "row-a"])
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

  it.effect("paging: every bad row is counted exactly once, on the page whose rows it sits among", () =>
    Effect.gen(function*() {
      const s = yield* store
      // Seven records, newest first r-7 … r-1 (one write each, so the order is fixed); two damaged.
      for (let i = 1; i <= 7; i++) {
        yield* s.write([{ id: `r-${i}`, content: `paged record ${i}`, kind: "note" }])
        yield* TestClock.adjust("1 second")
      }
      yield* corruptRecord("r-6")
      yield* corruptRecord("r-3")
      const pages: Array<{ readonly ids: ReadonlyArray<string>; readonly skipped: number }> = []
      let cursor: string | undefined
      do {
        const page: MemoryStore.ListPage = yield* s.list({ limit: 2, ...(cursor === undefined ? {} : { cursor }) })
        pages.push({ ids: idsOf(page.records), skipped: page.skipped })
        cursor = page.nextCursor
      } while (cursor !== undefined && pages.length < 10)
      // A page covers the next `limit` stored rows: a damaged one leaves its page short and is
      // never read again. Every backend pages exactly so, so the counts agree page by page.
      expect(pages).toEqual([
        { ids: ["r-7"], skipped: 1 },
        { ids: ["r-5", "r-4"], skipped: 0 },
        { ids: ["r-2"], skipped: 1 },
        { ids: ["r-1"], skipped: 0 }
      ])
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
