import { expect, it } from "@effect/vitest"
import {
  IdGenerator,
  MemoryLimits,
  MemoryStore,
  MemoryStoreError,
  MemoryWrite,
  PromotionStore,
  Routing
} from "@engram/core"
import { StoreMigration } from "@engram/migrate"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"

const buildStore = Effect.map(Layer.build(MemoryStore.layerMemory), (ctx) => Context.get(ctx, MemoryStore.MemoryStore))

/** A source with 23 records over several timestamps, and every lifecycle state. */
const populate = (store: MemoryStore.Service) =>
  Effect.gen(function*() {
    for (let t = 0; t < 5; t++) {
      yield* store.write(
        Array.from({ length: 4 }, (_, i) => ({
          id: `r-${t}-${i}`,
          content: `record ${t}/${i} — Ünïcode ${"★".repeat(i)}`,
          kind: "fact" as const,
          tags: [`t${t}`],
          ...(i === 3 ? { expiresInDays: 2 } : {})
        }))
      )
      yield* TestClock.adjust("1 minute")
    }
    yield* store.setReviewState("r-0-0", "confirmed")
    yield* store.setReviewState("r-1-1", "rejected")
    yield* store.supersede("r-2-2", { id: "r-2-2-v2", content: "replaced", kind: "decision" })
    yield* store.supersede("r-2-2-v2", { id: "r-2-2-v3", content: "replaced again", kind: "decision" })
    yield* store.expire("r-3-0")
    yield* store.write([{ id: "r-last", content: "the last", kind: "note", label: "last", epoch: "e1" }])
  })

const everything = (store: MemoryStore.Service) =>
  Effect.map(
    store.list({ includeSuperseded: true, limit: 10_000 }),
    (page) => page.records.map(MemoryWrite.encodeStoredRecord)
  )

/** The target, except that `restore` fails once `failAfter` batches have been restored. */
const failingAfter = (store: MemoryStore.Service, failAfter: number): MemoryStore.Service => {
  let restores = 0
  return {
    ...store,
    restore: (records) =>
      ++restores > failAfter
        ? Effect.fail(
          new MemoryStoreError.MemoryStoreFailure({ operation: "restore", cause: new Error("connection lost") })
        )
        : store.restore(records)
  }
}

