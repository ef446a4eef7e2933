/**
 * `npm run bench -- vectors [--records N] [--scopes S] [--runs R] [--pg [url]]` — the embedding
 * tier's costs (issue 19), with the deterministic test embedder (256 dimensions):
 *
 * - **write throughput**: records per second through `MemoryStore.write` (batches of 1,000) on
 *   SQLite without an embedder and with one (each record embedded and its vector stored), and on
 *   PostgreSQL with one (`--pg`);
 * - **vector search p50**: `VectorIndex.search` for one scope (N / S records) with the
 *   deliverable filter, on SQLite (sqlite-vec vec0), PostgreSQL's exact path (`--pg`) and in
 *   memory, next to the floor: an exact scan in process over every record (vectors already in a
 *   Float32Array), applying the same filters — scope, review state, superseded, expiry — before
 *   the top k, and PostgreSQL's own floor: the same similarity expression over a table holding
 *   only the admitted vectors (no filter, no join);
 * - **hybrid search p50**: a whole relevance search (BM25 + vector + fusion) on SQLite and in memory.
 *
 * One record in 20 is rejected after it is embedded, so the filters have something to exclude
 * (through the index's own bookkeeping, not at write time). The timed searches are interleaved
 * run by run, and every figure is printed with the load average.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Embeddings, MemoryQuery, MemoryStore, type VectorIndex } from "@engram/core"
import { PgDatabase, PgEngram, PgVectorIndex } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram, SqliteVectorIndex } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { pgUrl } from "../lib/benchKit.js"

const option = (args: ReadonlyArray<string>, name: string, fallback: string): string => {
  const at = args.indexOf(name)
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const topics = [
  "postgres",
  "deploy",
  "lisbon",
  "coffee",
  "billing",
  "standup",
  "kubernetes",
  "invoice",
  "travel",
  "music"
]
const contentOf = (i: number) =>
  `record ${i}: ${topics[i % topics.length]} notes about ${topics[(i * 7) % topics.length]} and the ${
    topics[(i * 3) % topics.length]
  }ing team, week ${i % 52}`

const queries = ["postgresql setup", "redeploying on tuesday", "invoices for billing", "music while travelling"]

const load = () => NodeOs.loadavg().map((n) => n.toFixed(2)).join(" ")
const quiet = Logger.minimumLogLevel(LogLevel.Error)
const TOP = 20

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log("npm run bench -- vectors [--records 100000] [--scopes 10] [--runs 21] [--pg [url]]")
    return
  }
  const records = Number(option(args, "--records", "100000"))
  const scopes = Number(option(args, "--scopes", "10"))
  const runs = Number(option(args, "--runs", "21"))
  const pg = pgUrl(args)
  const embeddings = Embeddings.makeTest()
  const dims = embeddings.identity.dimensions
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-vector-bench-"))
  const idOf = (i: number) => `r${String(i).padStart(7, "0")}`
  const inputs = Array.from({ length: records }, (_, i) => ({
    id: idOf(i),
    content: contentOf(i),
    kind: "note" as const,
    scope: `project:p${i % scopes}`
  }))
  const rejected = (i: number) => i % 20 === 7
  const scope = "project:p0"
  const filters: MemoryQuery.MemoryFilters = { scopes: [scope], deliverable: true }

  /** Writes every record in batches of 1,000 (timed), then rejects one in 20 (not timed). */
  const writeAll = Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const started = performance.now()
    for (let from = 0; from < records; from += 1_000) yield* store.write(inputs.slice(from, from + 1_000))
    const rate = records / ((performance.now() - started) / 1000)
    for (let i = 0; i < records; i++) if (rejected(i)) yield* store.setReviewState(idOf(i), "rejected")
    return rate
  })
  const withEmbedder = Layer.succeed(Embeddings.Embeddings, embeddings)
  const runtimes: Array<{ dispose: () => Promise<void> }> = []
  try {
    console.log(
      `vectors bench: ${records.toLocaleString("en-US")} records in ${scopes} scopes (1 in 20 rejected), ` +
        `${embeddings.identity.model} (${dims} dimensions), p50 of ${runs} interleaved runs, top ${TOP}`
    )
    console.log(`load average at start: ${load()}`)

    const lexicalDb = ManagedRuntime.make(
      SqliteEngram.layerStores().pipe(
        Layer.provideMerge(SqliteDatabase.layer({ filename: NodePath.join(dir, "lexical.db") }))
      ).pipe(Layer.provideMerge(quiet))
    )
    const lexicalRate = await lexicalDb.runPromise(writeAll)
    await lexicalDb.dispose()
    const sqlite = ManagedRuntime.make(
      SqliteEngram.layerStoresWithVectors().pipe(
        Layer.provideMerge(SqliteDatabase.layer({ filename: NodePath.join(dir, "vectors.db") }))
      ).pipe(
        Layer.provide(withEmbedder),
        Layer.provideMerge(quiet)
      )
    )
    runtimes.push(sqlite)
    const sqliteRate = await sqlite.runPromise(writeAll)
    const sqliteIndex = await sqlite.runPromise(SqliteVectorIndex.make)

    const memory = ManagedRuntime.make(
      MemoryStore.layerMemoryWithVectors.pipe(Layer.provide(withEmbedder), Layer.provideMerge(quiet))
    )
    runtimes.push(memory)
    await memory.runPromise(writeAll)

    let postgres:
      | {
        readonly runtime: ManagedRuntime.ManagedRuntime<MemoryStore.MemoryStore | SqlClient.SqlClient, unknown>
        readonly index: VectorIndex.Service
        readonly rate: number
      }
      | undefined
    if (pg !== undefined) {
      const runtime = ManagedRuntime.make(
        PgEngram.layerStoresWithVectors().pipe(
          Layer.provide(withEmbedder),
          Layer.provideMerge(PgDatabase.layerTemporarySchema({ url: pg, prefix: "engram_vbench", maxConnections: 2 })),
          Layer.provideMerge(quiet)
        )
      )
      runtimes.push(runtime)
      const rate = await runtime.runPromise(writeAll)
      const index = await runtime.runPromise(PgVectorIndex.make)
      // PostgreSQL's floor: only the admitted vectors, in a table of their own.
      await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql.unsafe(
          `CREATE TABLE bench_floor AS SELECT v.id, v.embedding FROM engram_memory_vectors v
           JOIN engram_memories m ON m.id = v.id
           WHERE m.scope = '${scope}' AND m.review_state <> 'rejected' AND m.invalidated_at IS NULL`
        )))
      postgres = { runtime, index, rate }
    }
    console.log(
      `write throughput: SQLite ${lexicalRate.toFixed(0)} records/s without an embedder, ` +
        `${sqliteRate.toFixed(0)} records/s with the test embedder` +
        (postgres === undefined ? "" : `; PostgreSQL ${postgres.rate.toFixed(0)} records/s with the test embedder`)
    )

    // The in-process floor: every record's filter columns in arrays, the scope's vectors in one
    // Float32Array; a row is scored only when the filters admit it.
    const queryVectors = await Effect.runPromise(embeddings.embed(queries))
    const scopeOf = inputs.map((input) => input.scope)
    const reviewOf = inputs.map((_, i) => (rejected(i) ? "rejected" : "pending"))
    const invalidatedOf = inputs.map(() => false)
    const expiresOf = inputs.map(() => Number.POSITIVE_INFINITY)
    const rowOf = new Int32Array(records).fill(-1)
    const inScope = inputs.flatMap((input, i) => (input.scope === scope ? [i] : []))
    inScope.forEach((i, row) => (rowOf[i] = row))
    const vectors = await Effect.runPromise(embeddings.embed(inScope.map((i) => inputs[i]!.content)))
    const packed = new Float32Array(inScope.length * dims)
    vectors.forEach((vector, row) => packed.set(vector, row * dims))
    const now = Date.now()
    const floorSearch = (q: Float32Array): Array<string> => {
      const best: Array<{ i: number; score: number }> = []
      for (let i = 0; i < records; i++) {
        if (
          scopeOf[i] !== scope || reviewOf[i] === "rejected" || invalidatedOf[i] || !(expiresOf[i]! > now)
        ) continue
        const base = rowOf[i]! * dims
        let sum = 0
        for (let d = 0; d < dims; d++) sum += packed[base + d]! * q[d]!
        if (best.length < TOP || sum > best[best.length - 1]!.score) {
          best.push({ i, score: sum })
          best.sort((a, b) => b.score - a.score || a.i - b.i)
          if (best.length > TOP) best.pop()
        }
      }
      return best.map(({ i }) => idOf(i))
    }

    const timings: Record<string, Array<number>> = {}
    const answers: Record<string, Array<ReadonlyArray<string>>> = {}
    const timed = async (name: string, body: () => Promise<ReadonlyArray<string>>) => {
      const started = performance.now()
      const ids = await body()
      ;(timings[name] ??= []).push(performance.now() - started)
      ;(answers[name] ??= []).push(ids)
    }
    for (let r = 0; r < runs; r++) {
      const q = queryVectors[r % queries.length]!
      const text = queries[r % queries.length]!
      const searchHybrid = Effect.flatMap(MemoryStore.MemoryStore, (store) => store.search(text, filters)).pipe(
        Effect.map((result) => result.hits.map((hit) => hit.record.id))
      )
      await timed("floor", () => Promise.resolve(floorSearch(q)))
      await timed(
        "sqlite",
        () =>
          Effect.runPromise(sqliteIndex.search(embeddings.identity, q, filters, TOP)).then((ms) => ms.map((m) => m.id))
      )
      if (postgres !== undefined) {
        const { index, runtime } = postgres
        await timed(
          "pg",
          () => Effect.runPromise(index.search(embeddings.identity, q, filters, TOP)).then((ms) => ms.map((m) => m.id))
        )
        await timed(
          "pg floor",
          () =>
            runtime.runPromise(
              Effect.flatMap(SqlClient.SqlClient, (sql) =>
                sql<{ id: string }>`SELECT id FROM bench_floor v ORDER BY
              (SELECT sum(a * b) FROM unnest(v.embedding, ${`{${Array.from(q).join(",")}}`}::real[]) AS t (a, b)) DESC,
              id LIMIT ${TOP}`)
            ).then((rows) => rows.map((row) => row.id))
        )
      }
      await timed("sqlite hybrid", () => sqlite.runPromise(searchHybrid))
      await timed("memory hybrid", () => memory.runPromise(searchHybrid))
    }

    const coverage = await Effect.runPromise(sqliteIndex.coverage)
    console.log(`SQLite vectors stored: ${coverage.embedded} of ${coverage.deliverable} deliverable records`)
    const floor = median(timings.floor!)
    const agree = (name: string) => {
      const same = answers[name]!.filter((ids, r) => ids.join() === answers.floor![r]!.join()).length
      return `${same}/${runs}`
    }
    console.log(`search of one scope (${inScope.length.toLocaleString("en-US")} records), deliverable, top ${TOP}`)
    console.log("| method | p50 ms | × floor | same top 20 as the floor |")
    console.log("| --- | --- | --- | --- |")
    const row = (label: string, name: string, withAgreement: boolean) => {
      const p50 = median(timings[name]!)
      console.log(
        `| ${label} | ${p50.toFixed(2)} | ${(p50 / floor).toFixed(2)} | ${withAgreement ? agree(name) : "—"} |`
      )
    }
    row("exact-scan floor (in process, filters applied)", "floor", true)
    row("SQLite VectorIndex.search (sqlite-vec vec0)", "sqlite", true)
    if (postgres !== undefined) {
      row("PostgreSQL floor (admitted vectors only, same expression)", "pg floor", true)
      row("PostgreSQL VectorIndex.search (exact)", "pg", true)
      const pgFloor = median(timings["pg floor"]!)
      console.log(`PostgreSQL VectorIndex.search × its own floor: ${(median(timings.pg!) / pgFloor).toFixed(2)}`)
    }
    row("SQLite hybrid MemoryStore.search (BM25 + vectors)", "sqlite hybrid", false)
    row("memory hybrid MemoryStore.search", "memory hybrid", false)
    console.log(`load average at end: ${load()}`)
  } finally {
    for (const runtime of runtimes.reverse()) await runtime.dispose()
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}
