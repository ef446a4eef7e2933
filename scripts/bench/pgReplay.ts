/**
 * `npm run bench -- pgReplay --schema NAME [--queries N] [--pg url]` — PostgreSQL search next to
 * its single-statement BM25 floor (`scripts/lib/pgFloor.ts`) on a schema the store bench already
 * loaded with 1M records in issue #39's layout (`store --sizes 1000000 --pg --tenants`, while it
 * runs: the store bench drops its schema at the end). The same generated questions and short
 * queries as the store bench (same seeds), the first N of each, interleaved query by query; also
 * how many answers have the same top 10 as the floor, how many statements each search of the store
 * sends and how many rows its ranked statement returns. For a 1M or 10M PostgreSQL figure without
 * waiting for the SQLite floors of a full store bench pass; `--load --bulk` loads 10M records in
 * minutes (`scripts/lib/pgBulkLoad.ts`).
 */
import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { MemoryStore } from "@engram/core"
import { PgDatabase, PgMemoryStore, PgPromotionStore, PgTelemetryStore } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { type Recorded, recording } from "../../test/lib/recordingSql.js"
import { fmt, interleave, machine, option, percentile, pgUrl, table } from "../lib/benchKit.js"
import { ALWAYS_ON, generateQuestions, generateShortQueries, generateTurns, withAlwaysOn } from "../lib/conversation.js"
import { pgFloor } from "../lib/pgFloor.js"
import { loaded } from "../lib/pgSchema.js"

export const USAGE =
  `usage: npm run bench -- pgReplay --schema NAME [--queries N] [--records N] [--load [--bulk]] [--workloads LIST]
  [--pg url]

  --load       when the schema is empty or missing, first write the records into it through
               MemoryStore.write (the projection bench's data in issue #39's layout: generateTurns(N, 1,
               "tenants"), ${ALWAYS_ON} always-on) and analyse it; it is kept for the next run
  --bulk       with --load: the same rows with the indexes and statistics built once at the end
               (scripts/lib/pgBulkLoad.ts): 10M records in minutes rather than hours
  --workloads  only these of scoped,short,unscoped (questions scoped, short queries, questions unscoped)`

const SCOPES = ["global", "project:p3"]
/** The store's ranked statement (the one that reads rows), by its neighbour columns. */
const RANKED = /\bAS position_thread\b/
/** The data: the projection bench's turns in issue #39's layout. */
const SEED = 1
const LAYOUT = "tenants"
const LIMIT = 20

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const schema = option(args, "--schema")
  const url = pgUrl(args)
  if (args.includes("--help") || schema === undefined || url === undefined) {
    console.log(USAGE)
    return
  }
  const n = Number(option(args, "--queries") ?? "60")
  const only = option(args, "--workloads")?.split(",")
  const records = Number(option(args, "--records") ?? "1000000")
  if (args.includes("--load")) {
    const started = performance.now()
    const { reused, runtime: loader } = await loaded(
      url,
      schema,
      records,
      () => withAlwaysOn(generateTurns(records, SEED, LAYOUT)),
      (written) =>
        process.stdout.write(
          `\rloading ${schema}: ${written.toLocaleString("en-US")} records, ${
            fmt((performance.now() - started) / 1000, 0)
          } s`
        ),
      { bulk: args.includes("--bulk") ? { seed: SEED, layout: LAYOUT } : undefined }
    )
    await loader.dispose()
    if (!reused) console.log(`\nloaded ${schema} in ${fmt((performance.now() - started) / 1000, 0)} s; ${machine()}`)
  }
  if (n === 0) return
  // Questions are drawn from every turn (10M of them take minutes): only when a workload asks them.
  const questions = only?.every((name) => name === "short") === true
    ? []
    : generateQuestions(generateTurns(records, SEED, LAYOUT), 200, 42, SCOPES).slice(0, n).map((q) => q.text)
  const shorts = generateShortQueries(200, 43).slice(0, n)
  // The store's statements are recorded (the floor's are not): how many a search sends, and how
  // many rows its ranked statement returns.
  const log: Array<Recorded> = []
  const recorded = Layer.effect(
    SqlClient.SqlClient,
    Effect.flatMap(SqlClient.SqlClient, (raw) => recording(raw, PgClient.makeCompiler(), log))
  )
  const runtime = ManagedRuntime.make(
    PgMemoryStore.layerWithoutMigrations().pipe(
      Layer.provideMerge(Layer.merge(PgPromotionStore.layerWithoutMigrations, PgTelemetryStore.layerWithoutMigrations)),
      Layer.provide(recorded),
      Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  try {
    let searches: Array<ReadonlyArray<Recorded>> = []
    const store = (filtered: boolean) => ({
      name: "PostgreSQL search",
      search: async (q: string) => {
        const first = log.length
        const ids = await runtime.runPromise(Effect.map(
          Effect.flatMap(
            MemoryStore.MemoryStore,
            (s) => s.search(q, filtered ? { scopes: SCOPES, deliverable: true, limit: LIMIT } : { limit: LIMIT })
          ),
          (r) => r.hits.map((h) => h.record.id)
        ))
        searches.push(log.splice(first))
        return ids
      }
    })
    const floor = pgFloor((e) => runtime.runPromise(e))
    await floor.prime([...questions, ...shorts])
    const floorEngine = (filtered: boolean) => ({
      name: "PostgreSQL BM25 floor",
      search: (q: string) => floor.search(q, LIMIT, filtered ? SCOPES : undefined)
    })
    const workloads = [
      ["scoped", questions, true],
      ["short", shorts, false],
      ["unscoped", questions, false]
    ] as const
    for (const [name, queries, filtered] of workloads) {
      if (only !== undefined && !only.includes(name)) continue
      searches = []
      const timings = await interleave([store(filtered), floorEngine(filtered)], queries, 10)
      const floorP50 = percentile(timings[1]!.samples, 50)
      const same = timings[0]!.results.filter((ids, i) =>
        ids.slice(0, 10).join() === timings[1]!.results[i]!.slice(0, 10).join()
      ).length
      const ranked = searches.flatMap((statements) => statements.filter((st) => RANKED.test(st.sql)))
      console.log(`\n${name} (${queries.length} queries; same top 10 as the floor: ${same}); ${machine()}`)
      console.log(
        `store statements a search: mean ${fmt(searches.reduce((n, st) => n + st.length, 0) / searches.length)}, ` +
          `max ${Math.max(...searches.map((st) => st.length))}; rows its ranked statement returned: max ${
            Math.max(...ranked.map((st) => st.rows ?? 0))
          } (limit ${LIMIT})`
      )
      console.log(table(
        ["engine", "p50 ms", "p95 ms", "vs floor"],
        timings.map((e) => [
          e.name,
          fmt(percentile(e.samples, 50), 1),
          fmt(percentile(e.samples, 95), 1),
          `${fmt(percentile(e.samples, 50) / floorP50)}x`
        ])
      ))
    }
  } finally {
    await runtime.dispose()
  }
}
