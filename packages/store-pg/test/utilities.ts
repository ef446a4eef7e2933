import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { PgDatabase } from "@engram/store-pg"
import * as Effect from "effect/Effect"

/** Runs `f` with a one-connection client on `url` (in `schema`, when given), then closes it. */
export const withSql = <A>(
  url: string,
  f: (sql: SqlClient.SqlClient) => Effect.Effect<A, SqlError>,
  schema?: string
): Effect.Effect<A, SqlError> =>
  Effect.provide(Effect.flatMap(SqlClient.SqlClient, f), PgDatabase.layer({ url, schema, maxConnections: 1 }))

/** Drops `schema` and everything in it; dies if the server refuses. */
export const dropSchema = (url: string, schema: string): Effect.Effect<void> =>
  Effect.orDie(withSql(url, (sql) => Effect.asVoid(sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))))
