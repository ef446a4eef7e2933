/**
 * The backend has no room left to write: a full disk, a filesystem or quota limit, a database
 * size cap. It is carried as the `cause` of a store's failure (`MemoryStoreFailure`,
 * `PromotionStoreFailure`, …), which then declares the `StorageFull` class (`ErrorClass`):
 * HTTP 507, `engram` exit 3, a log line. The transaction that hit it was rolled back, so nothing
 * of the failed write is stored, and every write acknowledged before it is kept.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"

/**
 * The storage is full: `backend` names the store (`SQLite`, `PostgreSQL`), `detail` is the
 * backend's own words.
 *
 * @since 0.1.0
 * @category errors
 */
export class StorageFull extends ErrorClass.TaggedError<StorageFull>()("StorageFull", {
  backend: Schema.String,
  detail: Schema.String
}, {
  errorClass: "StorageFull",
  message: (self) =>
    `the ${self.backend} storage is full (${self.detail}); nothing of this write was stored: ` +
    "free disk space (or raise the size limit) and retry"
}) {}
