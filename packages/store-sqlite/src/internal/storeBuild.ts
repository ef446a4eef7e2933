/**
 * How the SQLite promotion, session and telemetry stores are built: over the ambient SQL client,
 * once their migrations have run, with one mapping of a failed statement to the store's failure.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { StoreFailure } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { causeOf } from "./sqliteErrors.js"

/** The store `body` builds over the client, after `migrate`; `failure` reports a full disk as `StorageFull`. */
export const build = <A, F, E>(
  migrate: Effect.Effect<unknown, E, SqlClient.SqlClient>,
  Failure: StoreFailure.FailureClass<F>,
  body: (sql: SqlClient.SqlClient, failure: StoreFailure.Failing<F>) => A
): Effect.Effect<A, E, SqlClient.SqlClient> => {
  const failure = StoreFailure.failing(Failure, (error) => causeOf(error, error.message))
  return Effect.zipRight(migrate, Effect.map(SqlClient.SqlClient, (sql) => body(sql, failure)))
}
