/**
 * An SQL client that records every statement a store sends (its text and parameters) and passes
 * it on to the client underneath: the EXPLAIN tests plan exactly what the store runs.
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import * as Effect from "effect/Effect"

export interface Recorded {
  readonly sql: string
  readonly params: ReadonlyArray<unknown>
  /** Rows the statement returned, once it has (keyed and array reads). */
  rows?: number
}

const counted = <A>(entry: Recorded, effect: Effect.Effect<ReadonlyArray<A>, SqlError>) =>
  Effect.tap(effect, (rows) => {
    entry.rows = rows.length
  })

const recordingConnection = (
  connection: SqlConnection.Connection,
  log: Array<Recorded>
): SqlConnection.Connection => ({
  execute: (sql, params, transformRows) => {
    const entry: Recorded = { sql, params }
    log.push(entry)
    return counted(entry, connection.execute(sql, params, transformRows))
  },
  executeRaw: (sql, params) => {
    log.push({ sql, params })
    return connection.executeRaw(sql, params)
  },
  executeStream: (sql, params, transformRows) => {
    log.push({ sql, params })
    return connection.executeStream(sql, params, transformRows)
  },
  executeValues: (sql, params) => {
    const entry: Recorded = { sql, params }
    log.push(entry)
    return counted(entry, connection.executeValues(sql, params))
  },
  executeUnprepared: (sql, params, transformRows) => {
    log.push({ sql, params })
    return connection.executeUnprepared(sql, params, transformRows)
  }
})

/** `client` with every statement appended to `log`. */
export const recording = (
  client: SqlClient.SqlClient,
  compiler: Statement.Compiler,
  log: Array<Recorded>
): Effect.Effect<SqlClient.SqlClient> => {
  const acquirer = Effect.map(client.reserve, (connection) => recordingConnection(connection, log))
  return Effect.provide(
    SqlClient.make({ acquirer, transactionAcquirer: acquirer, compiler, spanAttributes: [] }),
    Reactivity.layer
  )
}
