/**
 * Every statement the SQLite memory store runs, planned by SQLite against a 100,000-row table
 * (issue #39): none may scan the memory table without an index. The store runs over a client that
 * records its statements (`test/lib/recordingSql.ts`); each one is then planned with its own
 * parameters (`EXPLAIN QUERY PLAN`).
 */
import * as SqlClient from "@effect/sql/SqlClient"
import * as Statement from "@effect/sql/Statement"
import { expect, it } from "@effect/vitest"
import { IdGenerator } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Recorded, recording } from "../../../test/lib/recordingSql.js"
import { exerciseStore, EXPLAIN_ROWS, fillColumns as c } from "../../../test/lib/storeStatements.js"

/** Statements with a plan worth reading: reads and writes of rows, not transaction control or DDL. */
const planned = (statement: Recorded) => /^\s*(SELECT|WITH|UPDATE|DELETE|INSERT)\b/i.test(statement.sql)

/** A plan step that reads the memory table row by row, through no index. */
const fullScan = (detail: string) => /^SCAN (engram_memories|m)(\s|$)/.test(detail) && !/USING/.test(detail)

it.effect(
  "no statement of the SQLite store scans the memory table without an index at 100k rows",
  () =>
    Effect.gen(function*() {
      const raw = yield* SqlClient.SqlClient
      const log: Array<Recorded> = []
      const client = yield* recording(raw, Statement.makeCompilerSqlite(), log)
      const storeLayer = SqliteEngram.layerStores().pipe(
        Layer.provide(Layer.succeed(SqlClient.SqlClient, client)),
        Layer.provideMerge(IdGenerator.sequential("explain"))
      )
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.build(storeLayer)
        const i = "seq"
        yield* raw.unsafe(
          `WITH RECURSIVE n(seq) AS (SELECT 1 UNION ALL SELECT seq + 1 FROM n WHERE seq < ${EXPLAIN_ROWS})
        INSERT INTO engram_memories (seq, id, content, kind, tags, source_type, scope, delivery_policy, review_state,
          created_at, search_length, thread, turn, write_turn)
        SELECT seq, ${c.id(i, "sqlite")}, 'record ' || seq, ${c.kind(i)}, '[]', 'operator', ${c.scope(i, "/")},
          ${c.delivery(i)}, ${c.review(i)}, 1700000000000 + seq * 1000, 4, ${c.thread(i, "/")}, ${c.turn(i)},
          ${c.writeTurn(i, "/")}
        FROM n`
        )
        yield* raw.unsafe(
          `INSERT INTO engram_memories_fts (rowid, tokens) SELECT seq, ${c.tokens(i)} FROM engram_memories`
        )
        yield* raw.unsafe(
          `UPDATE engram_memory_totals SET records = ${EXPLAIN_ROWS}, search_length = ${4 * EXPLAIN_ROWS}`
        )
        yield* raw.unsafe("ANALYZE")
        log.length = 0
        yield* Effect.provide(exerciseStore, storeLayer)
      }))
      const statements = log.filter(planned)
      // The exercise reaches the memory table through many statements (a guard against a recorder
      // that stops recording and makes this test pass on nothing).
      expect(statements.filter((s) => s.sql.includes("engram_memories")).length).toBeGreaterThan(25)
      const scans: Array<string> = []
      // The ranked statements, and how each reads its matches' rows: through the search-rows index
      // alone (decision 0203), never the wide rows of the table.
      const rankedReads: Array<string> = []
      for (const statement of statements) {
        const steps = yield* raw.unsafe<{ detail: string }>(
          `EXPLAIN QUERY PLAN ${statement.sql}`,
          statement.params as Array<unknown>
        )
        const bad = steps.filter((step) => fullScan(step.detail))
        if (bad.length > 0) {
          scans.push(`${bad.map((s) => s.detail).join("; ")} :: ${statement.sql.replace(/\s+/g, " ").slice(0, 300)}`)
        }
      }
      expect(scans).toEqual([])
      // The store never runs ANALYZE: its files have no statistics, and without them SQLite would
      // read each match's row by rowid unless the statement names the index. Planned so.
      yield* raw.unsafe("DELETE FROM sqlite_stat1")
      yield* raw.unsafe("ANALYZE sqlite_schema")
      for (const statement of statements.filter((s) => /\bAS score\b/.test(s.sql) && /\bMATCH\b/.test(s.sql))) {
        const steps = yield* raw.unsafe<{ detail: string }>(
          `EXPLAIN QUERY PLAN ${statement.sql}`,
          statement.params as Array<unknown>
        )
        rankedReads.push(
          steps.some((step) => /^SEARCH m USING COVERING INDEX engram_memories_search \(seq=\?/.test(step.detail))
            ? "covering"
            : steps.map((step) => step.detail).join("; ")
        )
      }
      expect(rankedReads.length).toBeGreaterThan(0)
      expect(rankedReads.filter((read) => read !== "covering")).toEqual([])
      // A neighbour read seeks each range through its own index: a written thread's (thread,
      // turn), the write order's (scope, write_turn) — never a whole scope (decision 0233).
      const neighbourReads = statements.filter((s) => /write_turn BETWEEN/.test(s.sql))
      expect(neighbourReads.length).toBeGreaterThan(0)
      for (const statement of neighbourReads) {
        const steps = yield* raw.unsafe<{ detail: string }>(
          `EXPLAIN QUERY PLAN ${statement.sql}`,
          statement.params as Array<unknown>
        )
        const plan = steps.map((step) => step.detail).join("; ")
        expect(plan).toContain("INDEX engram_memories_write_order (scope=? AND write_turn>? AND write_turn<?)")
        expect(plan).toContain("INDEX engram_memories_position (thread=? AND turn>? AND turn<?)")
      }
      const [count] = yield* raw<{ n: number }>`SELECT count(*) AS n FROM engram_memories`
      expect(count!.n).toBeGreaterThan(0.95 * EXPLAIN_ROWS)
    }).pipe(Effect.provide(SqliteDatabase.layer({ filename: ":memory:" }))),
  120_000
)
