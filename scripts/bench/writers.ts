/**
 * `npm run bench -- writers [options]` — concurrent single-record writers on PostgreSQL, with the
 * search statistics kept in sharded counter rows (decision 0141: a connection adds to shard
 * `pg_backend_pid() % 16`) side by side with the same store whose counting triggers all add to
 * one shard (what one totals row and one row per token would be). Every writer writes records
 * sharing common words ("the", "and"), whose rows are the ones writers would queue on. The two
 * schemas take turns, round by round, with a third whose counting triggers are dropped (what the
 * statistics cost a write); writes per second and p50/p99 per write.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { IdGenerator, MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { fmt, machine, option, percentile, pgUrl, table, writeJson } from "../lib/benchKit.js"
import { generateTurns } from "../lib/conversation.js"

export const USAGE = `usage: npm run bench -- writers --pg [url] [options]

  --writers N       concurrent writers, one connection each (default 8)
  --writes N        writes per writer per round (default 100)
  --rounds N        rounds per layout, alternated (default 3)
  --json FILE       write the figures as JSON`

const open = (url: string, writers: number, name: string) => {
  const schema = PgDatabase.temporarySchemaName(`engram_bench_${name}`)
  const runtime = ManagedRuntime.make(
    PgEngram.layerStores().pipe(
      Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: writers })),
      Layer.provideMerge(IdGenerator.sequential(name)),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  return { schema, runtime }
}

type Runtime = ReturnType<typeof open>["runtime"]

/** One round: `writers` fibers, each writing `writes` single records; per-write times. */
const round = (runtime: Runtime, writers: number, writes: number, offset: number) =>
  runtime.runPromise(Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const turns = generateTurns(writers * writes, offset)
    const times: Array<number> = []
    const start = performance.now()
    yield* Effect.forEach(
      Array.from({ length: writers }, (_, w) => w),
      (w) =>
        Effect.forEach(turns.slice(w * writes, (w + 1) * writes), (turn) =>
          Effect.gen(function*() {
            const begun = performance.now()
            yield* store.write([{ content: turn.input.content, kind: "episode", scope: turn.input.scope }])
            times.push(performance.now() - begun)
          }), { discard: true }),
      { concurrency: "unbounded", discard: true }
    )
    return { seconds: (performance.now() - start) / 1000, times }
  }))

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const url = pgUrl(args)
  if (args.includes("--help") || url === undefined) {
    console.log(USAGE)
    return
  }
  const writers = Number(option(args, "--writers") ?? "8")
  const writes = Number(option(args, "--writes") ?? "100")
  const rounds = Number(option(args, "--rounds") ?? "3")
  const sharded = open(url, writers, "sharded")
  const single = open(url, writers, "single")
  const uncounted = open(url, writers, "uncounted")
  const runtimes = { sharded: sharded.runtime, single: single.runtime, uncounted: uncounted.runtime }
  try {
    await uncounted.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forEach(
        ["insert", "update", "delete"],
        (op) => sql.unsafe(`DROP TRIGGER engram_memories_count_${op} ON engram_memories`),
        { discard: true }
      )))
    // One shard for every writer: the counting functions rewritten with a modulus of 1.
    await single.runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ name: string; body: string }>`
          SELECT p.proname AS name, pg_get_functiondef(p.oid) AS body FROM pg_proc p
          JOIN pg_namespace n ON n.oid = p.pronamespace
          WHERE n.nspname = current_schema() AND p.proname LIKE 'engram_memories_count_%'`
        for (const row of rows) yield* sql.unsafe(row.body.replace(/pg_backend_pid\(\) % 16/, "0"))
      })))
    const figures = {
      sharded: { seconds: 0, times: [] as Array<number> },
      single: { seconds: 0, times: [] as Array<number> },
      uncounted: { seconds: 0, times: [] as Array<number> }
    }
    for (let r = 0; r < rounds; r++) {
      const layouts = ["sharded", "single", "uncounted"] as const
      for (let k = 0; k < layouts.length; k++) {
        const name = layouts[(r + k) % layouts.length]!
        const result = await round(runtimes[name], writers, writes, 10 + r)
        figures[name].seconds += result.seconds
        figures[name].times.push(...result.times)
      }
    }
    const labels = {
      sharded: "16 shards (decision 0141)",
      single: "one shard",
      uncounted: "no statistics kept (floor)"
    }
    const rows = (["sharded", "single", "uncounted"] as const).map((name) => {
      const f = figures[name]
      return [
        labels[name],
        fmt(f.times.length / f.seconds, 0),
        fmt(percentile(f.times, 50), 2),
        fmt(percentile(f.times, 99), 2)
      ]
    })
    console.log(`\n${writers} writers × ${writes} single-record writes × ${rounds} rounds per layout; ${machine()}`)
    console.log(table(["counter rows", "writes/s", "p50 ms", "p99 ms"], rows))
    writeJson(option(args, "--json"), { bench: "writers", writers, writes, rounds, figures: rows, load: machine() })
  } finally {
    for (const { runtime, schema } of [sharded, single, uncounted]) {
      await runtime.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
      )
      await runtime.dispose()
    }
  }
}
