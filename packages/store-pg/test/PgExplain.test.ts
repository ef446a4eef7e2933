/**
 * Every statement the PostgreSQL memory store runs, planned by PostgreSQL against a 100,000-row
 * table (issue #39): none may read the memory table with a sequential scan. The store runs over a
 * client that records its statements (`test/lib/recordingSql.ts`); each one is then explained
 * with its own parameters (`EXPLAIN (FORMAT JSON)`, a custom plan for those values).
 */
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { IdGenerator } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type Recorded, recording } from "../../../test/lib/recordingSql.js"
import { exerciseStore, EXPLAIN_ROWS, fillColumns as c } from "../../../test/lib/storeStatements.js"
import { describePg } from "./pgGate.js"

interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** The relations a plan reads with a sequential scan. */
const sequentialScans = (node: PlanNode): Array<string> => [
  ...(node["Node Type"] === "Seq Scan" && node["Relation Name"] !== undefined ? [node["Relation Name"]] : []),
  ...(node.Plans ?? []).flatMap(sequentialScans)
]

/** Statements with a plan worth reading: reads and writes of rows, not transaction control or DDL. */
const planned = (statement: Recorded) => /^\s*(SELECT|WITH|UPDATE|DELETE|INSERT)\b/i.test(statement.sql)

describePg("PgMemoryStore EXPLAIN", (url) => {
  it.effect(
    "no statement of the store reads the memory table with a sequential scan at 100k rows",
    () =>
      Effect.gen(function*() {
        const raw = yield* SqlClient.SqlClient
        const log: Array<Recorded> = []
        const client = yield* recording(raw, PgClient.makeCompiler(), log)
        const storeLayer = PgEngram.layerStores().pipe(
          Layer.provide(Layer.succeed(SqlClient.SqlClient, client)),
          Layer.provideMerge(IdGenerator.sequential("explain"))
        )
        yield* Effect.scoped(Effect.gen(function*() {
          yield* Layer.build(storeLayer)
          const i = "i"
          yield* raw.unsafe(`INSERT INTO engram_memories (id, content, kind, tags, source_type, scope, delivery_policy,
            review_state, created_at, search_tokens, search_length, thread, turn, write_turn)
          SELECT ${c.id(i, "pg")}, 'record ' || i, ${c.kind(i)}, '[]'::jsonb, 'operator', ${c.scope(i, "/")}, ${
            c.delivery(i)
          },
            ${c.review(i)}, 1700000000000 + i * 1000, ${c.tokens(i)}, 4, ${c.thread(i, "/")}, ${c.turn(i)},
            ${c.writeTurn(i, "/")}
          FROM generate_series(1, ${EXPLAIN_ROWS}) AS i`)
          yield* raw.unsafe("ANALYZE")
          log.length = 0
          yield* Effect.provide(exerciseStore, storeLayer)
        }))
        const statements = log.filter(planned)
        const touching = statements.filter((s) => s.sql.includes("engram_memories"))
        // The exercise reaches the memory table through many statements (a guard against a recorder
        // that stops recording and makes this test pass on nothing).
        expect(touching.length).toBeGreaterThan(25)
        const scans: Array<string> = []
        for (const statement of statements) {
          const [row] = yield* raw.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
            `EXPLAIN (FORMAT JSON) ${statement.sql}`,
            statement.params as Array<unknown>
          )
          const relations = sequentialScans(row!["QUERY PLAN"][0]!.Plan)
          if (relations.includes("engram_memories")) scans.push(statement.sql.replace(/\s+/g, " ").slice(0, 400))
        }
        expect(scans).toEqual([])
        // A neighbour read seeks the write order's ranges through its (scope, write_turn) index and a
        // written thread's through (thread, turn) (decision 0233).
        const neighbourReads = statements.filter((s) => /write_turn BETWEEN/.test(s.sql))
        expect(neighbourReads.length).toBeGreaterThan(0)
        for (const statement of neighbourReads) {
          const [row] = yield* raw.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
            `EXPLAIN (FORMAT JSON) ${statement.sql}`,
            statement.params as Array<unknown>
          )
          const plan = JSON.stringify(row!["QUERY PLAN"])
          expect(plan).toContain("engram_memories_write_order_idx")
          expect(plan).toContain("engram_memories_position_idx")
        }
        // Rows per search: the ranked statements return at most the limit (20) plus the spare (4),
        // however many records match ("v5" alone matches ~1,000; "common" every record).
        const ranked = log.filter((s) => /\bAS position_thread\b/.test(s.sql))
        expect(ranked.length).toBeGreaterThanOrEqual(3)
        expect(ranked.map((s) => s.rows)).toEqual(ranked.map(() => 24))
        // The memory table really is the large one the plans were made for.
        const [count] = yield* raw<{ n: string }>`SELECT count(*) AS n FROM engram_memories`
        expect(Number(count!.n)).toBeGreaterThan(0.95 * EXPLAIN_ROWS)
      }).pipe(Effect.provide(PgDatabase.layerTemporarySchema({ url, maxConnections: 2 }))),
    120_000
  )
})
