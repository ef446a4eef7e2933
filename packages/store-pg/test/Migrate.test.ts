import { expect, it } from "@effect/vitest"
import { PromotionConformance } from "@engram/conformance"
import { IdGenerator, MemoryStore, MemoryStoreError, MemoryWrite, PromotionStore } from "@engram/core"
import { StoreMigration } from "@engram/migrate"
import { PgDatabase, PgEngram, PgPromotionStore } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describePg } from "./pgGate.js"
import { dropSchema, withSql } from "./utilities.js"

const RECORDS = 2_500
const BATCH = 400
const PROMOTED = 240

/** Fills a store with RECORDS records over many timestamps, with every lifecycle state. */
const populate = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  for (let start = 0; start < RECORDS - 100; start += 300) {
    const count = Math.min(300, RECORDS - 100 - start)
    yield* store.write(
      Array.from({ length: count }, (_, i) => {
        const n = start + i
        return {
          id: `m-${String(n).padStart(5, "0")}`,
          content: `memory ${n}: Zürich, Москва, 東京 — ${"🙂".repeat(n % 3)}`,
          kind: (["fact", "note", "profile", "decision"] as const)[n % 4],
          tags: n % 5 === 0 ? ["tagged", `n${n % 7}`] : [],
          sourceType: (["operator", "extracted", "ingest"] as const)[n % 3],
          scope: n % 6 === 0 ? "project:alpha" : "global",
          ...(n % 9 === 0 ? { label: `label ${n}` } : {}),
          ...(n % 11 === 0 ? { expiresInDays: 30 } : {}),
          ...(n % 13 === 0 ? { epoch: "2025-q1" } : {})
        }
      })
    )
    yield* TestClock.adjust("90 seconds")
  }
  // 100 successors: supersession chains, plus reviews and expiries scattered through the store.
  for (let i = 0; i < 100; i++) {
    const oldId = i < 50 ? `m-${String(i * 17).padStart(5, "0")}` : `s-${String(i - 50).padStart(3, "0")}`
    yield* store.supersede(oldId, { id: `s-${String(i).padStart(3, "0")}`, content: `revised ${i}`, kind: "fact" })
  }
  for (let i = 0; i < 200; i++) {
    yield* store.setReviewState(`m-${String(i * 7 + 3).padStart(5, "0")}`, i % 2 === 0 ? "confirmed" : "rejected")
  }
  for (let i = 0; i < 50; i++) yield* store.expire(`m-${String(i * 31 + 5).padStart(5, "0")}`)
  // Promotion rows for every tenth record: what the routing decided about them.
  const promotions = yield* PromotionStore.PromotionStore
  yield* promotions.commit(
    Array.from({ length: PROMOTED }, (_, i) => {
      const recordId = `m-${String(i * 10).padStart(5, "0")}`
      return PromotionConformance.promotionRow(recordId, i % 5 === 0 ? null : "about_user", `k${i}`)
    })
  )
})

const everything = Effect.flatMap(MemoryStore.MemoryStore, (store) =>
  Effect.map(
    store.list({ includeSuperseded: true, limit: 10_000 }),
    (page) => page.records.map(MemoryWrite.encodeStoredRecord)
  ))

/** The target store, except that `restore` fails once `batches` batches went through. */
const failingAfter = (batches: number) =>
  Layer.effect(
    MemoryStore.MemoryStore,
    Effect.map(MemoryStore.MemoryStore, (store): MemoryStore.Service => {
      let restores = 0
      return {
        ...store,
        restore: (records) =>
          ++restores > batches
            ? Effect.fail(
              new MemoryStoreError.MemoryStoreFailure({ operation: "restore", cause: new Error("connection reset") })
            )
            : store.restore(records)
      }
    })
  )