it.effect("copies every record with its lifecycle, reports progress, and verifies", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    const events: Array<StoreMigration.MigrationProgress> = []
    const report = yield* StoreMigration.copyStore(from, to, {
      batchSize: 5,
      onProgress: (p) => Effect.sync(() => void events.push(p))
    })
    expect(yield* everything(to)).toEqual(yield* everything(from))
    expect(report.copied).toBe(23)
    expect(report.alreadyPresent).toBe(0)
    expect(report.batches).toBe(5)
    expect(report.source).toEqual(report.target)
    expect(report.source.count).toBe(23)
    expect(events.map((e) => e.phase)).toEqual([
      "scanned",
      "copying",
      "copying",
      "copying",
      "copying",
      "copying",
      "verifying"
    ])
    expect(events.map((e) => e.read)).toEqual([0, 5, 10, 15, 20, 23, 23])
    expect(events.every((e) => e.total === 23)).toBe(true)
    // Lifecycle came across: the chain, the review states and the expiry.
    const copied = yield* to.get(["r-2-2", "r-2-2-v2", "r-1-1", "r-3-0"])
    const states = copied.records.map((r) => [r.supersededBy, r.supersedes, r.reviewState, r.expiresAt !== undefined])
    expect(states).toEqual([
      ["r-2-2-v2", undefined, "pending", false],
      ["r-2-2-v3", "r-2-2", "pending", false],
      [undefined, undefined, "rejected", false],
      [undefined, undefined, "pending", true]
    ])
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

it.effect("an interrupted copy resumes where it stopped and ends verified", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    const interrupted = yield* Effect.either(StoreMigration.copyStore(from, failingAfter(to, 2), { batchSize: 4 }))
    expect(Either.isLeft(interrupted) && interrupted.left._tag).toBe("MemoryStoreFailure")
    // Whole batches landed before the failure, nothing after it.
    expect((yield* everything(to)).length).toBe(8)

    const resumed = yield* StoreMigration.copyStore(from, to, { batchSize: 4 })
    expect(resumed.alreadyPresent).toBe(8)
    expect(resumed.copied).toBe(15)
    expect(yield* everything(to)).toEqual(yield* everything(from))

    // Running it once more copies nothing and still verifies.
    const again = yield* StoreMigration.copyStore(from, to, { batchSize: 7 })
    expect([again.copied, again.alreadyPresent]).toEqual([0, 23])
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

it.effect("fails verification when the target holds records the source does not", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    yield* to.write([{ id: "stranger", content: "already here", kind: "note" }])
    const result = yield* Effect.either(StoreMigration.copyStore(from, to))
    expect(Either.isLeft(result) && result.left._tag).toBe("StoreMigrationMismatch")
    if (Either.isLeft(result) && result.left._tag === "StoreMigrationMismatch") {
      expect([result.left.sourceCount, result.left.targetCount]).toEqual([23, 24])
      expect(result.left.message).toContain("24")
    }
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

it.effect("the digest ignores paging but sees any changed field", () =>
  Effect.gen(function*() {
    const a = yield* buildStore
    const b = yield* buildStore
    yield* populate(a)
    yield* StoreMigration.copyStore(a, b)
    const small = yield* StoreMigration.digest(a, { pageSize: 3 })
    const large = yield* StoreMigration.digest(b, { pageSize: 1_000 })
    expect(small).toEqual(large)
    expect(small.checksum).toMatch(/^[0-9a-f]{64}$/)
    yield* b.setReviewState("r-4-2", "confirmed")
    expect((yield* StoreMigration.digest(b)).checksum).not.toBe(small.checksum)
    const empty = yield* StoreMigration.digest(yield* buildStore)
    expect(empty.count).toBe(0)
    expect(empty.checksum).toMatch(/^[0-9a-f]{64}$/)
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

it.effect("migrateStore builds both layers and copies between them", () =>
  Effect.gen(function*() {
    const source = yield* buildStore
    yield* populate(source)
    const target = yield* buildStore
    const report = yield* StoreMigration.migrateStore({
      from: Layer.succeed(MemoryStore.MemoryStore, source),
      to: Layer.succeed(MemoryStore.MemoryStore, target),
      batchSize: 10
    })
    expect(report.copied).toBe(23)
    expect(yield* everything(target)).toEqual(yield* everything(source))
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

it.effect("a failing progress callback stops the copy", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    const result = yield* Effect.either(
      StoreMigration.copyStore(from, to, {
        batchSize: 5,
        onProgress: (p) => (p.batches === 2 ? Effect.fail("cancelled by the operator" as const) : Effect.void)
      })
    )
    expect(result).toEqual(Either.left("cancelled by the operator"))
    expect((yield* everything(to)).length).toBe(10)
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

const buildPromotions = Effect.map(
  Layer.build(PromotionStore.layerMemory),
  (ctx) => Context.get(ctx, PromotionStore.PromotionStore)
)

/** A placed promotion row for a record. */
const placed = (recordId: string, key: string, specKey = "user-background"): PromotionStore.PromotionRow => {
  const placement = Routing.background("about_user", key)
  return {
    recordId,
    scope: "global",
    placement,
    placementKey: Routing.placementKey(placement),
    keySource: "label",
    specKey,
    specVersion: "1",
    promotedAt: DateTime.unsafeMake(1_700_000_000_000),
    tier: "auto"
  }
}

it.effect("carries the promotion rows of the copied records, resumably, and verifies them", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    const fromRows = yield* buildPromotions
    const toRows = yield* buildPromotions
    yield* populate(from)
    yield* fromRows.commit([
      placed("r-0-0", "name"),
      placed("r-0-0", "name", "other-spec"),
      placed("r-2-2", "tz"),
      placed("r-4-3", "city")
    ])
    // Already in the target from an earlier, interrupted run: left alone, not duplicated.
    yield* to.restore((yield* from.get(["r-0-0"])).records)
    yield* toRows.commit([placed("r-0-0", "name")])

    const promotions = { from: fromRows, to: toRows }
    const report = yield* StoreMigration.copyStore(from, to, { batchSize: 4, promotions })
    expect(report.promotionsCopied).toBe(3)
    expect(report.source.promotions).toBe(4)
    expect(report.target).toEqual(report.source)
    const copied = yield* toRows.getByRecords(["r-0-0", "r-2-2", "r-4-3"])
    expect(copied.rows.map((r) => `${r.recordId}/${r.specKey}`)).toEqual([
      "r-0-0/other-spec",
      "r-0-0/user-background",
      "r-2-2/user-background",
      "r-4-3/user-background"
    ])

    // A target row the source does not have fails verification, naming the promotion counts.
    yield* toRows.commit([placed("r-1-1", "extra")])
    const mismatch = yield* Effect.either(StoreMigration.copyStore(from, to, { promotions }))
    expect(Either.isLeft(mismatch) && mismatch.left._tag).toBe("StoreMigrationMismatch")
    expect(Either.isLeft(mismatch) && mismatch.left.message).toContain("5 promotion rows")
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

it.effect("migrateStore carries promotion rows when both layers provide a PromotionStore", () =>
  Effect.gen(function*() {
    const source = yield* buildStore
    const sourceRows = yield* buildPromotions
    yield* populate(source)
    yield* sourceRows.commit([placed("r-3-1", "name")])
    const target = yield* buildStore
    const targetRows = yield* buildPromotions
    const layerOf = (store: MemoryStore.Service, rows: PromotionStore.Service) =>
      Layer.merge(Layer.succeed(MemoryStore.MemoryStore, store), Layer.succeed(PromotionStore.PromotionStore, rows))
    const report = yield* StoreMigration.migrateStore({
      from: layerOf(source, sourceRows),
      to: layerOf(target, targetRows)
    })
    expect([report.copied, report.promotionsCopied]).toEqual([23, 1])
    expect((yield* targetRows.getByRecords(["r-3-1"])).rows).toHaveLength(1)
  }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

/** A source holding two records over the default content limit (written under raised limits). */
const withOversized = (store: MemoryStore.Service) =>
  store.write([
    { id: "big-1", content: "x ".repeat(20_000), kind: "note" },
    { id: "big-2", content: "y ".repeat(20_000), kind: "note" }
  ]).pipe(Effect.provide(MemoryLimits.layer({ maxContentChars: 100_000 })))

it.scoped("a record the target refuses stops the copy by default, named with the reason; a rerun resumes", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    yield* withOversized(from)
    const stopped = yield* Effect.flip(StoreMigration.copyStore(from, to, { batchSize: 5 }))
    expect(stopped._tag).toBe("RecordNotCopied")
    if (stopped._tag !== "RecordNotCopied") return
    // The copy reads newest first, and a batch is stamped in input order: big-2 is met first.
    expect(stopped.id).toBe("big-2")
    expect(stopped.reason).toBe("content is 40000 characters, over the limit of 32000 (MemoryLimits.maxContentChars)")
    expect(stopped.message).toBe(`record "big-2" was not copied: ${stopped.reason}`)
    // Records listed before it in its batch were copied one by one; nothing after it was.
    expect((yield* to.get(["big-1", "big-2"])).records).toEqual([])
  }))

it.scoped("with onError skip the refused records are left out, listed, and verification covers the rest", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    yield* withOversized(from)
    const report = yield* StoreMigration.copyStore(from, to, { batchSize: 5, onError: "skip" })
    expect(new Set(report.skipped.map((r) => r.id))).toEqual(new Set(["big-1", "big-2"]))
    expect(report.skipped[0]!.reason).toMatch(/over the limit of 32000 \(MemoryLimits.maxContentChars\)/)
    expect(report.source.count).toBe(report.target.count + 2)
    expect(report.expected.count).toBe(report.target.count)
    expect(report.expected.checksum).toBe(report.target.checksum)
    expect(report.copied).toBe(report.target.count)
    expect((yield* everything(to)).some((r) => r.id.startsWith("big-"))).toBe(false)
    // Run again: nothing new is copied, the same records are skipped again, still verified.
    const again = yield* StoreMigration.copyStore(from, to, { batchSize: 5, onError: "skip" })
    expect(again.copied).toBe(0)
    expect(new Set(again.skipped.map((r) => r.id))).toEqual(new Set(["big-1", "big-2"]))
  }))

it.scoped("a failure of the target store itself stops the copy even with onError skip", () =>
  Effect.gen(function*() {
    const from = yield* buildStore
    const to = yield* buildStore
    yield* populate(from)
    const failure = yield* Effect.flip(
      StoreMigration.copyStore(from, failingAfter(to, 1), { batchSize: 5, onError: "skip" })
    )
    expect(failure._tag).toBe("MemoryStoreFailure")
    expect(StoreMigration.isRecordRefusal(failure)).toBe(false)
  }))

it("isRecordRefusal: invalid input, a taken id and row-level backend codes are refusals; the rest are not", () => {
  const failure = (cause: unknown) => new MemoryStoreError.MemoryStoreFailure({ operation: "restore", cause })
  expect(StoreMigration.isRecordRefusal(new MemoryStoreError.InvalidMemoryInput({ index: 0, problem: "x" }))).toBe(true)
  expect(StoreMigration.isRecordRefusal(new MemoryStoreError.DuplicateMemoryId({ id: "a" }))).toBe(true)
  expect(StoreMigration.isRecordRefusal(failure({ sqlState: "54000" }))).toBe(true)
  expect(StoreMigration.isRecordRefusal(failure({ sqlState: "23514" }))).toBe(true)
  expect(StoreMigration.isRecordRefusal(failure({ sqlState: "08006" }))).toBe(false)
  expect(StoreMigration.isRecordRefusal(failure({ message: "x", cause: { code: "SQLITE_CONSTRAINT_CHECK" } }))).toBe(
    true
  )
  expect(StoreMigration.isRecordRefusal(failure({ code: "SQLITE_BUSY" }))).toBe(false)
  expect(StoreMigration.isRecordRefusal(failure(new Error("connection lost")))).toBe(false)
})
