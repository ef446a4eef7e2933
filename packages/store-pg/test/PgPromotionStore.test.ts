import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { PromotionConformance, runPromotionStoreConformance } from "@engram/conformance"
import { PromotionStore } from "@engram/core"
import { PgDatabase, PgPromotionStore } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import { describePg } from "./pgGate.js"

const { promotionRow } = PromotionConformance

describePg("PostgreSQL promotion store", (url) => {
  // Every build is an empty schema of its own, dropped on release.
  const fresh = PgPromotionStore.layer.pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_promo", maxConnections: 2 }))
  )

  runPromotionStoreConformance("postgres", fresh)

  it.effect("a corrupt row is skipped, counted and logged; the others are read", () =>
    Effect.gen(function*() {
      const store = yield* PromotionStore.PromotionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.commit([
        promotionRow("m-1", "about_user", "name"),
        promotionRow("m-2", "about_user", "tz"),
        promotionRow("m-3", null)
      ])
      yield* sql`UPDATE engram_promotions SET placement = '{"not":"a placement"}' WHERE record_id = 'm-2'`
      const read = yield* store.listByScope("global")
      expect(read.rows.map((r) => r.recordId)).toEqual(["m-1", "m-3"])
      expect(read.skipped).toBe(1)
      const got = yield* store.getByRecords(["m-2", "m-3"])
      expect([got.rows.map((r) => r.recordId), got.skipped]).toEqual([["m-3"], 1])
    }).pipe(Effect.provide(fresh)))

  it.effect("concurrent commits of the same record and spec: one stores, the others get DuplicatePromotion", () =>
    Effect.gen(function*() {
      const store = yield* PromotionStore.PromotionStore
      for (let round = 0; round < 10; round++) {
        const results = yield* Effect.forEach(
          Array.from({ length: 8 }, (_, i) => i),
          (i) => Effect.either(store.commit([promotionRow(`r-${round}`, "about_user", `key-${i}`)])),
          { concurrency: "unbounded" }
        )
        expect(results.filter(Either.isRight)).toHaveLength(1)
        expect(results.flatMap((r) => (Either.isLeft(r) ? [r.left._tag] : []))).toEqual(
          Array(7).fill("DuplicatePromotion")
        )
        expect((yield* store.getByRecords([`r-${round}`])).rows).toHaveLength(1)
      }
    }).pipe(Effect.provide(
      PgPromotionStore.layer.pipe(
        Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_promo", maxConnections: 8 }))
      )
    )))

  it.effect("a batch with one stored duplicate stores none of its other rows", () =>
    Effect.gen(function*() {
      const store = yield* PromotionStore.PromotionStore
      yield* store.commit([promotionRow("m-2", "about_user", "name")])
      const result = yield* Effect.either(
        store.commit([promotionRow("m-1", "about_user", "a"), promotionRow("m-2", "about_user", "b")])
      )
      expect(Either.isLeft(result) && result.left._tag).toBe("DuplicatePromotion")
      expect((yield* store.getByRecords(["m-1"])).rows).toEqual([])
    }).pipe(Effect.provide(fresh)))

  it.effect("text PostgreSQL cannot store is refused as an invalid row", () =>
    Effect.gen(function*() {
      const store = yield* PromotionStore.PromotionStore
      const result = yield* Effect.either(
        store.commit([promotionRow("m-1", null), promotionRow("m-2", null, "name", { specVersion: "v\u00001" })])
      )
      expect(Either.isLeft(result) && result.left._tag).toBe("InvalidPromotionRow")
      expect(Either.isLeft(result) && result.left.message).toContain("#1")
      expect((yield* store.listByScope("global")).rows).toEqual([])
    }).pipe(Effect.provide(fresh)))

  it.effect("the non-migrating layer refuses a schema the promotion table is missing from", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.provide(
          PromotionStore.PromotionStore,
          PgPromotionStore.layerWithoutMigrations.pipe(
            Layer.provide(PgDatabase.layerTemporarySchema({ url, maxConnections: 1 }))
          )
        )
      )
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("engram_promotion_migrations")
    }))
}, { concurrent: true })
