/**
 * The errors of `PromotionStore`: a row refused, a duplicate, the backend failing. Both the
 * public module (which re-exports them) and its bodies import them from here.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"

/**
 * A second row for a record and spec that already has one (stored, or earlier in the batch).
 * Rows are committed once; nothing in the batch was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicatePromotion extends ErrorClass.TaggedError<DuplicatePromotion>()("DuplicatePromotion", {
  recordId: Schema.String,
  specKey: Schema.String
}, {
  errorClass: "Conflict",
  message: (self) =>
    `memory "${self.recordId}" already has a promotion row for spec "${self.specKey}"; ` +
    `rows are committed once and nothing in the batch was stored`
}) {}

/**
 * A row that is not a consistent decision: a field fails its schema, or the address disagrees with
 * the placement. `index` is the row's position in the batch; nothing in the batch was stored.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidPromotionRow extends ErrorClass.TaggedError<InvalidPromotionRow>()("InvalidPromotionRow", {
  index: Schema.Number,
  problem: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `promotion row #${self.index} is invalid: ${self.problem}`
}) {}

/**
 * The backend itself failed (I/O, connection, SQL). The operation left the store as it was.
 *
 * @since 0.1.0
 * @category errors
 */
export class PromotionStoreFailure
  extends ErrorClass.Failure<PromotionStoreFailure>()("PromotionStoreFailure", "promotion store")
{}
