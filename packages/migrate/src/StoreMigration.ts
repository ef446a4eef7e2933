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
 * A record the target refuses (an input it cannot hold, a limit, a constraint — see
 * {@link isRecordRefusal}) is named: the copy stops with {@link RecordNotCopied} (`onError:
 * "stop"`, the default; what was copied before it stays and a rerun resumes), or leaves it out,
 * lists it in the report and goes on (`onError: "skip"`); verification then compares the target
 * with the source minus the skipped records. A failure of the store itself (a lost connection, a
 * locked file) always stops the copy.
 *
 * @since 0.1.0
 */
import * as ErrorClass from "@engram/core/ErrorClass"
import { MAX_LIMIT } from "@engram/core/MemoryQuery"
import type { MemoryId, MemoryRecord } from "@engram/core/MemoryRecord"
import { MemoryStore, type Service as MemoryStoreService } from "@engram/core/MemoryStore"
import type {
  DuplicateMemoryId,
  InvalidCursor,
  InvalidMemoryInput,
  InvalidMemoryQuery,
  MemoryStoreFailure
} from "@engram/core/MemoryStoreError"
import { encodeStoredRecord } from "@engram/core/MemoryWrite"
import {
  compareRows,
  type DuplicatePromotion,
  type InvalidPromotionRow,
  PromotionRow,
  PromotionStore,
  type PromotionStoreFailure,
  rowIdentity,
  type Service as PromotionStoreService
} from "@engram/core/PromotionStore"
import * as Sha256 from "@engram/core/Sha256"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

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
  /** Records the target refused and the copy left out (`onError: "skip"`). */
  readonly skipped: number
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
  /** The records the target refused, left out under `onError: "skip"`, in listing order. */
  readonly skipped: ReadonlyArray<SkippedRecord>
  /**
   * What the target was verified against: the source's digest without the skipped records (the
   * same as `source` when nothing was skipped).
   */
  readonly expected: StoreDigest
}

/**
 * A record the copy left out, and why the target refused it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkippedRecord {
  readonly id: MemoryId
  readonly reason: string
}

/**
 * What a copy does with a record the target refuses: `"stop"` fails the copy with
 * {@link RecordNotCopied}, `"skip"` leaves the record out and goes on.
 *
 * @since 0.1.0
 * @category models
 */
export type OnError = "stop" | "skip"

/**
 * The target refused this record (the copy ran with `onError: "stop"`). Records copied before it
 * stay; after fixing the cause, the same copy resumes where it stopped.
 *
 * @since 0.1.0
 * @category errors
 */
export class RecordNotCopied extends ErrorClass.TaggedError<RecordNotCopied>()("RecordNotCopied", {
  id: Schema.String,
  reason: Schema.String,
  cause: Schema.Defect
}, {
  errorClass: "Conflict",
  message: (self) => `record "${self.id}" was not copied: ${self.reason}`
}) {}

const tagOf = (error: unknown): unknown =>
  typeof error === "object" && error !== null && "_tag" in error ? error._tag : undefined

const fieldOf = (value: unknown, key: string): unknown =>
  typeof value === "object" && value !== null && key in value ? (value as Record<string, unknown>)[key] : undefined

// SQLSTATE classes that are about the row: 22 data exception, 23 integrity constraint violation,
// 54 program limit exceeded (a tsvector or index row too long).
const rowSqlState = /^(22|23|54)[0-9A-Z]{3}$/
// SQLite result codes that are about the row.
const rowSqliteCode = /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH|RANGE)/

/**
 * True when a failed `restore` of one record is a refusal of that record — invalid or over-limit
 * input, an id already taken, or a backend failure whose cause names a row-level reason (a
 * PostgreSQL SQLSTATE of class 22, 23 or 54; a SQLite constraint, too-big or mismatch code) —
 * rather than a failure of the store itself.
 *
 * @since 0.1.0
 * @category errors
 */
