/**
 * The `PromotionStore` service: promotion rows, one per record and routing spec, saying what the
 * system decided about a memory — its placement and address, where the key came from, which spec
 * (and version) decided, when, and the section's tier at that moment.
 *
 * Rows are committed once and never rewritten: a second row for the same record and spec is a
 * {@link DuplicatePromotion}. The record keeps what the model observed; the row keeps what the
 * system decided. The save gate asks one question of this store, constantly: which rows hold this
 * exact address in this scope ({@link Service.lookup}) — so every backend indexes
 * `(scope, placementKey)`.
 *
 * @example
 * import { Effect } from "effect"
 * import { PromotionStore } from "@engram/core"
 *
 * const holders = Effect.gen(function*() {
 *   const store = yield* PromotionStore.PromotionStore
 *   return yield* store.lookup("global", JSON.stringify(["about_user", "name"]))
 * }).pipe(Effect.provide(PromotionStore.layerMemory))
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as InMemoryPromotionStore from "./internal/inMemoryPromotionStore.js"
import * as internal from "./internal/promotionRow.js"
import type { MemoryId, Scope } from "./MemoryRecord.js"
import type { DuplicatePromotion, InvalidPromotionRow, PromotionStoreFailure } from "./PromotionStoreError.js"

/**
 * A promotion row: the record it is about, the record's scope, and the routing decision.
 *
 * @since 0.1.0
 * @category models
 */
export {
  /** @since 0.1.0 @category errors */
  DuplicatePromotion,
  /** @since 0.1.0 @category errors */
  InvalidPromotionRow,
  /** @since 0.1.0 @category errors */
  PromotionStoreFailure
} from "./PromotionStoreError.js"

export const PromotionRow = internal.PromotionRow
/** @since 0.1.0 @category models */
export type PromotionRow = internal.PromotionRow

/**
 * Rows read back, in {@link compareRows} order, with the number of stored rows that failed to
 * decode and were skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromotionRead {
  readonly rows: ReadonlyArray<PromotionRow>
  readonly skipped: number
}

/**
 * Narrows a read to the rows one spec committed.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadOptions {
  readonly specKey?: string | undefined
}

/**
 * The promotion store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Stores rows, atomically: an invalid row, or a row for a `(recordId, specKey)` that already
   * has one — stored or earlier in the batch — fails the whole batch and stores nothing. Returns
   * the rows as stored.
   */
  readonly commit: (
    rows: ReadonlyArray<PromotionRow>
  ) => Effect.Effect<ReadonlyArray<PromotionRow>, DuplicatePromotion | InvalidPromotionRow | PromotionStoreFailure>

  /**
   * The rows whose `placementKey` is exactly `placementKey`, within `scope` (optionally one
   * spec's only). Declined rows have no address and are never returned. Indexed: its cost does not
   * grow with the number of rows stored.
   */
  readonly lookup: (
    scope: Scope,
    placementKey: string,
    options?: ReadOptions
  ) => Effect.Effect<PromotionRead, PromotionStoreFailure>

  /** Every row in `scope` (optionally one spec's only), declined rows included. */
  readonly listByScope: (scope: Scope, options?: ReadOptions) => Effect.Effect<PromotionRead, PromotionStoreFailure>

  /** The rows of these records (optionally one spec's only); unknown ids are left out. */
  readonly getByRecords: (
    recordIds: ReadonlyArray<MemoryId>,
    options?: ReadOptions
  ) => Effect.Effect<PromotionRead, PromotionStoreFailure>

  /**
   * Deletes every row of these records (every spec), returning how many rows went. The one
   * exception to "committed once": `MemoryStore.forget` calls it, inside its own transaction where
   * the backend shares one, so a forgotten memory leaves no placement behind.
   */
  readonly forget: (recordIds: ReadonlyArray<MemoryId>) => Effect.Effect<number, PromotionStoreFailure>
}

/**
 * The promotion store service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class PromotionStore extends Context.Tag("@engram/core/PromotionStore")<PromotionStore, Service>() {}

/**
 * Counts stored promotion rows that failed to decode on read and were skipped, by backend.
 *
 * @since 0.1.0
 * @category metrics
 */
export const rowsSkipped = Metric.counter("engram_promotion_rows_skipped", {
  description: "Stored promotion rows that failed to decode on read and were skipped",
  incremental: true
})

/**
 * The order every read returns rows in: `recordId` ascending, then `specKey` ascending (raw
 * code-unit comparison). Total, because a record has at most one row per spec.
 *
 * @since 0.1.0
 * @category ordering
 */
export const compareRows: (a: PromotionRow, b: PromotionRow) => number = internal.compareRows

/**
 * The identity of a row: one per record and spec.
 *
 * @since 0.1.0
 * @category models
 */
export const rowIdentity: (row: Pick<PromotionRow, "recordId" | "specKey">) => string = internal.rowIdentity

/**
 * Why a row is not a consistent decision, or `undefined` when it is: every field valid, a
 * non-empty spec key and version, and the address agreeing with the placement — a placed row
 * carries `placementKey(placement)` and a key source, a declined row (no placement) carries no
 * address, key source or tier.
 *
 * @since 0.1.0
 * @category validation
 */
export const rowProblem: (row: unknown) => string | undefined = internal.rowProblem

/**
 * Checks a batch before it is stored: every row consistent ({@link rowProblem}), and no
 * `(recordId, specKey)` twice. Backends run this first, then check for stored duplicates.
 *
 * @since 0.1.0
 * @category validation
 */
export const validateBatch: (
  rows: ReadonlyArray<PromotionRow>
) => Either.Either<ReadonlyArray<PromotionRow>, InvalidPromotionRow | DuplicatePromotion> = internal.validateBatch

/**
 * The in-memory reference store: nothing persisted, each layer build starts empty. Lookups go
 * through a `(scope, placementKey)` index, like every other backend's.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<PromotionStore> = Layer.sync(PromotionStore, () => InMemoryPromotionStore.make())
