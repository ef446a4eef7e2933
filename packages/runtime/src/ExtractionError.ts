/**
 * The errors of `Extraction`: a run that failed or found its session busy elsewhere, an approval
 * refused, and what a review can fail with. Both the public module (which re-exports them) and
 * its bodies in `internal/` import them from here.
 *
 * @since 0.1.0
 */
import { ErrorClass, type MemoryStoreError, type PromotionStore, type Routing } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Schema from "effect/Schema"

/**
 * An extraction run failed: the model call, its answer or the stores. The turns are untouched;
 * the run can be retried.
 *
 * @since 0.1.0
 * @category errors
 */
export class ExtractionFailed extends Schema.TaggedError<ExtractionFailed>()("ExtractionFailed", {
  sessionId: Schema.String,
  message: Schema.String
}) {
  /** The model or a store failed underneath the run. */
  get errorClass(): ErrorClass.ErrorClass {
    return "Unavailable"
  }
}

/**
 * Another extraction service — another process over the same store — holds the session's
 * extraction claim: this run read nothing and called no model. Try again once `until` has passed
 * or the other run has finished.
 *
 * @since 0.1.0
 * @category errors
 */
export class ExtractionBusy extends ErrorClass.TaggedError<ExtractionBusy>()("ExtractionBusy", {
  sessionId: Schema.String,
  holder: Schema.String,
  until: Schema.DateTimeUtc
}, {
  // Someone else holds the session: a conflict with what the store holds.
  errorClass: "Conflict",
  message: (self) =>
    `session ${self.sessionId} is being extracted by another process (claim ${self.holder.slice(0, 8)}… ` +
    `until ${DateTime.formatIso(self.until)}); nothing was read or written: try again when it has finished`
}) {}

/**
 * A memory an operator was asked to approve could not be.
 *
 * @since 0.1.0
 * @category errors
 */
export class ApprovalRefused extends Schema.TaggedError<ApprovalRefused>()("ApprovalRefused", {
  memoryId: Schema.String,
  message: Schema.String
}) {
  /** The memory is not in a state that can be approved: a conflict with what the store holds. */
  get errorClass(): ErrorClass.ErrorClass {
    return "Conflict"
  }
}

/**
 * What reviewing a memory can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type ReviewError =
  | ApprovalRefused
  | MemoryStoreError.MemoryNotFound
  | MemoryStoreError.MemoryConflict
  | MemoryStoreError.InvalidReviewState
  | MemoryStoreError.DuplicateMemoryId
  | MemoryStoreError.InvalidMemoryInput
  | MemoryStoreError.MemoryStoreFailure
  | Routing.InvalidPlacement
  | PromotionStore.InvalidPromotionRow
  | PromotionStore.PromotionStoreFailure