describePg("migrating a SQLite store to PostgreSQL", (url) => {
  it.effect(
    "copies everything, survives an interruption, resumes and verifies by count and checksum",
    () =>
      Effect.gen(function*() {
        const dir = mkdtempSync(join(tmpdir(), "engram-migrate-"))
        const schema = PgDatabase.temporarySchemaName("engram_migrate")
        yield* Effect.addFinalizer(() =>
          Effect.zipRight(Effect.sync(() => rmSync(dir, { recursive: true, force: true })), dropSchema(url, schema))
        )
        const sqlite = SqlitePromotionStore.layer.pipe(
          Layer.provideMerge(
            SqliteEngram.layerStores().pipe(
              Layer.provideMerge(SqliteDatabase.layer({ filename: join(dir, "engram.db") }))
            )
          )
        )
        const client = PgDatabase.layer({ url, schema, maxConnections: 4 })
        const pg = Layer.mergeAll(PgEngram.layerStores(), PgPromotionStore.layer).pipe(Layer.provide(client))
        // The same stores, except that the memory store's connection drops after two batches.
        const flaky = Layer.merge(failingAfter(2), PgPromotionStore.layer).pipe(
          Layer.provide(PgEngram.layerStores().pipe(Layer.provideMerge(client)))
        )
        yield* Effect.provide(populate, sqlite)
        const source = yield* Effect.provide(everything, sqlite)
        expect(source).toHaveLength(RECORDS)

        // 1. The connection drops after two batches: the copy fails, two whole batches are in.
        const dropped = yield* Effect.either(StoreMigration.migrateStore({ from: sqlite, to: flaky, batchSize: BATCH }))
        expect(Either.isLeft(dropped) && dropped.left._tag).toBe("MemoryStoreFailure")
        expect(yield* Effect.provide(everything, pg)).toHaveLength(2 * BATCH)

        // 2. The operator cancels during the fifth batch's progress report: the copy is interrupted.
        const cancelled = yield* Effect.exit(
          StoreMigration.migrateStore({
            from: sqlite,
            to: pg,
            batchSize: BATCH,
            onProgress: (p) => (p.phase === "copying" && p.batches === 5 ? Effect.interrupt : Effect.void)
          })
        )
        expect(Exit.isInterrupted(cancelled)).toBe(true)
        expect(yield* Effect.provide(everything, pg)).toHaveLength(5 * BATCH)

        // 3. Resumed: only the rest is copied, and both sides digest the same.
        const progress: Array<StoreMigration.MigrationProgress> = []
        const report = yield* StoreMigration.migrateStore({
          from: sqlite,
          to: pg,
          batchSize: BATCH,
          onProgress: (p) => Effect.sync(() => void progress.push(p))
        })
        expect(report.alreadyPresent).toBe(5 * BATCH)
        expect(report.copied).toBe(RECORDS - 5 * BATCH)
        expect(report.source).toEqual({
          count: RECORDS,
          unreadable: 0,
          promotions: PROMOTED,
          checksum: report.target.checksum
        })
        // Rows of the records copied before the interruptions came with them; the rest came now.
        const promotedIds = new Set(Array.from({ length: PROMOTED }, (_, i) => `m-${String(i * 10).padStart(5, "0")}`))
        const copiedNow = source.slice(5 * BATCH).filter((record) => promotedIds.has(record.id)).length
        expect(copiedNow).toBeGreaterThan(0)
        expect(report.promotionsCopied).toBe(copiedNow)
        expect(progress[0]).toMatchObject({ phase: "scanned", total: RECORDS, read: 0 })
        expect(progress.at(-1)).toMatchObject({ phase: "verifying", read: RECORDS, copied: RECORDS - 5 * BATCH })

        // The PostgreSQL store now holds exactly what the SQLite file held, lifecycle included.
        expect(yield* Effect.provide(everything, pg)).toEqual(source)
        const sample = yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (s) => s.search("revised", { includeSuperseded: true, limit: 500 })),
          pg
        )
        expect(sample.hits).toHaveLength(100)
        const rows = yield* withSql(url, (sql) =>
          sql<{ total: string; superseded: string }>`SELECT count(*) AS total,
          count(*) FILTER (WHERE superseded_by IS NOT NULL) AS superseded FROM engram_memories`, schema)
        expect(rows.map((r) => [Number(r.total), Number(r.superseded)])).toEqual([[RECORDS, 100]])
        const promoted = yield* withSql(
          url,
          (sql) => sql<{ n: string }>`SELECT count(*) AS n FROM engram_promotions`,
          schema
        )
        expect(Number(promoted[0]!.n)).toBe(PROMOTED)
      }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())),
    120_000
  )
})
