/**
 * `npm run bench -- recall [options]` — `--help` lists them; the protocol is in `docs/benchmarks.md`.
 *
 * Evidence recall of `MemoryStore.search` on public conversation-memory datasets of different
 * shapes (`scripts/lib/datasets`: LoCoMo, BEAM at 128K and 500K tokens a conversation), each stored
 * the two ways a user would write it — one record per turn as `"<speaker>: <text>"`, with and
 * without its place in the conversation — and searched within the question's conversation.
 *
 * **Only held-out figures.** Every ranking parameter (BM25's k1 and b, the conversation context,
 * the planner's pruning share; with an embedder, the fusion's weights and depths) is chosen for a
 * dataset on the *other* datasets (`scripts/lib/crossValidation.ts`, decisions 0150 and 0151): the
 * grid is replayed in process, the setting chosen on the others, and that dataset's figures are
 * then measured with it through the stores themselves. Raw FTS5, FTS5 with its porter stemmer and
 * minisearch run at their own defaults beside Engram.
 *
 * With `--embedder local` the same is done for hybrid search with `@engram/embedder-local`; its
 * vectors are cached on disk (`--vector-cache`), and `--sample name=N` embeds only N conversations
 * of a dataset (drawn with `--seed`), every engine then measured on that sample.
 *
 * The data sets are not part of this repository: see `scripts/lib/datasets` for where to get them.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import {
  Bm25,
  ContextProjection,
  Embeddings,
  IdGenerator,
  MemoryStore,
  SearchPlan,
  SearchTokenizer
} from "@engram/core"
import { LocalEmbeddings } from "@engram/embedder-local"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fmt, machine, option, pgUrl, table, writeJson } from "../lib/benchKit.js"
import * as CrossValidation from "../lib/crossValidation.js"
import * as Datasets from "../lib/datasets/index.js"
import * as FusionReplay from "../lib/fusionReplay.js"
import * as Peers from "../lib/lexicalPeers.js"
import * as Replay from "../lib/rankingReplay.js"
import * as VectorCache from "../lib/vectorCache.js"

export const USAGE = `usage: npm run bench -- recall [options]

${Datasets.USAGE}
  --pg [url]        also measure PostgreSQL (url, or ENGRAM_PG_URL)
  --embedder local  also measure hybrid search with @engram/embedder-local
  --vector-cache DIR  where the embedder's vectors are kept between runs
                    (default: $ENGRAM_VECTOR_CACHE, else <tmp>/engram-vector-cache)
  --sample LIST     name=N,...: with --embedder, embed only N conversations of that dataset
                    (drawn with --seed, default 42); every engine is then measured on them
  --check-replay    also rank every question with the in-process replay the parameters are chosen
                    with, and count the questions whose top 10 differs from layerMemory's
  --json FILE       write every figure as JSON
  --neighbours      only the projection's conversation-neighbour sweep on LoCoMo (decision 0090):
                    project() at default settings with each neighbourWindow of --windows and
                    neighbourShed before-hits/with-hit, on LoCoMo's even (tuning) and odd (held-out)
                    conversations
  --windows LIST    the sweep's windows (default 0,1,2,3)
  --help            this text`

const KS = [5, 10, 50] as const
const MAX_K = 50

const quiet = Logger.minimumLogLevel(LogLevel.Warning)
const pct = (x: number) => `${fmt(100 * x, 1)}%`

type Ranked = ReadonlyArray<ReadonlyArray<string>>

/** Writes a dataset's records the `variant` way through `MemoryStore.write`, 1,000 a call. */
const writeAll = (dataset: Datasets.Dataset, variant: Datasets.Variant) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const records = Datasets.records(dataset, variant)
    for (let i = 0; i < records.length; i += Replay.WRITE_BATCH) {
      yield* store.write(records.slice(i, i + Replay.WRITE_BATCH))
    }
  })

/** Each question's top `limit` ids through `MemoryStore.search`, within its conversation, with `tuning`. */
const searchAll = (dataset: Datasets.Dataset, limit: number, tuning: SearchPlan.SearchTuning) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const ranked: Array<ReadonlyArray<string>> = []
    for (const q of dataset.questions) {
      const result = yield* store.search(q.text, { scopes: [q.scope], deliverable: true, limit, ...tuning })
      ranked.push(result.hits.map((h) => h.record.id))
    }
    return ranked
  })

