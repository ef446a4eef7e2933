/**
 * Why PostgreSQL refused: the server's SQLSTATE and message, carried as the `cause` of every
 * PostgreSQL store's typed failure (`MemoryStoreFailure`, `PromotionStoreFailure`,
 * `SessionStoreFailure`, `TelemetryStoreFailure`), so that the failure's message reads
 * `memory store restore failed: PostgreSQL 54000: string is too long for tsvector (…)` instead of
 * the driver's bare "Failed to execute statement".
 *
 * Only the server's own message, SQLSTATE and hint reach the text. The error's `detail` (which can
 * quote a whole failing row, content included) is kept as a field, never in the message; a
 * connection URL with a password that reaches a driver message is redacted.
 *
 * @example
 * ```ts
 * import { PgError } from "@engram/store-pg"
 *
 * // failure: a MemoryStoreFailure from PgMemoryStore
 * if (failure.cause instanceof PgError.PgServerError && failure.cause.sqlState === "23514") {
 *   // a CHECK constraint refused the row
 * }
 * ```
 *
 * @since 0.1.0
 */
import { SqlError } from "@effect/sql/SqlError"
import { ErrorClass } from "@engram/core"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

/**
 * PostgreSQL answered a statement with an error: `sqlState` is its five-character SQLSTATE
 * (`23505`, `54000`, …), `serverMessage` the server's primary message; `detail`, `hint`,
 * `constraint`, `table` and `column` are present when the server sent them.
 *
 * @since 0.1.0
 * @category errors
 */
export class PgServerError extends ErrorClass.TaggedError<PgServerError>()("PgServerError", {
  sqlState: Schema.String,
  serverMessage: Schema.String,
  detail: Schema.optional(Schema.String),
  hint: Schema.optional(Schema.String),
  constraint: Schema.optional(Schema.String),
  table: Schema.optional(Schema.String),
  column: Schema.optional(Schema.String)
}, {
  // `StorageFull` for `53100 disk_full` (the server could not extend a file), else `Unavailable`.
  errorClass: (self) => self.sqlState === DISK_FULL ? "StorageFull" : "Unavailable",
  message: (self) =>
    `PostgreSQL ${self.sqlState}: ${redactUrls(self.serverMessage)}${
      self.hint === undefined ? "" : ` (hint: ${redactUrls(self.hint)})`
    }${
      self.sqlState === DISK_FULL
        ? "; the storage is full: nothing of this write was stored; free disk space on the server and retry"
        : ""
    }`
}) {}

/** PostgreSQL's SQLSTATE for `disk_full`. */
const DISK_FULL = "53100"

// postgres://user:secret@host → postgres://user:***@host
const urlPassword = /\b(postgres(?:ql)?:\/\/[^\s:/@]*):[^\s@/]*@/giu

/**
 * Text with the password of any `postgres://` URL in it replaced by `***`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const redactUrls = (text: string): string => text.replace(urlPassword, "$1:***@")

const SQLSTATE = /^[0-9A-Z]{5}$/

const stringField = (value: unknown, key: string): string | undefined =>
  Predicate.hasProperty(value, key) && typeof value[key] === "string" && value[key] !== "" ? value[key] : undefined

/**
 * The server's error behind a driver error, when there is one: node-postgres' `DatabaseError`
 * (an error with a SQLSTATE `code`, a `severity` and a message).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromDriverError = (error: unknown): PgServerError | undefined => {
  const sqlState = stringField(error, "code")
  const serverMessage = error instanceof Error ? error.message : undefined
  // The server always sends a severity; a Node system error (EPIPE, EPERM…) has a code but none.
  if (sqlState === undefined || !SQLSTATE.test(sqlState) || serverMessage === undefined) return undefined
  if (stringField(error, "severity") === undefined) return undefined
  const optional = (key: string) => {
    const value = stringField(error, key)
    return value === undefined ? {} : { [key]: value }
  }
  return new PgServerError({
    sqlState,
    serverMessage,
    ...optional("detail"),
    ...optional("hint"),
    ...optional("constraint"),
    ...optional("table"),
    ...optional("column")
  })
}

/**
 * What a store failure carries as its cause for a failed statement: the {@link PgServerError}
 * when the server answered, else the `SqlError` with the driver's own reason (a refused
 * connection, a dropped socket) appended to its message, URL passwords redacted.
 *
 * @since 0.1.0
 * @category constructors
 */
export const reasonOf = (error: SqlError): PgServerError | SqlError => {
  const server = fromDriverError(error.cause)
  if (server !== undefined) return server
  const driver = error.cause instanceof Error ? redactUrls(error.cause.message) : undefined
  if (driver === undefined || driver === "" || error.message.includes(driver)) return error
  return new SqlError({ message: `${error.message}: ${driver}`, cause: error.cause })
}
