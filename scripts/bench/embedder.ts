/**
 * `npm run bench -- embedder [--turns N] [--writes M] [--queries Q]` — what the local embedder
 * (`@engram/embedder-local`) costs on this machine:
 *
 * - loading it (wall time, and the process's resident memory before and after);
 * - embedding N short chat turns (`scripts/lib/conversation.ts`, a fixed seed: 8-40 words each) in
 *   the embedder's own batches, as a store's writes and `engram embed` do: total time, per turn,
 *   turns per second;
 * - embedding a query (p50 and p95 of Q questions, one at a time, as a search does);
 * - write throughput of a SQLite store with the embedder in its context next to the same store
 *   without one: M records each, written in batches of 100, the two stores alternating batch by
 *   batch (the order swapped every batch), so the machine's drift weighs on both alike.
 *
 * Nothing is cached: every vector is made by the encoder. The load average is printed with the figures.
 */
import { Embeddings, IdGenerator, type MemoryRecord, MemoryStore } from "@engram/core"
import { LocalEmbeddings } from "@engram/embedder-local"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fmt, loadAverage, machine, option, percentile, table } from "../lib/benchKit.js"
import { generateQuestions, generateTurns } from "../lib/conversation.js"

export const USAGE = `usage: npm run bench -- embedder [--turns 10000] [--writes 2000] [--queries 200]`

const megabytes = (bytes: number) => bytes / (1024 * 1024)

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const turns = Number(option(args, "--turns") ?? 10_000)
  const writes = Number(option(args, "--writes") ?? 2_000)
  const queries = Number(option(args, "--queries") ?? 200)
  console.log(`embedder bench: ${turns} turns, ${writes} writes a store, ${queries} queries; load ${loadAverage()}`)

  const rssBefore = process.memoryUsage().rss
  let started = performance.now()
  const embedder = await Effect.runPromise(LocalEmbeddings.make())
  const loadSeconds = (performance.now() - started) / 1000
  // The first call builds the model's kernels: not part of the per-turn cost.
  await Effect.runPromise(embedder.embed(["warm up"]))
  const rssLoaded = process.memoryUsage().rss

  const generated = generateTurns(turns + writes, 42)
  const texts = generated.slice(0, turns).map((t) => t.input.content)
  const meanChars = texts.reduce((sum, t) => sum + t.length, 0) / Math.max(1, texts.length)
  started = performance.now()
  for (let i = 0; i < texts.length; i += 256) await Effect.runPromise(embedder.embed(texts.slice(i, i + 256)))
  const embedSeconds = (performance.now() - started) / 1000
  const loadAfterEmbedding = loadAverage()
  const rssEmbedding = process.memoryUsage().rss

  const sample = generated.slice(0, 2_000)
  const questions = generateQuestions(sample, queries, 7, [...new Set(sample.map((t) => t.input.scope))]).map((q) =>
    q.text
  )
  const queryMillis: Array<number> = []
  for (const q of questions) {
    const at = performance.now()
    await Effect.runPromise(embedder.embed([q]))
    queryMillis.push(performance.now() - at)
  }

  // Writes: two SQLite stores, one keeping vectors over the embedder, batches alternating.
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-embedder-"))
  const quiet = Logger.minimumLogLevel(LogLevel.Warning)
  const store = (name: string, embeddings?: Embeddings.Service) =>
    ManagedRuntime.make(Layer.mergeAll(
      (embeddings === undefined
        ? SqliteEngram.layerStores()
        : SqliteEngram.layerStoresWithVectors().pipe(Layer.provide(Layer.succeed(Embeddings.Embeddings, embeddings))))
        .pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: NodePath.join(directory, `${name}.db`) }))),
      IdGenerator.sequential(name),
      quiet
    ))
  const plain = store("plain")
  const hybrid = store("hybrid", embedder)
  const spent = { plain: 0, hybrid: 0 }
  try {
    const records = generated.slice(turns, turns + writes).map((t) => ({ ...t.input, id: undefined }))
    const write = async (which: "plain" | "hybrid", batch: ReadonlyArray<MemoryRecord.MemoryWriteInput>) => {
      const runtime = which === "plain" ? plain : hybrid
      const at = performance.now()
      await runtime.runPromise(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write(batch)))
      spent[which] += performance.now() - at
    }
    for (let i = 0, round = 0; i < records.length; i += 100, round++) {
      const batch = records.slice(i, i + 100).map(({ id: _id, ...input }) => input)
      const order = round % 2 === 0 ? (["plain", "hybrid"] as const) : (["hybrid", "plain"] as const)
      for (const which of order) await write(which, batch)
    }
  } finally {
    await plain.dispose()
    await hybrid.dispose()
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }

  console.log()
  console.log(table(["what", "figure"], [
    ["load the encoder", `${fmt(loadSeconds, 2)} s`],
    [
      "resident memory: before / loaded / after embedding",
      `${fmt(megabytes(rssBefore), 0)} / ${fmt(megabytes(rssLoaded), 0)} / ${fmt(megabytes(rssEmbedding), 0)} MB`
    ],
    [
      `embed ${turns} short turns (mean ${fmt(meanChars, 0)} chars), batches of ${embedder.batchSize}`,
      `${fmt(embedSeconds, 1)} s`
    ],
    ["  per turn", `${fmt((1000 * embedSeconds) / Math.max(1, turns), 1)} ms`],
    ["  turns per second", fmt(turns / embedSeconds, 1)],
    [
      `embed one query (${queries} questions), p50 / p95`,
      `${fmt(percentile(queryMillis, 50), 1)} / ${fmt(percentile(queryMillis, 95), 1)} ms`
    ],
    [
      `SQLite writes without an embedder (${writes} records, batches of 100)`,
      `${fmt(writes / (spent.plain / 1000), 0)} records/s`
    ],
    [
      `SQLite writes with the local embedder (same records, interleaved)`,
      `${fmt(writes / (spent.hybrid / 1000), 1)} records/s`
    ]
  ]))
  console.log(`load average after embedding: ${loadAfterEmbedding}; ${machine()}.`)
}