export const isRecordRefusal = (error: unknown): boolean => {
  const tag = tagOf(error)
  if (tag === "InvalidMemoryInput" || tag === "DuplicateMemoryId") return true
  if (tag !== "MemoryStoreFailure") return false
  for (const link of ErrorClass.causeChain(fieldOf(error, "cause"))) {
    const sqlState = fieldOf(link, "sqlState")
    if (typeof sqlState === "string") return rowSqlState.test(sqlState)
    const code = fieldOf(link, "code")
    if (typeof code === "string" && rowSqliteCode.test(code)) return true
  }
  return false
}

const reasonOf = (error: unknown): string => {
  const tag = tagOf(error)
  if (tag === "InvalidMemoryInput") {
    const problem = fieldOf(error, "problem")
    if (typeof problem === "string") return problem
  }
  return error instanceof Error ? error.message : String(error)
}

/**
 * After copying, the target's digest differs from the source's: the target held other records,
 * or the source changed during the copy. Nothing was deleted; run the copy again (it resumes) or
 * inspect the target.
 *
 * @since 0.1.0
 * @category errors
 */
export class StoreMigrationMismatch extends ErrorClass.TaggedError<StoreMigrationMismatch>()("StoreMigrationMismatch", {
  sourceCount: Schema.Number,
  targetCount: Schema.Number,
  sourcePromotions: Schema.Number,
  targetPromotions: Schema.Number,
  sourceChecksum: Schema.String,
  targetChecksum: Schema.String
}, {
  errorClass: "Conflict",
  message: (self) =>
    self.sourceCount !== self.targetCount
      ? `the target holds ${self.targetCount} records but the source ${self.sourceCount}; ` +
        `the target had other records, or the source changed during the copy`
      : self.sourcePromotions !== self.targetPromotions
      ? `the target holds ${self.targetPromotions} promotion rows for the copied records but the source ` +
        `${self.sourcePromotions}; the target had other rows, or the source changed during the copy`
      : `source and target hold ${self.sourceCount} records each but their checksums differ ` +
        `(${self.sourceChecksum.slice(0, 12)}… vs ${self.targetChecksum.slice(0, 12)}…); ` +
        `a record differs — the source may have changed during the copy`
}) {}

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
 * stops the copy; what was copied stays, and a rerun resumes), `promotions`, to carry the
 * promotion rows of the copied records as well, and `onError` (see {@link OnError}).
 *
 * @since 0.1.0
 * @category models
 */