/** The ranking settings of one held-out dataset as the tuning every search of the run carries. */
const tuningOf = (setting: CrossValidation.Setting, fusion?: SearchPlan.FusionOptions): SearchPlan.SearchTuning => ({
  ranking: setting.bm25,
  plan: CrossValidation.plannerFor(setting),
  ...(fusion === undefined ? {} : { fusion })
})

/** Writes then searches `dataset` on the store `store` builds, each search carrying `setting` (and `fusion`) as its tuning. */
const measureStore = async (
  store: Layer.Layer<MemoryStore.MemoryStore, unknown>,
  dataset: Datasets.Dataset,
  variant: Datasets.Variant,
  setting: CrossValidation.Setting,
  limits: ReadonlyArray<number> = [MAX_K],
  fusion?: SearchPlan.FusionOptions
): Promise<ReadonlyArray<Ranked>> => {
  const runtime = ManagedRuntime.make(
    Layer.mergeAll(store, IdGenerator.sequential(`${dataset.name}-${variant}`), quiet)
  )
  try {
    await runtime.runPromise(writeAll(dataset, variant))
    const out: Array<Ranked> = []
    for (const limit of limits) out.push(await runtime.runPromise(searchAll(dataset, limit, tuningOf(setting, fusion))))
    return out
  } finally {
    await runtime.dispose()
  }
}

/** A PostgreSQL memory store in a schema of its own, dropped when the layer is released. */
const pgStore = (url: string) => {
  const schema = PgDatabase.temporarySchemaName("engram_recall_ranking")
  return Layer.scopedDiscard(
    Effect.addFinalizer(() =>
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).pipe(
        Effect.orDie
      )
    )
  ).pipe(
    Layer.provideMerge(PgEngram.layerStores()),
    Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 }))
  )
}

/** The dataset restricted to `n` of its conversations, drawn with `seed`. */
const sampleConversations = (dataset: Datasets.Dataset, n: number | undefined, seed: number): Datasets.Dataset => {
  if (n === undefined) return dataset
  const scopes = [...new Set(dataset.turns.map((t) => t.scope))]
  const kept = new Set(Datasets.sample(scopes, n, seed))
  return {
    ...dataset,
    turns: dataset.turns.filter((t) => kept.has(t.scope)),
    questions: dataset.questions.filter((q) => kept.has(q.scope))
  }
}

const samplesOf = (args: ReadonlyArray<string>): Readonly<Record<string, number>> =>
  Object.fromEntries(
    (option(args, "--sample") ?? "").split(",").filter((s) => s.includes("=")).map((s) => {
      const [name, n] = s.split("=")
      return [name!.trim(), Number(n)]
    })
  )

interface Row {
  readonly dataset: string
  readonly variant: Datasets.Variant | "-"
  readonly engine: string
  readonly recall: Record<string, number>
}

const recallRow = (
  dataset: Datasets.Dataset,
  variant: Row["variant"],
  engine: string,
  byLimit: ReadonlyArray<readonly [number, Ranked]>
): Row => ({
  dataset: dataset.name,
  variant,
  engine,
  recall: Object.fromEntries(
    KS.map((k) => {
      // R@k from the smallest search that asked for at least k hits.
      const ranked = byLimit.filter(([limit]) => limit >= k).sort((a, b) => a[0] - b[0])[0]?.[1]
      return [`@${k}`, ranked === undefined ? Number.NaN : Datasets.recallAt(dataset.questions, ranked, k)]
    })
  )
})

