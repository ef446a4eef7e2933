/**
 * `npm run bench -- pgReplay --schema NAME [--queries N] [--pg url]` — PostgreSQL search next to
 * its single-statement BM25 floor (`scripts/lib/pgFloor.ts`) on a schema the store bench already
 * loaded with 1M records in issue #39's layout (`store --sizes 1000000 --pg --tenants`, while it
 * runs: the store bench drops its schema at the end). The same generated questions and short
 * queries as the store bench (same seeds), the first N of each, interleaved query by query; also
 * how many answers have the same top 10 as the floor. For a 1M PostgreSQL figure without waiting
 * for the SQLite floors of a full store bench pass.
 */
import { MemoryStore } from "@engram/core"
import { PgDatabase, PgMemoryStore, PgPromotionStore, PgTelemetryStore } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { fmt, interleave, machine, option, percentile, pgUrl, table } from "../lib/benchKit.js"
import { ALWAYS_ON, generateQuestions, generateShortQueries, generateTurns, withAlwaysOn } from "../lib/conversation.js"
import { pgFloor } from "../lib/pgFloor.js"
import { loaded } from "../lib/pgSchema.js"

export const USAGE = `usage: npm run bench -- pgReplay --schema NAME [--queries N] [--records N] [--load] [--pg url]

  --load   when the schema is empty or missing, first write the records into it through
           MemoryStore.write (the projection bench's data in issue #39's layout: generateTurns(N, 1,
           "tenants"), ${ALWAYS_ON} always-on) and analyse it; it is kept for the next run`

const SCOPES = ["global", "project:p3"]
const LIMIT = 20

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const schema = option(args, "--schema")
  const url = pgUrl(args)
  if (args.includes("--help") || schema === undefined || url === undefined) {
    console.log(USAGE)
    return
  }
  const n = Number(option(args, "--queries") ?? "60")
  const records = Number(option(args, "--records") ?? "1000000")
  const turns = generateTurns(records, 1, "tenants")
  const questions = generateQuestions(turns, 200, 42, SCOPES).slice(0, n).map((q) => q.text)
  const shorts = generateShortQueries(200, 43).slice(0, n)
  if (args.includes("--load")) {
    const started = performance.now()
    const { reused, runtime: loader } = await loaded(
      url,
      schema,
      records,
      () => withAlwaysOn(turns),
      (written) => process.stdout.write(`\rloading ${schema}: ${written.toLocaleString("en-US")} records`)
    )
    await loader.dispose()
    if (!reused) console.log(`\nloaded ${schema} in ${fmt((performance.now() - started) / 1000, 0)} s; ${machine()}`)
  }
  turns.length = 0
  if (n === 0) return
  const runtime = ManagedRuntime.make(
    PgMemoryStore.layerWithoutMigrations().pipe(
      Layer.provideMerge(Layer.merge(PgPromotionStore.layerWithoutMigrations, PgTelemetryStore.layerWithoutMigrations)),
      Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  try {
    const store = (filtered: boolean) => ({
      name: "PostgreSQL search",
      search: (q: string) =>
        runtime.runPromise(Effect.map(
          Effect.flatMap(
            MemoryStore.MemoryStore,
            (s) => s.search(q, filtered ? { scopes: SCOPES, deliverable: true, limit: LIMIT } : { limit: LIMIT })
          ),
          (r) => r.hits.map((h) => h.record.id)
        ))
    })
    const floor = pgFloor((e) => runtime.runPromise(e))
    await floor.prime([...questions, ...shorts])
    const floorEngine = (filtered: boolean) => ({
      name: "PostgreSQL BM25 floor",
      search: (q: string) => floor.search(q, LIMIT, filtered ? SCOPES : undefined)
    })
    const workloads = [
      ["question-shaped, scoped", questions, true],
      ["short", shorts, false],
      ["question-shaped, unscoped", questions, false]
    ] as const
    for (const [name, queries, filtered] of workloads) {
      const timings = await interleave([store(filtered), floorEngine(filtered)], queries, 10)
      const floorP50 = percentile(timings[1]!.samples, 50)
      const same = timings[0]!.results.filter((ids, i) =>
        ids.slice(0, 10).join() === timings[1]!.results[i]!.slice(0, 10).join()
      ).length
      console.log(`\n${name} (${queries.length} queries; same top 10 as the floor: ${same}); ${machine()}`)
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
