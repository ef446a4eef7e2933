/**
 * `StoreTransaction` over the SQL client every store of one database shares: the memory,
 * promotion, session and telemetry stores of a `SqliteEngram` or `PgEngram` run a unit of work in
 * one database transaction. Only how a driver's error reads as the failure's cause differs by
 * backend (a full disk in SQLite, a server error code in PostgreSQL), so that is the argument.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { MemoryStoreError, StoreTransaction } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

/**
 * The one transaction of the database behind the `SqlClient` in context; a failure of the
 * transaction itself (begin, commit) is a `MemoryStoreFailure` with the cause `causeOf` reads.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  causeOf: (error: SqlError) => unknown
): Layer.Layer<StoreTransaction.StoreTransaction, never, SqlClient.SqlClient> =>
  Layer.effect(
    StoreTransaction.StoreTransaction,
    Effect.map(SqlClient.SqlClient, (sql) => ({
      run: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | MemoryStoreError.MemoryStoreFailure, R> =>
        Effect.catchAll(
          sql.withTransaction(effect),
          (error): Effect.Effect<never, E | MemoryStoreError.MemoryStoreFailure> =>
            error instanceof SqlError
              ? Effect.fail(
                new MemoryStoreError.MemoryStoreFailure({ operation: "transaction", cause: causeOf(error) })
              )
              : Effect.fail(error)
        )
    }))
  )

/**
 * True while the effect runs inside a transaction of an `@effect/sql` client, read as Effect's own
 * SQL clients read it (their transaction connection in context). The one place a store asks
 * (decision 0164): SQLite chooses how a transaction begins and retries, PostgreSQL whether an
 * injection row may commit without waiting for the disk (decision 0227).
 *
 * @since 0.1.0
 * @category transactions
 */
export const isOpen: Effect.Effect<boolean> = Effect.map(
  Effect.serviceOption(SqlClient.TransactionConnection),
  Option.isSome
)
