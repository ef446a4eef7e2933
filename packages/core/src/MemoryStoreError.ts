/**
 * The typed failures of a memory store. Each carries a message a person can act on.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"

/**
 * The setting of `MemoryLimits` a value exceeded: its name, its value and the size given
 * (characters, as `String.length` counts them; for `maxTags`, how many tags).
 *
 * @since 0.1.0
 * @category models
 */
export const ExceededLimit = Schema.Struct({
  name: Schema.Literal(
    "maxContentChars",
    "maxQueryChars",
    "maxTags",
    "maxNeighbourWindow",
    "maxNeighbourPositions",
    "maxNeighbourExcluded"
  ),
  max: Schema.Number,
  size: Schema.Number
})
/** @since 0.1.0 @category models */
export type ExceededLimit = typeof ExceededLimit.Type

/**
 * The problem text of an exceeded limit, naming the setting.
 *
 * @since 0.1.0
 * @category errors
 */
export const describeLimit = (what: string, limit: ExceededLimit): string =>
  limit.name === "maxTags" || limit.name === "maxNeighbourPositions" || limit.name === "maxNeighbourExcluded"
    ? `${what} has ${limit.size} entries, over the limit of ${limit.max} (MemoryLimits.${limit.name})`
    : limit.name === "maxNeighbourWindow"
    ? `${what} is ${limit.size} turns, over the limit of ${limit.max} (MemoryLimits.${limit.name})`
    : `${what} is ${limit.size} characters, over the limit of ${limit.max} (MemoryLimits.${limit.name})`

/**
 * A write or restore named an id that is already stored (or repeated it within one batch).
 * Nothing in the batch was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class DuplicateMemoryId extends ErrorClass.TaggedError<DuplicateMemoryId>()("DuplicateMemoryId", {
  id: Schema.String
}, {
  errorClass: "Conflict",
  message: (self) => `memory id "${self.id}" already exists; writes are create-only and nothing in the batch was stored`
}) {}

/**
 * An input failed to decode, or was over a size limit (`limit` names it). `index` is its position
 * in the batch; `problem` names the field. Nothing in the batch was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidMemoryInput extends ErrorClass.TaggedError<InvalidMemoryInput>()("InvalidMemoryInput", {
  index: Schema.Number,
  problem: Schema.String,
  /** Present when the input was refused for its size: the limit it exceeded. */
  limit: Schema.optional(ExceededLimit)
}, {
  errorClass: "InvalidInput",
  message: (self) => `memory input #${self.index} is invalid: ${self.problem}`
}) {}

/**
 * A review state that is not one of `confirmed`, `pending` or `rejected`. Nothing was changed.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidReviewState extends ErrorClass.TaggedError<InvalidReviewState>()("InvalidReviewState", {
  state: Schema.Unknown
}, {
  errorClass: "InvalidInput",
  message: (self) => {
    return `${
      JSON.stringify(self.state) ?? String(self.state)
    } is not a review state; use confirmed, pending or rejected`
  }
}) {}

/**
 * A query (filters, limit) failed to decode, or the search text was over `maxQueryChars` (then
 * `limit` names it).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidMemoryQuery extends ErrorClass.TaggedError<InvalidMemoryQuery>()("InvalidMemoryQuery", {
  problem: Schema.String,
  /** Present when the search text was refused for its size: the limit it exceeded. */
  limit: Schema.optional(ExceededLimit)
}, {
  errorClass: "InvalidInput",
  message: (self) => `invalid memory query: ${self.problem}`
}) {}

/**
 * A store's own options were refused when it was built, e.g. a search default out of range
 * (`search.ranking.k1: k1 must be a number from 0 to 10`): a deployment's configuration, not a
 * caller's input.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidStoreOptions extends ErrorClass.TaggedError<InvalidStoreOptions>()("InvalidStoreOptions", {
  problem: Schema.String
}, {
  errorClass: "Misconfigured",
  message: (self) => `invalid store options: ${self.problem}`
}) {}

/**
 * A listing cursor that this store did not produce.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidCursor extends ErrorClass.TaggedError<InvalidCursor>()("InvalidCursor", {
  cursor: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `cursor "${self.cursor}" is not a cursor returned by a previous listing`
}) {}

/**
 * A lifecycle operation named a record that does not exist.
 *
 * @since 0.1.0
 * @category errors
 */
export class MemoryNotFound extends ErrorClass.TaggedError<MemoryNotFound>()("MemoryNotFound", {
  id: Schema.String
}, {
  errorClass: "NotFound",
  message: (self) => `no memory with id "${self.id}"`
}) {}

/**
 * A lifecycle operation lost to the record's current state — it was superseded already, or
 * another writer changed it first. The store is as the winning operation left it.
 *
 * @since 0.1.0
 * @category errors
 */
export class MemoryConflict extends ErrorClass.TaggedError<MemoryConflict>()("MemoryConflict", {
  id: Schema.String,
  reason: Schema.String
}, {
  errorClass: "Conflict",
  message: (self) => `memory "${self.id}" cannot be changed: ${self.reason}`
}) {}

/**
 * The backend itself failed (I/O, connection, SQL). The operation left the store as it was. Its
 * class is `Unavailable`, or `StorageFull` when the cause is a `StorageFull` (the backend ran out
 * of room).
 *
 * @since 0.1.0
 * @category errors
 */
export class MemoryStoreFailure
  extends ErrorClass.Failure<MemoryStoreFailure>()("MemoryStoreFailure", "memory store")
{}
