/**
 * `StoreTransaction` over the SQLite client every store of the database shares.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { MemoryStoreError, StoreTransaction } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { causeOf } from "./sqliteErrors.js"

export const layer: Layer.Layer<StoreTransaction.StoreTransaction, never, SqlClient.SqlClient> = Layer.effect(
  StoreTransaction.StoreTransaction,
  Effect.map(SqlClient.SqlClient, (sql) => ({
    run: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | MemoryStoreError.MemoryStoreFailure, R> =>
      Effect.catchAll(
        sql.withTransaction(effect),
        (error): Effect.Effect<never, E | MemoryStoreError.MemoryStoreFailure> =>
          error instanceof SqlError
            ? Effect.fail(
              new MemoryStoreError.MemoryStoreFailure({
                operation: "transaction",
                cause: causeOf(error, error.message)
              })
            )
            : Effect.fail(error)
      )
  }))
)
