/**
 * Copying a whole memory store from one backend to another — SQLite to PostgreSQL, say — with
 * every record's lifecycle intact, resumable after an interruption and verified at the end.
 *
 * The copy is backend-neutral: it reads the source through `list` (superseded records included)
 * and writes the target through `restore`, batch by batch. A record whose id the target already
 * holds is left alone, so running the copy again after a failure picks up where it stopped. At
 * the end both sides are digested — record count and a SHA-256 over every record's encoded form
 * in listing order — and the copy fails with {@link StoreMigrationMismatch} unless they agree.
 *
 * Given promotion stores too, each batch also carries the promotion rows of its records (rows
 * the target already holds are left alone), and the digests cover them.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { MemoryId, MemoryRecord } from "./MemoryRecord.js"
import { MAX_LIMIT } from "./MemoryQuery.js"
import { MemoryStore, type MemoryStoreService } from "./MemoryStore.js"
import type {
  DuplicateMemoryId,
  InvalidCursor,
  InvalidMemoryInput,
  InvalidMemoryQuery,
  MemoryStoreFailure
} from "./MemoryStoreError.js"
import { encodeStoredRecord } from "./MemoryWrite.js"
import {
  compareRows,
  type DuplicatePromotion,
  type InvalidPromotionRow,
  PromotionRow,
  PromotionStore,
  type PromotionStoreFailure,
  type PromotionStoreService,
  rowIdentity
} from "./PromotionStore.js"

/**
 * Where a copy stands, reported after the scan, after every batch and before verification.
 *
 * - `total`: records the source holds (known after the scan).
 * - `read`: source records handled so far; `copied` of them were written in this run and
 *   `alreadyPresent` were found in the target (a resumed copy).
 * - `unreadable`: source rows that failed to decode; they cannot be copied.
 * - `promotionsCopied`: promotion rows written in this run (0 without promotion stores).
 *
 * @since 0.1.0
 * @category models
 */
export interface MigrationProgress {
  readonly phase: "scanned" | "copying" | "verifying"
  readonly total: number
  readonly read: number
  readonly copied: number
  readonly alreadyPresent: number
  readonly unreadable: number
  readonly batches: number
  readonly promotionsCopied: number
}

/**
 * A store's fingerprint: how many readable records it holds, how many rows it could not read,
 * and a hex SHA-256 over the readable records' encoded forms in listing order. With a promotion
 * store, `promotions` counts the promotion rows of those records, and the checksum covers them
 * (each record's rows follow it).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreDigest {
  readonly count: number
  readonly unreadable: number
  readonly promotions: number
  readonly checksum: string
}

/**
 * What a finished copy did, with both sides' digests (equal, or the copy would have failed).
 *
 * @since 0.1.0
 * @category models
 */
export interface MigrationReport {
  readonly copied: number
  readonly alreadyPresent: number
  readonly promotionsCopied: number
  readonly batches: number
  readonly source: StoreDigest
  readonly target: StoreDigest
}

/**
 * After copying, the target's digest differs from the source's: the target held other records,
 * or the source changed during the copy. Nothing was deleted; run the copy again (it resumes) or
 * inspect the target.
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreMigrationMismatch extends Schema.TaggedError<StoreMigrationMismatch>()("StoreMigrationMismatch", {
  sourceCount: Schema.Number,
  targetCount: Schema.Number,
  sourcePromotions: Schema.Number,
  targetPromotions: Schema.Number,
  sourceChecksum: Schema.String,
  targetChecksum: Schema.String
}) {
  override get message() {
    return this.sourceCount !== this.targetCount
      ? `the target holds ${this.targetCount} records but the source ${this.sourceCount}; ` +
        `the target had other records, or the source changed during the copy`
      : this.sourcePromotions !== this.targetPromotions
      ? `the target holds ${this.targetPromotions} promotion rows for the copied records but the source ` +
        `${this.sourcePromotions}; the target had other rows, or the source changed during the copy`
      : `source and target hold ${this.sourceCount} records each but their checksums differ ` +
        `(${this.sourceChecksum.slice(0, 12)}… vs ${this.targetChecksum.slice(0, 12)}…); ` +
        `a record differs — the source may have changed during the copy`
  }
}

/**
 * The promotion stores that travel with the memory stores.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromotionStores {
  readonly from: PromotionStoreService
  readonly to: PromotionStoreService
}

/**
 * Copy options: `batchSize` records per read and per `restore` (default 500, at most 10,000),
 * `onProgress`, called with a {@link MigrationProgress} as the copy advances (a failure there
 * stops the copy; what was copied stays, and a rerun resumes), and `promotions`, to carry the
 * promotion rows of the copied records as well.
 *
 * @since 0.1.0
 * @category models
 */