/** The texts the stores and the searches give the embedder for a dataset. */
const vectorsOf = (dataset: Datasets.Dataset, embeddings: Embeddings.Service) =>
  Effect.gen(function*() {
    const turnTexts = dataset.turns.map((t) =>
      SearchTokenizer.searchableText({ content: Datasets.contentOf(t), tags: [] })
    )
    const turns = new Map<string, Float32Array>()
    for (let i = 0; i < turnTexts.length; i += 256) {
      const vectors = yield* embeddings.embed(turnTexts.slice(i, i + 256))
      vectors.forEach((v, j) => turns.set(dataset.turns[i + j]!.id, v))
    }
    const questions = yield* embeddings.embed(dataset.questions.map((q) => Embeddings.queryText(q.text)))
    return { turns, questions } satisfies FusionReplay.DatasetVectors
  })

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const datasets = Datasets.fromArgs(args)
  if (datasets.length === 0) {
    console.log(USAGE)
    process.exitCode = 1
    return
  }
  if (args.includes("--neighbours")) {
    const locomo = datasets.find((d) => d.name === "locomo")
    if (locomo === undefined) throw new Error("--neighbours runs on LoCoMo: pass --locomo PATH")
    await neighbourSweep(locomo, (option(args, "--windows") ?? "0,1,2,3").split(",").map(Number), args)
    return
  }
  for (const d of datasets) {
    console.log(
      `${d.name}: ${d.source}; ${d.turns.length} turns in ${new Set(d.turns.map((t) => t.scope)).size} conversations ` +
        `(~${
          fmt(Datasets.meanConversationTokens(d) / 1000, 0)
        }k tokens each), ${d.questions.length} questions with evidence`
    )
  }
  const rows: Array<Row> = []

  // 1. The peers, at their own defaults.
  const floor: Record<string, number> = {}
  for (const d of datasets) {
    const raw = Peers.rawFts5(d, MAX_K)
    floor[d.name] = Datasets.recallAt(d.questions, raw, 10)
    rows.push(recallRow(d, "-", "raw FTS5 (unicode61, bm25)", [[MAX_K, raw]]))
    rows.push(recallRow(d, "-", "FTS5 porter (bm25)", [[MAX_K, Peers.porterFts5(d, MAX_K)]]))
    rows.push(recallRow(d, "-", "minisearch 7 (BM25+, OR)", [[MAX_K, Peers.minisearch(d, MAX_K)]]))
  }

  // 2. Keyword parameters, leave-one-dataset-out.
  const prepared = datasets.map(Replay.prepare)
  const started = performance.now()
  const grid = CrossValidation.evaluateGrid(prepared)
  console.log(
    `\nkeyword grid: ${grid.settings.length} settings replayed on ${datasets.length} datasets × 2 ways ` +
      `in ${fmt((performance.now() - started) / 1000, 0)} s`
  )
  const folds = datasets.length > 1
    ? CrossValidation.leaveOneOut(grid, datasets, floor)
    : (() => {
      throw new Error("leave-one-dataset-out needs at least two datasets")
    })()
  for (const fold of folds) {
    console.log(
      `  ${fold.dataset}: chosen on ${fold.trainedOn.join(" + ")} → ${
        CrossValidation.describeSetting(fold.chosen.setting)
      } (worst training margin over raw FTS5 ${fmt(100 * fold.chosen.worst, 1)} points)`
    )
  }
  const all = CrossValidation.choose(grid, grid.datasets, floor)
  console.log(
    `  the shipped defaults are chosen the same way on all of them: ${CrossValidation.describeSetting(all.setting)} ` +
      `(core: k1 ${Bm25.defaultParameters.k1}, b ${Bm25.defaultParameters.b}, window ${Bm25.defaultParameters.neighbourWindow}, ` +
      `weight ${Bm25.defaultParameters.neighbourWeight}, prune > ${
        100 * SearchPlan.defaultOptions.maxDocumentShare
      }%, ` +
      `idf^${SearchPlan.defaultOptions.idfPower})`
  )

  // 3. The stores, each dataset with the setting chosen on the others.
  const pg = pgUrl(args)
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-recall-"))
  let file = 0
  const mismatches: Array<string> = []
  try {
    for (const [i, d] of datasets.entries()) {
      const setting = folds[i]!.chosen.setting
      for (const variant of Datasets.VARIANTS) {
        const [memory] = await measureStore(MemoryStore.layerMemory, d, variant, setting)
        rows.push(recallRow(d, variant, "Engram keyword — layerMemory", [[MAX_K, memory!]]))
        const filename = NodePath.join(directory, `${file++}.db`)
        const [sqlite] = await measureStore(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
          d,
          variant,
          setting
        )
        rows.push(recallRow(d, variant, "Engram keyword — SQLite", [[MAX_K, sqlite!]]))
        if (pg !== undefined) {
          const [postgres] = await measureStore(pgStore(pg), d, variant, setting)
          rows.push(recallRow(d, variant, "Engram keyword — PostgreSQL", [[MAX_K, postgres!]]))
        }
        if (args.includes("--check-replay")) {
          const replayed = Replay.rankAll(
            prepared[i]!,
            Replay.collect(prepared[i]!, CrossValidation.plannerFor(setting), 10),
            variant,
            setting.bm25,
            10
          )
          const differ = replayed.filter((ids, q) => ids.join() !== memory![q]!.slice(0, 10).join()).length
          mismatches.push(`${d.name} (${variant}): ${differ} of ${d.questions.length} questions differ in their top 10`)
        }
      }
    }
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }

  // 4. With the local embedder: fusion options leave-one-dataset-out, then the hybrid store.
  const hybrid: Array<Record<string, unknown>> = []
  if (option(args, "--embedder") === "local") {
    const seed = Number(option(args, "--seed") ?? 42)
    const samples = samplesOf(args)
    const sampled = datasets.map((d) => sampleConversations(d, samples[d.name], seed))
    const cacheDirectory = option(args, "--vector-cache") ?? process.env.ENGRAM_VECTOR_CACHE ??
      NodePath.join(NodeOs.tmpdir(), "engram-vector-cache")
    const cache = VectorCache.cached(LocalEmbeddings.identity(), LocalEmbeddings.make(), cacheDirectory)
    try {
      const vectors = await Effect.runPromise(Effect.all(sampled.map((d) => vectorsOf(d, cache.service))))
      console.log(
        `\nlocal embedder (${LocalEmbeddings.identity().model}): ${cache.counts.hits} vectors from the cache, ` +
          `${cache.counts.misses} embedded in ${fmt(cache.counts.encoderMillis / 1000, 0)} s` +
          (Object.keys(samples).length > 0
            ? `; sampled with seed ${seed}: ${JSON.stringify(samples)} conversations`
            : "")
      )
      const preparedSample = sampled.map(Replay.prepare)
      const vectorLists = sampled.map((d, i) => FusionReplay.vectorLists(d, vectors[i]!, 100))
      const fusionGrid = FusionReplay.grid()
      for (const [h, held] of sampled.entries()) {
        const setting = folds[h]!.chosen.setting
        // Each training dataset's keyword lists under the held-out dataset's keyword setting.
        const training = sampled.flatMap((_, i) => (i === h ? [] : [i]))
        const keyword = new Map(training.map((i) => {
          const matches = Replay.collect(preparedSample[i]!, CrossValidation.plannerFor(setting), 100)
          return [
            i,
            Object.fromEntries(
              Datasets.VARIANTS.map((v) => [v, Replay.rankAllScored(preparedSample[i]!, matches, v, setting.bm25, 100)])
            )
          ]
        }))
        let best: { options: SearchPlan.FusionOptions; worst: number; mean: number } | undefined
        for (const options of fusionGrid) {
          const margins: Array<number> = []
          let sum = 0
          for (const i of training) {
            for (const v of Datasets.VARIANTS) {
              const lexical = keyword.get(i)![v]!
              const ids = lexical.map((hits) => hits.map((h) => h.id))
              const base = {
                r5: Datasets.recallAt(sampled[i]!.questions, ids, 5),
                r10: Datasets.recallAt(sampled[i]!.questions, ids, 10)
              }
              const fused = FusionReplay.recallOf(sampled[i]!, lexical, vectorLists[i]!, options)
              margins.push(fused.r10 - base.r10, fused.r5 - base.r5)
              sum += fused.r10 - base.r10
            }
          }
          const worst = Math.min(...margins)
          const mean = sum / (training.length * 2)
          if (
            best === undefined || worst > best.worst + 1e-9 ||
            (Math.abs(worst - best.worst) <= 1e-9 && mean > best.mean)
          ) {
            best = { options, worst, mean }
          }
        }
        const fusion = best!.options
        console.log(
          `  ${held.name}: fusion chosen on ${
            training.map((i) => sampled[i]!.name).join(" + ")
          } → ${fusion.method}, k ${fusion.k}, ` +
            `vector weight ${fusion.vectorWeight}, min similarity ${fusion.minSimilarity}, candidates ${fusion.candidates} ` +
            `(worst training gain over keyword-only at R@5/R@10 ${fmt(100 * best!.worst, 1)} points)`
        )
        const embedded = Layer.succeed(Embeddings.Embeddings, cache.service)
        for (const variant of Datasets.VARIANTS) {
          const [keyword10, keyword50] = await measureStore(MemoryStore.layerMemory, held, variant, setting, [
            10,
            MAX_K
          ])
          const [fused10, fused50] = await measureStore(
            MemoryStore.layerMemoryWithVectors.pipe(Layer.provide(embedded)),
            held,
            variant,
            setting,
            [10, MAX_K],
            fusion
          )
          const label = held === datasets[h] ? "" : ` (sample of ${held.questions.length} questions)`
          const keywordRow = recallRow(held, variant, `Engram keyword — layerMemory${label}`, [[10, keyword10!], [
            MAX_K,
            keyword50!
          ]])
          const fusedRow = recallRow(held, variant, `Engram + local embedder — layerMemory${label}`, [[10, fused10!], [
            MAX_K,
            fused50!
          ]])
          if (label !== "") rows.push(keywordRow)
          rows.push(fusedRow)
          hybrid.push({ dataset: held.name, variant, fusion, keyword: keywordRow.recall, fused: fusedRow.recall })
        }
      }
    } finally {
      cache.close()
    }
  }

  console.log()
  console.log(table(
    ["dataset", "stored", "engine", ...KS.map((k) => `R@${k}`)],
    rows.map((r) => [r.dataset, r.variant, r.engine, ...KS.map((k) => pct(r.recall[`@${k}`]!))])
  ))
  console.log(
    "\nEvery Engram figure is held out: its parameters were chosen on the other datasets (above). " +
      "Stored: with positions (\"positions\"), without (\"no-positions\"); the peers read text only."
  )
  console.log(`\nHeld-out R@10 per dataset (R@5 in brackets for the embedder), next to the peers:\n`)
  console.log(summaryTable(datasets, rows, hybrid))
  for (const line of mismatches) console.log(`replay check: ${line}`)
  console.log(`${machine()}.`)
  writeJson(option(args, "--json"), {
    bench: "recall",
    datasets: datasets.map((d) => ({
      name: d.name,
      source: d.source,
      turns: d.turns.length,
      questions: d.questions.length
    })),
    folds: folds.map((f) => ({ ...f, chosen: { ...f.chosen, setting: f.chosen.setting } })),
    shipped: all.setting,
    rows,
    hybrid
  })
}

