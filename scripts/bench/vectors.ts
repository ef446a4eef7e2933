/**
 * `npm run bench -- vectors [--records N] [--scopes S] [--runs R]` — the embedding tier's costs
 * (issue 19), with the deterministic test embedder (256 dimensions):
 *
 * - **write throughput**: records per second through `MemoryStore.write` (batches of 1,000) on
 *   SQLite without an embedder and with one (each record embedded and its vector stored);
 * - **vector search p50**: `VectorIndex.search` for one scope (N / S records) with the
 *   deliverable filter, on SQLite (sqlite-vec) and in memory, next to the floor: an exact scan
 *   of the same scope's vectors already in a Float32Array in process (no filter, no I/O);
 * - **hybrid search p50**: a whole relevance search (BM25 + vector + fusion) on SQLite.
 *
 * Figures are printed with the load average, measured side by side in one run.
 */
import { Embeddings, MemoryStore } from "@engram/core"
import { SqliteMemoryStore, SqliteVectorIndex } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

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

const time = async (runs: number, body: (i: number) => Promise<unknown>): Promise<number> => {
  const samples: Array<number> = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    await body(i)
    samples.push(performance.now() - started)
  }
  return median(samples)
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log("npm run bench -- vectors [--records 100000] [--scopes 10] [--runs 21]")
    return
  }
  const records = Number(option(args, "--records", "100000"))
  const scopes = Number(option(args, "--scopes", "10"))
  const runs = Number(option(args, "--runs", "21"))
  const embeddings = Embeddings.makeTest()
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-vector-bench-"))
  const inputs = Array.from({ length: records }, (_, i) => ({
    content: contentOf(i),
    kind: "note" as const,
    scope: `project:p${i % scopes}`
  }))
  const writeAll = Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const started = performance.now()
    for (let from = 0; from < records; from += 1_000) yield* store.write(inputs.slice(from, from + 1_000))
    return records / ((performance.now() - started) / 1000)
  })
  const withEmbedder = Layer.succeed(Embeddings.Embeddings, embeddings)
  try {
    console.log(
      `vectors bench: ${records.toLocaleString("en-US")} records in ${scopes} scopes, ` +
        `${embeddings.identity.model} (${embeddings.identity.dimensions} dimensions), p50 of ${runs} runs`
    )
    console.log(`load average at start: ${load()}`)

    const lexicalRate = await Effect.runPromise(
      writeAll.pipe(Effect.provide(SqliteMemoryStore.layer({ filename: NodePath.join(dir, "lexical.db") })))
    )
    const file = NodePath.join(dir, "vectors.db")
    const sqliteLayer = SqliteMemoryStore.layer({ filename: file }).pipe(Layer.provide(withEmbedder))
    const embeddedRate = await Effect.runPromise(writeAll.pipe(Effect.provide(sqliteLayer)))
    console.log(
      `write throughput, SQLite: ${lexicalRate.toFixed(0)} records/s without an embedder, ` +
        `${embeddedRate.toFixed(0)} records/s with the test embedder`
    )

    const scope = "project:p0"
    const queryVectors = await Effect.runPromise(embeddings.embed(queries))
    // The floor: the scope's vectors in one Float32Array, scanned in process.
    const scoped = inputs.map((input, i) => ({ input, i })).filter(({ input }) => input.scope === scope)
    const vectors = await Effect.runPromise(embeddings.embed(scoped.map(({ input }) => input.content)))
    const dims = embeddings.identity.dimensions
    const packed = new Float32Array(vectors.length * dims)
    vectors.forEach((vector, row) => packed.set(vector, row * dims))
    const floor = await time(runs, async (r) => {
      const q = queryVectors[r % queries.length]!
      const best: Array<{ row: number; score: number }> = []
      for (let row = 0; row < vectors.length; row++) {
        let sum = 0
        const base = row * dims
        for (let d = 0; d < dims; d++) sum += packed[base + d]! * q[d]!
        if (best.length < 20 || sum > best[best.length - 1]!.score) {
          best.push({ row, score: sum })
          best.sort((a, b) => b.score - a.score)
          if (best.length > 20) best.pop()
        }
      }
      return best
    })

    const sqlite = await Effect.runPromise(
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const index = yield* SqliteVectorIndex.make
        const vector = yield* Effect.promise(() =>
          time(runs, (r) =>
            Effect.runPromise(
              index.search(embeddings.identity, queryVectors[r % queries.length]!, {
                scopes: [scope],
                deliverable: true
              }, 20)
            ))
        )
        const hybrid = yield* Effect.promise(() =>
          time(
            runs,
            (r) => Effect.runPromise(store.search(queries[r % queries.length]!, { scopes: [scope], deliverable: true }))
          )
        )
        return { vector, hybrid, coverage: yield* index.coverage }
      }).pipe(Effect.provide(sqliteLayer))
    )

    const memory = await Effect.runPromise(
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        for (let from = 0; from < records; from += 1_000) yield* store.write(inputs.slice(from, from + 1_000))
        return yield* Effect.promise(() =>
          time(
            runs,
            (r) => Effect.runPromise(store.search(queries[r % queries.length]!, { scopes: [scope], deliverable: true }))
          )
        )
      }).pipe(Effect.provide(MemoryStore.layerMemory.pipe(Layer.provide(withEmbedder))))
    )

    console.log(`vectors stored: ${sqlite.coverage.embedded} of ${sqlite.coverage.deliverable} deliverable records`)
    console.log(
      "search of one scope (" + scoped.length.toLocaleString("en-US") + " records), top 20 | p50 ms | × floor"
    )
    console.log(`exact-scan floor (in process, Float32Array) | ${floor.toFixed(2)} | 1.00`)
    console.log(
      `SQLite sqlite-vec VectorIndex.search | ${sqlite.vector.toFixed(2)} | ${(sqlite.vector / floor).toFixed(2)}`
    )
    console.log(
      `SQLite hybrid MemoryStore.search (BM25 + vectors) | ${sqlite.hybrid.toFixed(2)} | ${
        (sqlite.hybrid / floor).toFixed(2)
      }`
    )
    console.log(`memory hybrid MemoryStore.search | ${memory.toFixed(2)} | ${(memory / floor).toFixed(2)}`)
    console.log(`load average at end: ${load()}`)
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}
