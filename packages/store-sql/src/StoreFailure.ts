/**
 * A failed statement as a store's failure. Every SQL store reports a `SqlError` the same way: as
 * its own failure class (`ErrorClass.Failure`, fields `{ operation, cause }`), the cause as its
 * backend describes it (SQLite: a full disk as `StorageFull`; PostgreSQL: the server's error, its
 * URL redacted).
 *
 * @since 0.1.0
 */
import type { SqlError } from "@effect/sql/SqlError"
import * as Effect from "effect/Effect"

/**
 * A store's failure class: constructed from the operation and its cause.
 *
 * @since 0.1.0
 * @category models
 */
export type FailureClass<F> = new(fields: { readonly operation: string; readonly cause: unknown }) => F

/**
 * Reports a failed statement of `operation` as the store's failure.
 *
 * @since 0.1.0
 * @category models
 */
export type Failing<F> = (operation: string) => (error: SqlError) => Effect.Effect<never, F>

/**
 * The {@link Failing} of `Failure`, its cause as `describe` gives it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const failing =
  <F>(Failure: FailureClass<F>, describe: (error: SqlError) => unknown): Failing<F> => (operation) => (error) =>
    Effect.fail(new Failure({ operation, cause: describe(error) }))