/** One line a dataset: the peers' R@10, Engram's held-out keyword R@10 both ways, and the embedder's gain. */
const summaryTable = (
  datasets: ReadonlyArray<Datasets.Dataset>,
  rows: ReadonlyArray<Row>,
  hybrid: ReadonlyArray<Record<string, unknown>>
): string => {
  const at = (dataset: string, engine: string, variant: Row["variant"], k: string) =>
    rows.find((r) => r.dataset === dataset && r.engine === engine && r.variant === variant)?.recall[k] ?? Number.NaN
  const points = (x: number) => `${x >= 0 ? "+" : ""}${fmt(100 * x, 1)}`
  return table(
    [
      "dataset",
      "raw FTS5",
      "FTS5 porter",
      "minisearch",
      "Engram keyword, positions / none",
      "over raw FTS5",
      "local embedder over keyword, R@10 (R@5)"
    ],
    datasets.map((d) => {
      const raw = at(d.name, "raw FTS5 (unicode61, bm25)", "-", "@10")
      const keyword = Datasets.VARIANTS.map((v) => at(d.name, "Engram keyword — layerMemory", v, "@10"))
      const gains = hybrid.filter((h) => h.dataset === d.name).map((h) => {
        const keywordRecall = h.keyword as Record<string, number>
        const fusedRecall = h.fused as Record<string, number>
        return `${points(fusedRecall["@10"]! - keywordRecall["@10"]!)} (${
          points(fusedRecall["@5"]! - keywordRecall["@5"]!)
        })`
      })
      return [
        d.name,
        pct(raw),
        pct(at(d.name, "FTS5 porter (bm25)", "-", "@10")),
        pct(at(d.name, "minisearch 7 (BM25+, OR)", "-", "@10")),
        keyword.map(pct).join(" / "),
        keyword.map((k) => points(k - raw)).join(" / "),
        gains.length === 0 ? "—" : gains.join(" / ")
      ]
    })
  )
}

