/**
 * The projection's recall search prunes at `recallPruneShare` (3% by default), harder than a plain
 * search (5%): a token between the two shares still matches, but ranks after the selective ones,
 * newest first. Checked through `project()` on SQLite.
 */
import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, MemoryStore, PromotionStore, TelemetryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

// 7,302 records; "lake" is in 301 of them (4.1%: between the two shares, and over the planner's
// 256-record floor). The oldest lake record repeats it, so BM25 ranks it first among them.
const records = [
  { id: "lake-oldest", content: "lake lake lake lake", kind: "note" as const },
  ...Array.from(
    { length: 7_000 },
    (_, i) => ({ id: `filler-${i}`, content: `filler record ${i} about nothing`, kind: "note" as const })
  ),
  ...Array.from({ length: 300 }, (_, i) => ({
    id: `lake-${String(i).padStart(3, "0")}`,
    content: `a long day out at the lake with friends and family number ${i}`,
    kind: "note" as const
  })),
  { id: "zebra", content: "a zebra", kind: "note" as const }
]

const recalled = (settings: Partial<ContextProjection.ProjectionSettings>) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < records.length; i += 1_000) yield* store.write(records.slice(i, i + 1_000))
    const projection = yield* ContextProjection.make({ ...ContextProjection.defaultSettings, ...settings })
    const projected = yield* projection.project({
      sessionId: "s-1",
      turn: 0,
      query: "zebra lake",
      scopes: ["global"],
      mode: "native"
    })
    const searched = yield* store.search("zebra lake", { limit: 2 })
    return {
      projected: projected.section("recalled_memory")!.memoryIds,
      searched: searched.hits.map((h) => h.record.id)
    }
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))),
        PromotionStore.layerMemory,
        TelemetryStore.layerMemory,
        IdGenerator.sequential("rp")
      )
    )
  )

describe("the recall search's pruning share", () => {
  it.effect("by default a token 4% of the records hold ranks after the rare one in recall, newest first", () =>
    Effect.gen(function*() {
      const { projected, searched } = yield* recalled({ recallLimit: 2 })
      // A plain search ranks "lake" (under 5%): the record repeating it comes second.
      expect(searched).toEqual(["zebra", "lake-oldest"])
      // Recall pruned it (over 3%): it still matches, newest first after the ranked hit.
      expect(projected).toEqual(["zebra", "lake-299"])
    }))

  it.effect("recallPruneShare sets it", () =>
    Effect.gen(function*() {
      const { projected } = yield* recalled({ recallLimit: 2, recallPruneShare: 0.05 })
      expect(projected).toEqual(["zebra", "lake-oldest"])
    }))

  it("settings refuse a share outside (0, 1], naming the field", () => {
    for (const recallPruneShare of [0, -0.1, 1.5]) {
      const decoded = ContextProjection.decodeSettings({ recallPruneShare })
      expect(Either.isLeft(decoded)).toBe(true)
      if (Either.isLeft(decoded)) expect(decoded.left.message).toContain("recallPruneShare")
    }
    expect(Either.isRight(ContextProjection.decodeSettings({ recallPruneShare: 1 }))).toBe(true)
  })
})
