/**
 * `npm run bench -- search [options]` — `--help` lists them.
 *
 * The projection's recall search alone, next to its floor: `MemoryStore.search` on SQLite with the
 * request a projection sends (the runtime's scopes, projected delivery policies, deliverable, up
 * to 300 hits, pruned at 3%), interleaved query by query with the projection bench's floor (FTS5
 * top-300 by bm25 over the pruned tokens, joined to the request's scopes, rows read). Question-shaped
 * queries and 1–3-word ones. The store is the projection bench's data (the store bench's turns),
 * kept in `--file` between runs so iterating on the search does not rewrite 100,000 records. Each p50
 * ratio is given by wall time and by the process's CPU time (steadier when other work shares the cores).
 */
import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as NodeFs from "node:fs"
import { fmt, loadAverage, option, percentile, table } from "../lib/benchKit.js"
import { generateQuestions, generateShortQueries, generateTurns } from "../lib/conversation.js"
import { scopedTopK } from "../lib/ftsFloor.js"
import { RUNTIME_SCOPES } from "./store.js"

export const USAGE = `usage: npm run bench -- search [options]

  --file PATH       the store (written with --size records when missing; default /tmp/engram-search-100000.db)
  --size N          records to write into a new store (default 100000)
  --queries N       queries per workload (default 200)
  --help            this text`

const LIMIT = 300

/** CPU milliseconds (user + system) this process spent since `since`: steadier than wall time on a loaded machine. */
const cpuMillis = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1_000
}
const SHARE = 0.03
const WRITE_BATCH = 1_000

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const size = Number(option(args, "--size") ?? "100000")
  const filename = option(args, "--file") ?? `/tmp/engram-search-${size}.db`
  const queryCount = Number(option(args, "--queries") ?? "200")
  const turns = generateTurns(size, 1)
  const fresh = !NodeFs.existsSync(filename)
  const workloads = [
    ["question", generateQuestions(turns, queryCount, 42, RUNTIME_SCOPES).map((q) => q.text)],
    ["short", generateShortQueries(queryCount, 43)]
  ] as const
  const rows: Array<Array<string>> = []
  await Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    if (fresh) {
      const inputs = turns.map(({ input }) => ({ ...input, deliveryPolicy: "retrieved" as const }))
      for (let i = 0; i < inputs.length; i += WRITE_BATCH) yield* store.write(inputs.slice(i, i + WRITE_BATCH))
    }
    const floor = scopedTopK(filename, SHARE)
    const search = (query: string) =>
      store.search(query, {
        scopes: RUNTIME_SCOPES,
        deliveryPolicies: ["always", "retrieved"],
        deliverable: true,
        limit: LIMIT,
        plan: { maxDocumentShare: SHARE }
      })
    for (const [workload, queries] of workloads) {
      floor.prime(queries)
      for (const query of queries.slice(0, 20)) {
        yield* search(query)
        floor.search(query, RUNTIME_SCOPES, LIMIT)
      }
      const times: Array<number> = []
      const floorTimes: Array<number> = []
      const cpu: Array<number> = []
      const floorCpu: Array<number> = []
      let hits = 0
      for (const [i, query] of queries.entries()) {
        const timeStore = Effect.gen(function*() {
          const start = performance.now()
          const used = process.cpuUsage()
          hits += (yield* search(query)).hits.length
          times.push(performance.now() - start)
          cpu.push(cpuMillis(used))
        })
        const timeFloor = Effect.sync(() => {
          const start = performance.now()
          const used = process.cpuUsage()
          floor.search(query, RUNTIME_SCOPES, LIMIT)
          floorTimes.push(performance.now() - start)
          floorCpu.push(cpuMillis(used))
        })
        if (i % 2 === 0) yield* timeStore
        yield* timeFloor
        if (i % 2 === 1) yield* timeStore
      }
      rows.push([
        workload,
        fmt(percentile(times, 50), 2),
        fmt(percentile(times, 95), 2),
        fmt(percentile(floorTimes, 50), 2),
        fmt(percentile(times, 50) / percentile(floorTimes, 50), 2),
        fmt(percentile(cpu, 50) / percentile(floorCpu, 50), 2),
        fmt(hits / queries.length, 0)
      ])
    }
    floor.close()
  }).pipe(
    Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename })))),
    Logger.withMinimumLogLevel(LogLevel.Error),
    Effect.runPromise
  )
  console.log(
    table(["workload", "search p50 ms", "search p95 ms", "floor p50 ms", "search / floor", "by CPU time", "hits"], rows)
  )
  console.log(`\n${size.toLocaleString("en-US")} records in ${filename}; load average ${loadAverage()}`)
}