export interface CopyOptions<E = never, R = never> {
  readonly batchSize?: number | undefined
  readonly onProgress?: ((progress: MigrationProgress) => Effect.Effect<void, E, R>) | undefined
  readonly promotions?: PromotionStores | undefined
}

/**
 * The errors a copy can fail with (besides the progress callback's own).
 *
 * @since 0.1.0
 * @category errors
 */
export type CopyError =
  | InvalidCursor
  | InvalidMemoryQuery
  | MemoryStoreFailure
  | DuplicateMemoryId
  | InvalidMemoryInput
  | PromotionStoreFailure
  | DuplicatePromotion
  | InvalidPromotionRow
  | StoreMigrationMismatch

const DEFAULT_BATCH = 500
// Records hashed per digest step: the checksum chains SHA-256 over groups of this many
// encoded records, so it never depends on how the listing was paged.
const DIGEST_GROUP = 1_000

const hex = (buffer: ArrayBuffer): string =>
  Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("")

const encodeRow = Schema.encodeSync(PromotionRow)

/** The promotion rows of `ids`, grouped by record id, each group in the core's row order. */
const promotionsOf = (
  store: PromotionStoreService,
  ids: ReadonlyArray<MemoryId>
): Effect.Effect<ReadonlyMap<string, ReadonlyArray<PromotionRow>>, PromotionStoreFailure> =>
  Effect.map(store.getByRecords(ids), (read) => {
    const byRecord = new Map<string, Array<PromotionRow>>()
    for (const row of [...read.rows].sort(compareRows)) {
      const rows = byRecord.get(row.recordId)
      if (rows === undefined) byRecord.set(row.recordId, [row])
      else rows.push(row)
    }
    return byRecord
  })

const sha256 = (text: string): Effect.Effect<string> =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(
    Effect.map(hex)
  )

/**
 * Reads a whole store in listing order, superseded records included, one page at a time.
 *
 * @since 0.1.0
 * @category reading
 */
export const forEachPage = <E, R>(
  store: MemoryStoreService,
  pageSize: number,
  f: (records: ReadonlyArray<MemoryRecord>, skipped: number) => Effect.Effect<void, E, R>
): Effect.Effect<void, E | InvalidCursor | InvalidMemoryQuery | MemoryStoreFailure, R> =>
  Effect.gen(function*() {
    let cursor: string | undefined
    do {
      const page = yield* store.list({
        includeSuperseded: true,
        limit: pageSize,
        ...(cursor !== undefined ? { cursor } : {})
      })
      yield* f(page.records, page.skipped)
      cursor = page.nextCursor
    } while (cursor !== undefined)
  })

/**
 * A store's {@link StoreDigest}. Two stores holding the same records digest the same, whichever
 * backend holds them.
 *
 * @since 0.1.0
 * @category verifying
 */
export const digest = (
  store: MemoryStoreService,
  options?: { readonly pageSize?: number | undefined; readonly promotions?: PromotionStoreService | undefined }
): Effect.Effect<StoreDigest, InvalidCursor | InvalidMemoryQuery | MemoryStoreFailure | PromotionStoreFailure> =>
  Effect.gen(function*() {
    let chain = ""
    let group: Array<string> = []
    let count = 0
    let unreadable = 0
    let promotions = 0
    const flush = Effect.suspend(() => {
      const text = `${chain}\n${group.join("\n")}`
      group = []
      return Effect.map(sha256(text), (next) => {
        chain = next
      })
    })
    const promotionStore = options?.promotions
    yield* forEachPage(store, options?.pageSize ?? DEFAULT_BATCH, (records, skipped) =>
      Effect.gen(function*() {
        unreadable += skipped
        const rows = promotionStore === undefined
          ? new Map<string, ReadonlyArray<PromotionRow>>()
          : yield* promotionsOf(promotionStore, records.map((r) => r.id))
        for (const record of records) {
          count++
          group.push(JSON.stringify(encodeStoredRecord(record)))
          for (const row of rows.get(record.id) ?? []) {
            promotions++
            group.push(`promotion ${JSON.stringify(encodeRow(row))}`)
          }
          if (group.length >= DIGEST_GROUP) yield* flush
        }
      }))
    if (group.length > 0 || chain === "") yield* flush
    return { count, unreadable, promotions, checksum: chain }
  })

