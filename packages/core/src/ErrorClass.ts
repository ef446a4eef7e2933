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
 * error's encoding nor its equality. {@link TaggedError} declares the class and the message of an
 * error at once, and {@link Failure} is the one constructor of the stores' `{ operation, cause }`
 * failures (decision 0167); the example below writes the getters by hand, as they end up.
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
import type * as Cause from "effect/Cause"
import * as Predicate from "effect/Predicate"
import * as Schema from "effect/Schema"

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

/**
 * An error and its causes, outermost first, at most `depth` links (a driver's error can wrap
 * another many times, or itself).
 *
 * @since 0.1.0
 * @category describing
 */
export const causeChain = (error: unknown, depth: number = 4): ReadonlyArray<unknown> => {
  const chain: Array<unknown> = []
  for (let current = error; chain.length < depth && current !== undefined && current !== null;) {
    chain.push(current)
    current = Predicate.hasProperty(current, "cause") ? current.cause : undefined
  }
  return chain
}

/**
 * The messages of an error and its causes ({@link causeChain}), outermost first, each once, joined
 * by ": " — the driver's "connect ECONNREFUSED …" sits in a cause.
 *
 * @since 0.1.0
 * @category describing
 */
export const causeMessages = (error: unknown): string => {
  const parts: Array<string> = []
  for (const link of causeChain(error)) {
    const text = link instanceof Error ? link.message : String(link)
    if (text !== "" && !parts.includes(text)) parts.push(text)
  }
  return parts.join(": ")
}

/**
 * The class {@link TaggedError} builds: a `Schema.TaggedError` class whose instances declare their
 * class and message (so they are {@link Classified}).
 *
 * @since 0.1.0
 * @category constructors
 */
export interface TaggedErrorClass<Self, Tag extends string, Fields extends Schema.Struct.Fields> extends
  Schema.Class<
    Self,
    { readonly _tag: Schema.tag<Tag> } & Fields,
    Schema.Struct.Encoded<{ readonly _tag: Schema.tag<Tag> } & Fields>,
    Schema.Struct.Context<Fields>,
    Schema.Struct.Constructor<Omit<Fields, "_tag">>,
    {},
    Cause.YieldableError & { readonly errorClass: ErrorClass }
  >
{
  readonly _tag: Tag
}

/**
 * How an error of {@link TaggedError} reads: its class (one for every error of the tag, or read
 * from its fields) and its message, from its fields.
 *
 * @since 0.1.0
 * @category constructors
 */
export interface Declaration<Fields extends Schema.Struct.Fields> {
  readonly errorClass: ErrorClass | ((self: Schema.Struct.Type<Fields>) => ErrorClass)
  readonly message: (self: Schema.Struct.Type<Fields>) => string
}

/**
 * One constructor for a typed error with a message and a class: `Schema.TaggedError` with the
 * `message` and `errorClass` getters written once. Both getters live on the prototype, so an
 * error encodes and compares by its fields alone.
 *
 * @example
 * ```ts
 * import { ErrorClass } from "@engram/core"
 * import * as Schema from "effect/Schema"
 *
 * class ShelfNotFound extends ErrorClass.TaggedError<ShelfNotFound>()("ShelfNotFound", { shelf: Schema.String }, {
 *   errorClass: "NotFound",
 *   message: (self) => `no shelf "${self.shelf}"`
 * }) {}
 *
 * new ShelfNotFound({ shelf: "top" }).message // no shelf "top"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const TaggedError = <Self>() =>
<const Tag extends string, Fields extends Schema.Struct.Fields>(
  tag: Tag,
  fields: Fields,
  declaration: Declaration<Fields>
): TaggedErrorClass<Self, Tag, Fields> => {
  const errorClassOf = declaration.errorClass
  // The schema class, typed for the body below only: the caller's type is the one returned.
  const Base = Schema.TaggedError<unknown>()(tag, fields) as unknown as new(props: object) => Cause.YieldableError
  class Declared extends Base {
    override get message() {
      return declaration.message(this as unknown as Schema.Struct.Type<Fields>)
    }
    get errorClass(): ErrorClass {
      return typeof errorClassOf === "function"
        ? errorClassOf(this as unknown as Schema.Struct.Type<Fields>)
        : errorClassOf
    }
  }
  return Declared as unknown as TaggedErrorClass<Self, Tag, Fields>
}

/** The fields of every store and transport failure. */
const failureFields = { operation: Schema.String, cause: Schema.Defect }

/**
 * One constructor for the store and transport failures: fields `{ operation, cause }`, message
 * `"<subject> <operation> failed: <the cause's message>"`, class {@link ofStoreCause} of the cause
 * (`Unavailable`, or `StorageFull` when the backend ran out of room).
 *
 * @example
 * ```ts
 * import { ErrorClass } from "@engram/core"
 *
 * class ShelfStoreFailure extends ErrorClass.Failure<ShelfStoreFailure>()("ShelfStoreFailure", "shelf store") {}
 *
 * new ShelfStoreFailure({ operation: "write", cause: new Error("disk") }).message // shelf store write failed: disk
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const Failure = <Self>() => <const Tag extends string>(tag: Tag, subject: string) =>
  TaggedError<Self>()(tag, failureFields, {
    errorClass: (self) => ofStoreCause(self.cause),
    message: (self) =>
      `${subject} ${self.operation} failed: ${self.cause instanceof Error ? self.cause.message : String(self.cause)}`
  })
