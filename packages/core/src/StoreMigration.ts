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
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type { MemoryRecord } from "./MemoryRecord.js"
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

/**
 * Where a copy stands, reported after the scan, after every batch and before verification.
 *
 * - `total`: records the source holds (known after the scan).
 * - `read`: source records handled so far; `copied` of them were written in this run and
 *   `alreadyPresent` were found in the target (a resumed copy).
 * - `unreadable`: source rows that failed to decode; they cannot be copied.
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
}

/**
 * A store's fingerprint: how many readable records it holds, how many rows it could not read,
 * and a hex SHA-256 over the readable records' encoded forms in listing order.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreDigest {
  readonly count: number
  readonly unreadable: number
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
  sourceChecksum: Schema.String,
  targetChecksum: Schema.String
}) {
  override get message() {
    return this.sourceCount !== this.targetCount
      ? `the target holds ${this.targetCount} records but the source ${this.sourceCount}; ` +
        `the target had other records, or the source changed during the copy`
      : `source and target hold ${this.sourceCount} records each but their checksums differ ` +
        `(${this.sourceChecksum.slice(0, 12)}… vs ${this.targetChecksum.slice(0, 12)}…); ` +
        `a record differs — the source may have changed during the copy`
  }
}

/**
 * Copy options: `batchSize` records per read and per `restore` (default 500, at most 10,000),
 * and `onProgress`, called with a {@link MigrationProgress} as the copy advances (a failure
 * there stops the copy; what was copied stays, and a rerun resumes).
 *
 * @since 0.1.0
 * @category models
 */
export interface CopyOptions<E = never, R = never> {
  readonly batchSize?: number | undefined
  readonly onProgress?: ((progress: MigrationProgress) => Effect.Effect<void, E, R>) | undefined
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
  | StoreMigrationMismatch

const DEFAULT_BATCH = 500
// Records hashed per digest step: the checksum chains SHA-256 over groups of this many
// encoded records, so it never depends on how the listing was paged.
const DIGEST_GROUP = 1_000

const hex = (buffer: ArrayBuffer): string =>
  Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, "0")).join("")

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
  options?: { readonly pageSize?: number | undefined }
): Effect.Effect<StoreDigest, InvalidCursor | InvalidMemoryQuery | MemoryStoreFailure> =>
  Effect.gen(function*() {
    let chain = ""
    let group: Array<string> = []
    let count = 0
    let unreadable = 0
    const flush = Effect.suspend(() => {
      const text = `${chain}\n${group.join("\n")}`
      group = []
      return Effect.map(sha256(text), (next) => {
        chain = next
      })
    })
    yield* forEachPage(store, options?.pageSize ?? DEFAULT_BATCH, (records, skipped) =>
      Effect.gen(function*() {
        unreadable += skipped
        for (const record of records) {
          count++
          group.push(JSON.stringify(encodeStoredRecord(record)))
          if (group.length === DIGEST_GROUP) yield* flush
        }
      }))
    if (group.length > 0 || chain === "") yield* flush
    return { count, unreadable, checksum: chain }
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
    // The source digest comes first: it gives the progress bar its total, and verification
    // compares the target with the source as it was when the copy began.
    const source = yield* digest(from, { pageSize: batchSize })
    let read = 0
    let copied = 0
    let alreadyPresent = 0
    let unreadable = 0
    let batches = 0
    const progress = (phase: MigrationProgress["phase"]): MigrationProgress => ({
      phase,
      total: source.count,
      read,
      copied,
      alreadyPresent,
      unreadable,
      batches
    })
    yield* report(progress("scanned"))
    yield* forEachPage(from, batchSize, (records, skipped) =>
      Effect.gen(function*() {
        unreadable += skipped
        const present = yield* to.get(records.map((r) => r.id))
        const have = new Set(present.records.map((r) => r.id))
        const missing = records.filter((r) => !have.has(r.id))
        if (missing.length > 0) yield* to.restore(missing)
        read += records.length
        copied += missing.length
        alreadyPresent += records.length - missing.length
        batches++
        yield* report(progress("copying"))
      }))
    yield* report(progress("verifying"))
    const target = yield* digest(to, { pageSize: batchSize })
    if (target.count !== source.count || target.checksum !== source.checksum) {
      return yield* new StoreMigrationMismatch({
        sourceCount: source.count,
        targetCount: target.count,
        sourceChecksum: source.checksum,
        targetChecksum: target.checksum
      })
    }
    return { copied, alreadyPresent, batches, source, target }
  })

/**
 * {@link copyStore} between two store layers: builds both (e.g. `SqliteMemoryStore.layer(…)` and
 * `PgMemoryStore.layer(…)`), copies, verifies, and releases them.
 *
 * @since 0.1.0
 * @category copying
 */
export const migrateStore = <E1, R1, E2, R2, E = never, R = never>(
  options: {
    readonly from: Layer.Layer<MemoryStore, E1, R1>
    readonly to: Layer.Layer<MemoryStore, E2, R2>
  } & CopyOptions<E, R>
): Effect.Effect<MigrationReport, CopyError | E | E1 | E2, R | R1 | R2> =>
  Effect.scoped(
    Effect.gen(function*() {
      const from = Context.get(yield* Layer.build(options.from), MemoryStore)
      const to = Context.get(yield* Layer.build(options.to), MemoryStore)
      return yield* copyStore(from, to, options)
    })
  )
