/**
 * How the PostgreSQL promotion, session and telemetry stores are built: over the ambient
 * `SqlClient`, once their tables are ready, with one mapping of a failed statement to the store's
 * failure.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { StoreFailure } from "@engram/store-sql"
import * as Effect from "effect/Effect"
import { reasonOf } from "../PgError.js"
import { ensure, run, type StoreMigrations } from "./migrations.js"

/**
 * The store `body` builds over the client: `make` brings its tables up to date first,
 * `makeWithoutMigrations` only checks that they are (no DDL: a read replica, a role without DDL
 * rights). `failure` reports the server's error with its URL redacted (`reasonOf`).
 */
export const build = <A, F>(
  tables: StoreMigrations,
  Failure: StoreFailure.FailureClass<F>,
  body: (sql: SqlClient.SqlClient, failure: StoreFailure.Failing<F>) => A
) => {
  const failure = StoreFailure.failing(Failure, reasonOf)
  const after = <E>(prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>) =>
    Effect.zipRight(prepare, Effect.map(SqlClient.SqlClient, (sql) => body(sql, failure)))
  return { make: after(run(tables)), makeWithoutMigrations: after(ensure(tables)) }
}