/**
 * Copies every record of `from` into `to` (see the module description), then verifies.
 *
 * @since 0.1.0
 * @category copying
 */
export const copyStore = <E = never, R = never>(
  from: MemoryStoreService,
  to: MemoryStoreService,
  options: CopyOptions<E, R> = {}
): Effect.Effect<MigrationReport, CopyError | E, R> =>
  Effect.gen(function*() {
    const batchSize = Math.max(1, Math.min(MAX_LIMIT, Math.floor(options.batchSize ?? DEFAULT_BATCH)))
    const report = options.onProgress ?? (() => Effect.void)
    const promotions = options.promotions
    // The source digest comes first: it gives the progress bar its total, and verification
    // compares the target with the source as it was when the copy began.
    const source = yield* digest(from, { pageSize: batchSize, promotions: promotions?.from })
    let read = 0
    let copied = 0
    let alreadyPresent = 0
    let unreadable = 0
    let batches = 0
    let promotionsCopied = 0
    const progress = (phase: MigrationProgress["phase"]): MigrationProgress => ({
      phase,
      total: source.count,
      read,
      copied,
      alreadyPresent,
      unreadable,
      batches,
      promotionsCopied
    })
    yield* report(progress("scanned"))
    yield* forEachPage(from, batchSize, (records, skipped) =>
      Effect.gen(function*() {
        unreadable += skipped
        const present = yield* to.get(records.map((r) => r.id))
        const have = new Set(present.records.map((r) => r.id))
        const missing = records.filter((r) => !have.has(r.id))
        if (missing.length > 0) yield* to.restore(missing)
        if (promotions !== undefined) {
          // After the records: a promotion row never arrives before the record it is about.
          const ids = records.map((r) => r.id)
          const wanted = [...(yield* promotionsOf(promotions.from, ids)).values()].flat()
          const stored = new Set((yield* promotions.to.getByRecords(ids)).rows.map(rowIdentity))
          const rows = wanted.filter((row) => !stored.has(rowIdentity(row)))
          if (rows.length > 0) yield* promotions.to.commit(rows)
          promotionsCopied += rows.length
        }
        read += records.length
        copied += missing.length
        alreadyPresent += records.length - missing.length
        batches++
        yield* report(progress("copying"))
      }))
    yield* report(progress("verifying"))
    const target = yield* digest(to, { pageSize: batchSize, promotions: promotions?.to })
    if (target.count !== source.count || target.checksum !== source.checksum) {
      return yield* new StoreMigrationMismatch({
        sourceCount: source.count,
        targetCount: target.count,
        sourcePromotions: source.promotions,
        targetPromotions: target.promotions,
        sourceChecksum: source.checksum,
        targetChecksum: target.checksum
      })
    }
    return { copied, alreadyPresent, promotionsCopied, batches, source, target }
  })

/**
 * {@link copyStore} between two store layers: builds both (e.g. `SqliteMemoryStore.layer(…)` and
 * `PgMemoryStore.layer(…)`), copies, verifies, and releases them. A layer may provide a
 * `PromotionStore` as well (both must, or neither): then the promotion rows travel too.
 *
 * @since 0.1.0
 * @category copying
 */
export const migrateStore = <E1, R1, E2, R2, E = never, R = never>(
  options: {
    readonly from: Layer.Layer<MemoryStore, E1, R1> | Layer.Layer<MemoryStore | PromotionStore, E1, R1>
    readonly to: Layer.Layer<MemoryStore, E2, R2> | Layer.Layer<MemoryStore | PromotionStore, E2, R2>
  } & Omit<CopyOptions<E, R>, "promotions">
): Effect.Effect<MigrationReport, CopyError | E | E1 | E2, R | R1 | R2> =>
  Effect.scoped(
    Effect.gen(function*() {
      const source: Context.Context<MemoryStore> = yield* Layer.build(options.from)
      const target: Context.Context<MemoryStore> = yield* Layer.build(options.to)
      const fromPromotions = Context.getOption(source, PromotionStore)
      const toPromotions = Context.getOption(target, PromotionStore)
      const promotions = fromPromotions._tag === "Some" && toPromotions._tag === "Some"
        ? { from: fromPromotions.value, to: toPromotions.value }
        : undefined
      return yield* copyStore(Context.get(source, MemoryStore), Context.get(target, MemoryStore), {
        ...options,
        promotions
      })
    })
  )
