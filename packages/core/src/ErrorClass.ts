/**
 * What kind of failure a typed error is. Every typed error a surface can show declares its class,
 * as an `errorClass` getter beside its `message`:
 *
 * | class | meaning | HTTP | `engram` exit | memory tool |
 * | --- | --- | --- | --- | --- |
 * | `InvalidInput` | the request itself is wrong: fix it and retry | 400 | 1 | the message |
 * | `NotFound` | what the request names does not exist (or is not visible) | 404 | 1 | the message |
 * | `Conflict` | the request clashes with what is stored (an id taken, a lifecycle step refused) | 409 | 1 | the message |
 * | `Misconfigured` | the agent, routing spec or settings the deployment supplied are broken | 503 | 1 | a configuration error, logged |
 * | `Unavailable` | the backend failed underneath, or what it holds cannot be read | 503 | 2 | "unavailable right now", logged |
 * | `StorageFull` | the backend has no room left to write (a full disk, a size cap): nothing was written | 507 | 3 | "storage is full", logged |
 *
 * The server (`toHttp`), the CLI (`toCliFailure`) and the memory tools (`toToolError`) each map the
 * class to what they show, by an exhaustive table over {@link ErrorClass}; they accept only
 * {@link Classifiable} errors, so an error that reaches one of them without declaring a class does
 * not compile. The getter lives on the prototype: it is not a field, so it changes neither the
 * error's encoding nor its equality.
 *
 * @example
 * ```ts
 * import { ErrorClass } from "@engram/core"
 * import * as Schema from "effect/Schema"
 *
 * class ShelfNotFound extends Schema.TaggedError<ShelfNotFound>()("ShelfNotFound", { shelf: Schema.String }) {
 *   override get message() {
 *     return `no shelf "${this.shelf}"`
 *   }
 *   get errorClass(): ErrorClass.ErrorClass {
 *     return "NotFound"
 *   }
 * }
 *
 * ErrorClass.classify(new ShelfNotFound({ shelf: "top" })) // "NotFound"
 * ```
 *
 * @since 0.1.0
 */
import * as Predicate from "effect/Predicate"

/**
 * The classes of failure (see the module's table).
 *
 * @since 0.1.0
 * @category models
 */
export type ErrorClass = "InvalidInput" | "NotFound" | "Conflict" | "Misconfigured" | "Unavailable" | "StorageFull"

/**
 * Every class, in the order of the module's table.
 *
 * @since 0.1.0
 * @category models
 */
export const all: ReadonlyArray<ErrorClass> = [
  "InvalidInput",
  "NotFound",
  "Conflict",
  "Misconfigured",
  "Unavailable",
  "StorageFull"
]

/**
 * A typed error that declares its class.
 *
 * @since 0.1.0
 * @category models
 */
export interface Classified {
  readonly _tag: string
  readonly message: string
  readonly errorClass: ErrorClass
}

/**
 * The errors `@effect/sql` raises, which the store layers let through from building a client or
 * running migrations: the database failed underneath, so they are `Unavailable`. They are named
 * by tag because core does not import `@effect/sql`.
 *
 * @since 0.1.0
 * @category models
 */
export interface SqlFailure {
  readonly _tag: "SqlError" | "MigrationError"
  readonly message: string
}

/**
 * What {@link classify} accepts: a {@link Classified} error or an {@link SqlFailure}.
 *
 * @since 0.1.0
 * @category models
 */
export type Classifiable = Classified | SqlFailure

/**
 * The class of a typed error.
 *
 * @since 0.1.0
 * @category classifying
 */
export const classify = (error: Classifiable): ErrorClass => "errorClass" in error ? error.errorClass : "Unavailable"

const isErrorClass = (u: unknown): u is ErrorClass =>
  typeof u === "string" && (all as ReadonlyArray<string>).includes(u)

/**
 * The class of any value, for a surface that receives failures untyped (a `Cause` at the top of
 * a program): the declared class, `Unavailable` for an {@link SqlFailure}, `undefined` for
 * anything else.
 *
 * @since 0.1.0
 * @category classifying
 */
export const fromUnknown = (error: unknown): ErrorClass | undefined => {
  if (!Predicate.isObject(error)) return undefined
  if (Predicate.hasProperty(error, "errorClass") && isErrorClass(error.errorClass)) return error.errorClass
  if (Predicate.hasProperty(error, "_tag") && (error._tag === "SqlError" || error._tag === "MigrationError")) {
    return "Unavailable"
  }
  return undefined
}

/**
 * The class of a store failure from its cause: `StorageFull` when the cause declares it (the
 * backend ran out of room: SQLite's `SQLITE_FULL`, PostgreSQL's `53100 disk_full`), `Unavailable`
 * otherwise. A store's failure class (`MemoryStoreFailure`…) reads its class through this, so the
 * store layers decide the class where they know the backend's codes, and core knows none of them.
 *
 * @since 0.1.0
 * @category classifying
 */
export const ofStoreCause = (cause: unknown): ErrorClass =>
  Predicate.hasProperty(cause, "errorClass") && cause.errorClass === "StorageFull" ? "StorageFull" : "Unavailable"
