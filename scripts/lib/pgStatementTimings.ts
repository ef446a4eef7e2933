/**
 * Where a PostgreSQL projection's database time goes, statement by statement (`npm run bench --
 * projection --pg --statements`): the SQLite timings' counterpart (`statementTimings.ts`). The
 * stores' SQL client is wrapped (as the EXPLAIN tests' recording client is): each statement's
 * time — from the call to its rows decoded by the driver, so the round trip and the server's work,
 * plus any wait for a pooled connection — and rows are added to its statement's total for the party
 * running it (`project()`, the naive projector), none while no party is named. Statements are named
 * by what they do (see {@link kindOf}).
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import type * as SqlConnection from "@effect/sql/SqlConnection"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { perProjection, type StatementTime } from "./statementTimings.js"

/** What a statement does, from its text; for one this list does not know, its first words and its order. */
export const kindOf = (source: string): string => {
  const text = source.replace(/\s+/g, " ").trim()
  if (/INSERT INTO "?engram_injection_log"?/i.test(text)) return "injection row"
  if (/\bAS position_thread\b/.test(text)) return "ranked tier (Engram's BM25 in SQL)"
  if (/^SELECT t\.token, coalesce\(\(SELECT sum\(f\.docs\)/.test(text)) return "token frequencies"
  if (/^SELECT coalesce\(sum\(records\), 0\)/.test(text)) return "table totals"
  if (/ORDER BY round\(\(\(CASE WHEN search_vector @@/.test(text)) return "ranked tier (one BM25 statement, top 300)"
  if (/ORDER BY [^ ]*created_at DESC/i.test(text) && /@@/.test(text)) {
    return /"?kind"? (IN|=)/i.test(text) ? "tail tier (newest first), one kind" : "tail tier (newest first)"
  }
  if (/ORDER BY [^ ]*created_at DESC/i.test(text)) return "listing (newest first)"
  if (/^SELECT id, content\b.* WHERE id = ANY\(/.test(text)) return "records by id (past the ranked rows read)"
  const order = /ORDER BY (.{0,40})/i.exec(text)?.[1]
  return order === undefined ? text.slice(0, 60) : `${text.slice(0, 40)} … ORDER BY ${order}`
}

export const make = () => {
  const totals = new Map<string, { ms: number; calls: number; rows: number }>()
  /** The first text and parameters of each statement kind run by a party (for EXPLAIN by hand). */
  const samples = new Map<string, { readonly sql: string; readonly params: ReadonlyArray<unknown> }>()
  let party: string | undefined
  const timed = <A>(
    sql: string,
    params: ReadonlyArray<unknown>,
    effect: Effect.Effect<A, any>
  ): Effect.Effect<A, any> =>
    Effect.suspend(() => {
      const who = party
      if (who === undefined) return effect
      const start = performance.now()
      return Effect.tap(effect, (result) => {
        const kind = kindOf(sql)
        if (!samples.has(kind)) samples.set(kind, { sql, params })
        const key = `${who}\u0000${kind}`
        const total = totals.get(key) ?? { ms: 0, calls: 0, rows: 0 }
        total.ms += performance.now() - start
        total.calls++
        total.rows += Array.isArray(result) ? result.length : 0
        totals.set(key, total)
      })
    })
  const wrap = (connection: SqlConnection.Connection): SqlConnection.Connection => ({
    execute: (sql, params, transformRows) => timed(sql, params, connection.execute(sql, params, transformRows)),
    executeRaw: (sql, params) => timed(sql, params, connection.executeRaw(sql, params)),
    executeStream: (sql, params, transformRows) => connection.executeStream(sql, params, transformRows),
    executeValues: (sql, params) => timed(sql, params, connection.executeValues(sql, params)),
    executeUnprepared: (sql, params, transformRows) =>
      timed(sql, params, connection.executeUnprepared(sql, params, transformRows))
  })
  /** The SQL client underneath, with every statement timed while a party is named. */
  const layer: Layer.Layer<SqlClient.SqlClient, never, SqlClient.SqlClient> = Layer.effect(
    SqlClient.SqlClient,
    Effect.flatMap(SqlClient.SqlClient, (client) => {
      const acquirer = Effect.map(client.reserve, wrap)
      return Effect.provide(
        SqlClient.make({
          acquirer,
          transactionAcquirer: acquirer,
          compiler: PgClient.makeCompiler(),
          spanAttributes: []
        }),
        Reactivity.layer
      )
    })
  )
  return {
    layer,
    /** Names the party whose statements run from now on (`undefined`: none are counted). */
    as: (name: string | undefined) => {
      party = name
    },
    reset: () => totals.clear(),
    /** One text and its parameters per statement kind met so far. */
    samples: () => Object.fromEntries(samples),
    /** Each statement's mean per projection, over `projections`, most time first. */
    perProjection: (projections: number): ReadonlyArray<StatementTime> => perProjection(totals, projections)
  }
}

export type PgStatementTimings = ReturnType<typeof make>
