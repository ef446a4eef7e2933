import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { runPromotionStoreConformance } from "@engram/conformance"
import { PromotionConformance } from "@engram/conformance"
import { PromotionStore, Routing } from "@engram/core"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

runPromotionStoreConformance(
  "sqlite",
  SqlitePromotionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
)

const row = PromotionConformance.promotionRow
const key = Routing.placementKey(Routing.background("about_user", "name"))

describe("SqlitePromotionStore", () => {
  it.effect("skips, counts and reports a stored row that no longer decodes, and reads the rest", () =>
    Effect.gen(function*() {
      const store = yield* PromotionStore.PromotionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.commit([row("m-1", "about_user", "name"), row("m-2", "about_user", "name"), row("m-3", null)])
      yield* sql`UPDATE engram_promotions SET tier = 'bogus' WHERE record_id = 'm-2'`
      yield* sql`UPDATE engram_promotions SET placement = '{not json' WHERE record_id = 'm-3'`
      const found = yield* store.lookup("global", key)
      expect(found.rows.map((r) => r.recordId)).toEqual(["m-1"])
      expect(found.skipped).toBe(1)
      const listed = yield* store.listByScope("global")
      expect(listed.rows.map((r) => r.recordId)).toEqual(["m-1"])
      expect(listed.skipped).toBe(2)
      expect((yield* store.getByRecords(["m-2", "m-1"])).skipped).toBe(1)
    }).pipe(
      Effect.provide(
        SqlitePromotionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
      )
    ))

  it.effect("shares one database with the memory store, each with its own migrations table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tables = yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
      const names = tables.map((t) => t.name)
      expect(names).toContain("engram_promotions")
      expect(names).toContain("engram_promotion_migrations")
      expect(names).toContain("engram_memory_migrations")
      const migrated = yield* sql<{ name: string }>`SELECT name FROM engram_promotion_migrations`
      expect(migrated.map((m) => m.name)).toEqual(["promotions"])
      const plan = yield* sql<{ detail: string }>`EXPLAIN QUERY PLAN
        SELECT * FROM engram_promotions WHERE scope = 'global' AND placement_key = ${key}`
      expect(plan.map((p) => p.detail).join(" ")).toMatch(
        /USING (COVERING )?INDEX engram_promotions_address \(scope=\? AND placement_key=\?\)/
      )
    }).pipe(
      Effect.provide(
        SqlitePromotionStore.layer.pipe(
          Layer.provideMerge(
            SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
          )
        )
      )
    ))

  it.effect("keeps committed rows across reopening the file, and still refuses a second commit", () => {
    const dir = mkdtempSync(Path.join(tmpdir(), "engram-promotion-"))
    const filename = Path.join(dir, "engram.db")
    const open = SqlitePromotionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename })))
    return Effect.gen(function*() {
      yield* Effect.provide(
        Effect.flatMap(PromotionStore.PromotionStore, (s) => s.commit([row("m-1", "about_user")])),
        open
      )
      const again = yield* Effect.provide(
        Effect.flatMap(
          PromotionStore.PromotionStore,
          (s) => Effect.zip(s.lookup("global", key), Effect.either(s.commit([row("m-1", null)])))
        ),
        open
      )
      expect(again[0].rows.map((r) => r.recordId)).toEqual(["m-1"])
      expect(again[1]._tag).toBe("Left")
    }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  })
})