// ---------------------------------------------------------------------------------------------
// The projection's neighbour sweep on LoCoMo (decision 0090), on its own split: the even-numbered
// conversations are the tuning half, the odd-numbered ones held out.

const tuningHalf = (q: Datasets.Question): boolean => Number(q.scope.match(/(\d+)$/)?.[1] ?? 0) % 2 === 0

const neighbourSweep = async (
  locomo: Datasets.Dataset,
  windows: ReadonlyArray<number>,
  args: ReadonlyArray<string>
) => {
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-recall-"))
  const filename = NodePath.join(directory, "locomo.db")
  try {
    const writer = ManagedRuntime.make(
      Layer.mergeAll(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
        IdGenerator.sequential("locomo"),
        quiet
      )
    )
    await writer.runPromise(writeAll(locomo, "positions"))
    await writer.dispose()
    const variants: ReadonlyArray<Partial<ContextProjection.ProjectionSettings>> = windows.flatMap((neighbourWindow) =>
      neighbourWindow === 0
        ? [{ neighbourWindow }]
        : (["before-hits", "with-hit"] as const).map((neighbourShed) => ({ neighbourWindow, neighbourShed }))
    )
    const share = (delivered: Ranked, tuning: boolean | undefined) => {
      const picked = locomo.questions.flatMap((q, i) => (tuning === undefined || tuningHalf(q) === tuning ? [i] : []))
      return Datasets.recallAt(
        picked.map((i) => locomo.questions[i]!),
        picked.map((i) => delivered[i]!),
        Number.MAX_SAFE_INTEGER
      )
    }
    const rows: Array<Array<string>> = []
    const figures: Array<Record<string, unknown>> = []
    for (const settings of variants) {
      const run = await projectAll(filename, locomo.questions, settings)
      rows.push([
        settings.neighbourWindow === 0
          ? "window 0 (off)"
          : `window ${settings.neighbourWindow}, ${settings.neighbourShed}`,
        pct(share(run.delivered, true)),
        pct(share(run.delivered, false)),
        pct(share(run.delivered, undefined)),
        fmt(run.meanNeighbourLines, 1),
        fmt(run.meanTokens, 0),
        `${fmt(run.p50Millis, 1)} ms`,
        NodeOs.loadavg().map((l) => fmt(l, 1)).join(" ")
      ])
      figures.push({ settings, ...run, delivered: undefined })
    }
    console.log(table(
      [
        "project() at defaults but",
        "share, tuning half",
        "share, held out",
        "share, all",
        "neighbour lines",
        "mean tokens",
        "p50",
        "load"
      ],
      rows
    ))
    console.log(`${machine()}.`)
    writeJson(option(args, "--json"), { bench: "recall-neighbours", figures })
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
}

/** The ids `project()` delivered for each question at default settings but `settings`. */
const projectAll = (
  filename: string,
  questions: ReadonlyArray<Datasets.Question>,
  settings: Partial<ContextProjection.ProjectionSettings>
) =>
  Effect.gen(function*() {
    const projection = yield* ContextProjection.make({ ...ContextProjection.defaultSettings, ...settings })
    const delivered: Array<ReadonlyArray<string>> = []
    const millis: Array<number> = []
    let neighbourLines = 0
    let tokens = 0
    for (const [i, q] of questions.entries()) {
      const started = performance.now()
      const projected = yield* projection.project({
        sessionId: "recall-bench",
        turn: i,
        query: q.text,
        scopes: [q.scope],
        mode: "native"
      })
      millis.push(performance.now() - started)
      neighbourLines += Object.keys(projected.section("recalled_memory")?.neighbours ?? {}).length
      delivered.push(projected.injection.memoryIds)
      tokens += projected.budget.usedTokens
    }
    millis.sort((a, b) => a - b)
    return {
      delivered,
      p50Millis: millis[Math.floor(millis.length / 2)] ?? 0,
      meanNeighbourLines: neighbourLines / questions.length,
      meanTokens: tokens / questions.length
    }
  }).pipe(
    Effect.provide(
      Layer.merge(SqliteTelemetryStore.layer, SqlitePromotionStore.layer).pipe(
        Layer.provideMerge(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))))
      )
    ),
    Effect.provide(quiet),
    Effect.runPromise
  )