export interface CopyOptions<E = never, R = never> {
  readonly batchSize?: number | undefined
  /** What to do with a record the target refuses (default `"stop"`). */
  readonly onError?: OnError | undefined
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
  | RecordNotCopied

const DEFAULT_BATCH = 500

/** How a `restore` can fail. */
type RestoreError = DuplicateMemoryId | InvalidMemoryInput | MemoryStoreFailure
// Records hashed per digest step: the checksum chains SHA-256 over groups of this many
// encoded records, so it never depends on how the listing was paged.
const DIGEST_GROUP = 1_000

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
  options?: {
    readonly pageSize?: number | undefined
    readonly promotions?: PromotionStoreService | undefined
    /** Records left out of the digest (with their promotion rows), by id. */
    readonly exclude?: ReadonlySet<string> | undefined
  }
): Effect.Effect<StoreDigest, InvalidCursor | InvalidMemoryQuery | MemoryStoreFailure | PromotionStoreFailure> =>
  Effect.gen(function*() {
    let chain = ""
    let group: Array<string> = []
    let count = 0
    let unreadable = 0
    let promotions = 0
    const flush = Effect.sync(() => {
      chain = Sha256.hex(`${chain}\n${group.join("\n")}`)
      group = []
    })
    const promotionStore = options?.promotions
    const exclude = options?.exclude
    yield* forEachPage(store, options?.pageSize ?? DEFAULT_BATCH, (page, skipped) =>
      Effect.gen(function*() {
        unreadable += skipped
        const records = exclude === undefined ? page : page.filter((record) => !exclude.has(record.id))
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
    const onError: OnError = options.onError ?? "stop"
    const skipped: Array<SkippedRecord> = []
    const skippedIds = () => new Set<string>(skipped.map((record) => record.id))
    const progress = (phase: MigrationProgress["phase"]): MigrationProgress => ({
      phase,
      total: source.count,
      read,
      copied,
      alreadyPresent,
      unreadable,
      skipped: skipped.length,
      batches,
      promotionsCopied
    })
    yield* report(progress("scanned"))
    // One record at a time, after its batch was refused: the records the target refuses are
    // named (and, under "skip", left out); any other failure stops the copy.
    const restoreEach = (records: ReadonlyArray<MemoryRecord>) =>
      Effect.forEach(records, (record) =>
        Effect.catchAll(
          Effect.as(to.restore([record]), true),
          (error): Effect.Effect<boolean, RecordNotCopied | RestoreError> => {
            if (!isRecordRefusal(error)) return Effect.fail(error)
            const reason = reasonOf(error)
            if (onError === "stop") return Effect.fail(new RecordNotCopied({ id: record.id, reason, cause: error }))
            skipped.push({ id: record.id, reason })
            return Effect.succeed(false)
          }
        ))
    yield* forEachPage(from, batchSize, (records, unread) =>
      Effect.gen(function*() {
        unreadable += unread
        const present = yield* to.get(records.map((r) => r.id))
        const have = new Set(present.records.map((r) => r.id))
        const missing = records.filter((r) => !have.has(r.id))
        let written = missing.length
        if (missing.length > 0) {
          yield* to.restore(missing).pipe(
            Effect.catchAll((error): Effect.Effect<void, RecordNotCopied | RestoreError> =>
              isRecordRefusal(error)
                ? Effect.map(restoreEach(missing), (done) => {
                  written = done.filter(Boolean).length
                })
                : Effect.fail(error)
            )
          )
        }
        if (promotions !== undefined) {
          // After the records: a promotion row never arrives before the record it is about.
          const ids = records.map((r) => r.id).filter((id) => !skippedIds().has(id))
          const wanted = [...(yield* promotionsOf(promotions.from, ids)).values()].flat()
          const stored = new Set((yield* promotions.to.getByRecords(ids)).rows.map(rowIdentity))
          const rows = wanted.filter((row) => !stored.has(rowIdentity(row)))
          if (rows.length > 0) yield* promotions.to.commit(rows)
          promotionsCopied += rows.length
        }
        read += records.length
        copied += written
        alreadyPresent += records.length - missing.length
        batches++
        yield* report(progress("copying"))
      }))
    yield* report(progress("verifying"))
    const target = yield* digest(to, { pageSize: batchSize, promotions: promotions?.to })
    // With records left out, the target must equal the source without them (read again now).
    const expected = skipped.length === 0
      ? source
      : yield* digest(from, { pageSize: batchSize, promotions: promotions?.from, exclude: skippedIds() })
    if (target.count !== expected.count || target.checksum !== expected.checksum) {
      return yield* new StoreMigrationMismatch({
        sourceCount: expected.count,
        targetCount: target.count,
        sourcePromotions: expected.promotions,
        targetPromotions: target.promotions,
        sourceChecksum: expected.checksum,
        targetChecksum: target.checksum
      })
    }
    return { copied, alreadyPresent, promotionsCopied, batches, source, target, skipped, expected }
  })

/**
 * {@link copyStore} between two store layers: builds both (e.g. `SqliteMemoryStore.layer().pipe(Layer.provideMerge(SqliteDatabase.layer(…)))` and
 * `PgMemoryStore.layer().pipe(Layer.provideMerge(PgDatabase.layer(…)))`), copies, verifies, and releases them. A layer may provide a
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
