/**
 * `npm run bench -- recall --data PATH [options]` — `--help` lists them; the protocol is in
 * `docs/benchmarks.md`.
 *
 * Evidence recall on LoCoMo (long-term conversational memory QA; each question names the dialogue
 * turns that hold its evidence). Every turn of every conversation becomes one memory record
 * (`"<speaker>: <text>"`, plus the shared photo's caption), scoped to its conversation
 * (`project:locomo-<n>`); each question (categories 1–4: single-hop, multi-hop, temporal,
 * open-domain; category 5, adversarial questions without evidence, is left out) is asked with its
 * conversation's scope, as the runtime passes it. evidence recall@k is the share of a question's
 * evidence turns among the top k, averaged over questions.
 *
 * Engines, on the same records and questions: `MemoryStore.search` on SQLite, layerMemory and (with
 * `--pg`) PostgreSQL; unpruned FTS5 bm25 over all the question's tokens (the ranking before query
 * planning); minisearch (BM25+, OR of the terms, its own tokenizer) as a lexical peer; and
 * `ContextProjection.project` on SQLite with `recallLimit` k — the evidence that reaches the
 * projected context — plus the share at default settings.
 *
 * The data set is not part of this repository: fetch it yourself (see docs/benchmarks.md) and pass
 * the path of `locomo10.json` (or a directory of per-conversation JSON files) with `--data` or
 * `ENGRAM_LOCOMO`.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { Bm25, ContextProjection, IdGenerator, MemoryStore, SearchPlan, SearchTokenizer } from "@engram/core"
import { PgDatabase, PgMemoryStore } from "@engram/store-pg"
import { SqliteMemoryStore, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import MiniSearch from "minisearch"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fmt, machine, option, table, writeJson } from "../lib/benchKit.js"

export const USAGE = `usage: npm run bench -- recall --data PATH [options]

  --data PATH       LoCoMo's locomo10.json, or a directory of per-conversation JSON files
                    (default: $ENGRAM_LOCOMO); see docs/benchmarks.md for how to get it
  --pg [url]        also measure PostgreSQL (url, or ENGRAM_PG_URL)
  --json FILE       write every figure as JSON
  --neighbours      only the conversation-neighbour sweep: project() at default settings with
                    each neighbourWindow of --windows and neighbourShed before-hits/with-hit,
                    evidence share on the tuning and held-out halves (decision 0090)
  --windows LIST    the sweep's windows (default 0,1,2,3)
  --shares          only each ranking change's share: MemoryStore.search (layerMemory) with the
                    changes of issue #19 added one at a time, R@k on both halves
  --help            this text`

const KS = [5, 10, 20, 50] as const
const MAX_K = 50

interface Turn {
  readonly id: string
  readonly content: string
  readonly scope: string
  /** The session the turn was said in, and where: what a runtime records for a conversation. */
  readonly position: { readonly thread: string; readonly turn: number }
}

interface Question {
  readonly text: string
  readonly scope: string
  readonly evidence: ReadonlyArray<string>
}

type Conversation = Record<string, unknown>

const idOf = (conversation: string, diaId: string) => `locomo-${conversation}-${diaId.replace(":", "-")}`

/** Reads LoCoMo in either shape: one array of samples, or one file per conversation. */
const load = (path: string): { turns: Array<Turn>; questions: Array<Question> } => {
  const samples: Array<{ name: string; conversation: Conversation; qa: ReadonlyArray<Record<string, unknown>> }> = []
  const files = NodeFs.statSync(path).isDirectory()
    ? NodeFs.readdirSync(path).filter((f) => f.endsWith(".json")).sort().map((f) => NodePath.join(path, f))
    : [path]
  for (const file of files) {
    const data = JSON.parse(NodeFs.readFileSync(file, "utf8")) as unknown
    if (Array.isArray(data)) {
      data.forEach((sample: Record<string, unknown>, i) =>
        samples.push({
          name: String(sample.sample_id ?? i).replace(/[^A-Za-z0-9]/g, ""),
          conversation: sample.conversation as Conversation,
          qa: sample.qa as ReadonlyArray<Record<string, unknown>>
        })
      )
    } else {
      const sample = data as Record<string, unknown>
      samples.push({
        name: NodePath.basename(file, ".json").replace(/[^A-Za-z0-9]/g, ""),
        conversation: sample,
        qa: sample.qa as ReadonlyArray<Record<string, unknown>>
      })
    }
  }
  const turns: Array<Turn> = []
  const questions: Array<Question> = []
  for (const { conversation, name, qa } of samples) {
    const scope = `project:locomo-${name}`
    const known = new Set<string>()
    for (const [key, value] of Object.entries(conversation)) {
      if (!/^session_\d+$/.test(key) || !Array.isArray(value)) continue
      const thread = `locomo-${name}-${key}`
      for (const [position, turn] of (value as ReadonlyArray<Record<string, unknown>>).entries()) {
        const caption = typeof turn.blip_caption === "string" ? ` [shares ${turn.blip_caption}]` : ""
        const id = idOf(name, String(turn.dia_id))
        known.add(id)
        turns.push({
          id,
          content: `${String(turn.speaker)}: ${String(turn.text)}${caption}`,
          scope,
          position: { thread, turn: position }
        })
      }
    }
    for (const q of qa) {
      if (Number(q.category) === 5) continue
      const evidence = [...new Set(JSON.stringify(q.evidence ?? []).match(/D\d+:\d+/g) ?? [])]
        .map((d) => idOf(name, d))
        .filter((id) => known.has(id))
      if (evidence.length > 0) questions.push({ text: String(q.question), scope, evidence })
    }
  }
  return { turns, questions }
}

/** Mean over questions of the share of evidence turns among the first k ids. */
const recallAt = (questions: ReadonlyArray<Question>, ranked: ReadonlyArray<ReadonlyArray<string>>, k: number) => {
  let sum = 0
  questions.forEach((q, i) => {
    const top = new Set(ranked[i]!.slice(0, k))
    sum += q.evidence.filter((id) => top.has(id)).length / q.evidence.length
  })
  return sum / questions.length
}

/**
 * The half of the data the ranking parameters were tuned on (decisions 0050, 0051): questions of
 * the even-numbered conversations. The odd-numbered ones are held out.
 */
const tuningHalf = (q: Question): boolean => Number(q.scope.match(/(\d+)$/)?.[1] ?? 0) % 2 === 0

/** R@10 on the tuning half and on the held-out half. */
const byHalf = (questions: ReadonlyArray<Question>, ranked: ReadonlyArray<ReadonlyArray<string>>) => {
  const half = (tuning: boolean) => {
    const picked = questions.flatMap((q, i) => (tuningHalf(q) === tuning ? [i] : []))
    return recallAt(picked.map((i) => questions[i]!), picked.map((i) => ranked[i]!), 10)
  }
  return { tuning: half(true), heldOut: half(false) }
}

/** The evidence share (recall over everything delivered) on the tuning and the held-out half. */
const shareByHalf = (questions: ReadonlyArray<Question>, delivered: ReadonlyArray<ReadonlyArray<string>>) => {
  const half = (tuning: boolean) => {
    const picked = questions.flatMap((q, i) => (tuningHalf(q) === tuning ? [i] : []))
    return recallAt(picked.map((i) => questions[i]!), picked.map((i) => delivered[i]!), Number.MAX_SAFE_INTEGER)
  }
  return { tuning: half(true), heldOut: half(false) }
}

/**
 * The neighbour sweep (decision 0090): `project()` at default settings but for the conversation
 * window and when neighbours are shed, interleaved per variant in one run, with the load.
 */
const neighbourSweep = async (filename: string, questions: ReadonlyArray<Question>, windows: ReadonlyArray<number>) => {
  const variants: ReadonlyArray<Partial<ContextProjection.ProjectionSettings>> = windows.flatMap((neighbourWindow) =>
    neighbourWindow === 0
      ? [{ neighbourWindow }]
      : (["before-hits", "with-hit"] as const).map((neighbourShed) => ({ neighbourWindow, neighbourShed }))
  )
  const rows: Array<Array<string>> = []
  const figures: Array<Record<string, unknown>> = []
  for (const settings of variants) {
    const run = await projectionRanking(filename, questions, undefined, { settings })
    const halves = shareByHalf(questions, run.delivered)
    const all = recallAt(questions, run.delivered, Number.MAX_SAFE_INTEGER)
    const at10 = await projectionRanking(filename, questions, 10, { settings })
    const label = settings.neighbourWindow === 0
      ? "window 0 (off)"
      : `window ${settings.neighbourWindow}, ${settings.neighbourShed}`
    rows.push([
      label,
      `${fmt(100 * halves.tuning, 1)}%`,
      `${fmt(100 * halves.heldOut, 1)}%`,
      `${fmt(100 * all, 1)}%`,
      `${fmt(100 * recallAt(questions, at10.delivered, 10), 1)}%`,
      fmt(run.meanNeighbourLines, 1),
      fmt(run.meanTokens, 0),
      `${run.overBudget} / ${run.overByO200k}`,
      `${fmt(run.p50Millis, 1)} ms`,
      NodeOs.loadavg().map((l) => fmt(l, 1)).join(" ")
    ])
    figures.push({
      settings,
      halves,
      all,
      recallAt10: recallAt(questions, at10.delivered, 10),
      ...run,
      delivered: undefined
    })
  }
  console.log()
  console.log(table(
    [
      "project() at defaults but",
      "share, tuning half",
      "share, held out",
      "share, all",
      "first 10 delivered, recallLimit 10",
      "neighbour lines",
      "mean tokens",
      "over budget (estimator / o200k_base)",
      "p50",
      "load"
    ],
    rows
  ))
  return figures
}

/**
 * Each ranking change's share: `MemoryStore.search` on layerMemory (the same ranking code every
 * backend runs) with the changes of issue #19 added one at a time — exact words and FTS5's fixed
 * k1/b first, then stems, the tuned k1/b and the conversation context (the defaults).
 */
const shareSweep = async (turns: ReadonlyArray<Turn>, questions: ReadonlyArray<Question>) => {
  const off = { neighbourWindow: 0, neighbourWeight: 0 }
  const variants: ReadonlyArray<
    { readonly label: string; readonly language: SearchTokenizer.Language; readonly ranking: Partial<Bm25.Parameters> }
  > = [
    {
      label: "exact words, k1 1.2, b 0.75 (FTS5's), no context",
      language: "none",
      ranking: { k1: 1.2, b: 0.75, ...off }
    },
    { label: "+ Snowball English stems", language: "english", ranking: { k1: 1.2, b: 0.75, ...off } },
    { label: "+ k1 0.3, b 0.25", language: "english", ranking: { k1: 0.3, b: 0.25, ...off } },
    { label: "+ neighbours' scores (defaults)", language: "english", ranking: {} }
  ]
  const rows: Array<Array<string>> = []
  const figures: Array<Record<string, unknown>> = []
  for (const variant of variants) {
    const memory = ManagedRuntime.make(
      Layer.mergeAll(
        MemoryStore.layerMemory.pipe(
          Layer.provide(Layer.succeed(SearchTokenizer.SearchLanguage, variant.language))
        ),
        IdGenerator.sequential("locomo"),
        Bm25.layer(variant.ranking).pipe(Layer.orDie)
      )
    )
    const ranked = await storeRanking(memory, turns, questions)
    await memory.dispose()
    const recall = Object.fromEntries(KS.map((k) => [`@${k}`, recallAt(questions, ranked, k)]))
    const halves = byHalf(questions, ranked)
    rows.push([
      variant.label,
      ...KS.map((k) => `${fmt(100 * recall[`@${k}`]!, 1)}%`),
      `${fmt(100 * halves.tuning, 1)}%`,
      `${fmt(100 * halves.heldOut, 1)}%`
    ])
    figures.push({ ...variant, recall, halves })
  }
  console.log()
  console.log(table(["layerMemory search", ...KS.map((k) => `recall@${k}`), "R@10 tuning half", "R@10 held out"], rows))
  return figures
}

interface EngineRecall {
  readonly engine: string
  readonly recall: Record<string, number>
  readonly halves?: { readonly tuning: number; readonly heldOut: number }
}

const quiet = Logger.minimumLogLevel(LogLevel.Warning)

/** Writes every turn through `MemoryStore.write`, then ranks the questions (see {@link searchRanking}). */
const storeRanking = async (
  runtime: ManagedRuntime.ManagedRuntime<MemoryStore.MemoryStore, unknown>,
  turns: ReadonlyArray<Turn>,
  questions: ReadonlyArray<Question>
) => {
  await runtime.runPromise(Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < turns.length; i += 1_000) {
      yield* store.write(
        turns.slice(i, i + 1_000).map((t) => ({ ...t, kind: "episode" as const, sourceType: "conversation" as const }))
      )
    }
    yield* Effect.flatMap(
      Effect.serviceOption(SqlClient.SqlClient),
      (client) =>
        client._tag === "Some" && process.env.ENGRAM_RECALL_ANALYZE === "1"
          ? Effect.orDie(client.value`ANALYZE`)
          : Effect.void
    )
  }))
  return searchRanking(runtime, questions)
}

/** Each question's top ids through `MemoryStore.search`, within its conversation. */
const searchRanking = (
  runtime: ManagedRuntime.ManagedRuntime<MemoryStore.MemoryStore, unknown>,
  questions: ReadonlyArray<Question>
) =>
  runtime.runPromise(Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const ranked: Array<ReadonlyArray<string>> = []
    for (const q of questions) {
      const result = yield* store.search(q.text, { scopes: [q.scope], deliverable: true, limit: MAX_K })
      ranked.push(result.hits.map((h) => h.record.id))
    }
    return ranked
  }))

/** bm25 over every distinct token of the question, within its conversation: search before planning. */
const unprunedFts5 = (filename: string, questions: ReadonlyArray<Question>) => {
  const db = new Database(filename, { readonly: true })
  const statement = db.prepare(
    `SELECT m.id FROM engram_memories_fts f JOIN engram_memories m ON m.seq = f.rowid
     WHERE engram_memories_fts MATCH ? AND m.scope = ? ORDER BY bm25(engram_memories_fts) LIMIT ${MAX_K}`
  )
  const ranked = questions.map((q) => {
    const tokens = SearchTokenizer.distinctTokens(q.text)
    return tokens.length === 0
      ? []
      : (statement.all(tokens.map((t) => `"${t}"`).join(" OR "), q.scope) as Array<{ id: string }>).map((r) => r.id)
  })
  db.close()
  return ranked
}

const minisearchRanking = (turns: ReadonlyArray<Turn>, questions: ReadonlyArray<Question>) => {
  const index = new MiniSearch<Turn>({ fields: ["content"], storeFields: ["scope"], idField: "id" })
  index.addAll(turns.map(({ content, id, scope }) => ({ content, id, scope }) as Turn))
  return questions.map((q) =>
    index.search(q.text, { filter: (r) => r.scope === q.scope }).slice(0, MAX_K).map((r) => String(r.id))
  )
}

/** The ids `project()` delivered for each question, with `recallLimit` as given (default when undefined). */
const projectionRanking = (
  filename: string,
  questions: ReadonlyArray<Question>,
  recallLimit: number | undefined,
  options: {
    readonly pruningForced?: boolean
    readonly settings?: Partial<ContextProjection.ProjectionSettings>
  } = {}
) =>
  Effect.gen(function*() {
    const projection = yield* ContextProjection.make({
      ...ContextProjection.defaultSettings,
      ...options.settings,
      ...(recallLimit === undefined ? {} : { recallLimit })
    })
    const delivered: Array<ReadonlyArray<string>> = []
    const millis: Array<number> = []
    let neighbourLines = 0
    let chars = 0
    let tokens = 0
    let overBudget = 0
    let overByO200k = 0
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
      chars += projected.budget.usedChars
      tokens += projected.budget.usedTokens
      const { budgetChars, budgetTokens, usedChars, usedTokens } = projected.budget
      if ((budgetTokens !== null && usedTokens > budgetTokens) || (budgetChars !== null && usedChars > budgetChars)) {
        overBudget++
      }
      // Counted whole by gpt-tokenizer itself, not by the estimator that held the budget.
      if (budgetTokens !== null && countTokens(projected.text, { disallowedSpecial: new Set() }) > budgetTokens) {
        overByO200k++
      }
    }
    millis.sort((a, b) => a - b)
    return {
      delivered,
      p50Millis: millis[Math.floor(millis.length / 2)] ?? 0,
      meanNeighbourLines: neighbourLines / questions.length,
      meanChars: chars / questions.length,
      meanTokens: tokens / questions.length,
      overBudget,
      overByO200k
    }
  }).pipe(
    // As in the "pruning forced" search row: plan as a large store would (the projection's own
    // recallPruneShare still applies).
    Effect.provide(options.pruningForced === true ? SearchPlan.layer({ minPrunedPostings: 0 }) : Layer.empty),
    Effect.provide(
      Layer.merge(SqliteTelemetryStore.layerSqlite, SqlitePromotionStore.layerSqlite).pipe(
        Layer.provideMerge(SqliteMemoryStore.layer({ filename }))
      )
    ),
    Effect.provide(quiet),
    Effect.runPromise
  )

const pgUrl = (args: ReadonlyArray<string>): string | undefined => {
  const index = args.indexOf("--pg")
  if (index < 0) return undefined
  const next = args[index + 1]
  const url = next !== undefined && !next.startsWith("--") ? next : process.env.ENGRAM_PG_URL
  if (url === undefined || url === "") {
    throw new Error("--pg needs a postgres:// URL, after the flag or in ENGRAM_PG_URL")
  }
  return url
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const data = option(args, "--data") ?? process.env.ENGRAM_LOCOMO
  if (args.includes("--help") || data === undefined) {
    console.log(USAGE)
    if (data === undefined && !args.includes("--help")) process.exitCode = 1
    return
  }
  const { questions, turns } = load(data)
  console.log(`recall bench: ${turns.length} turns, ${questions.length} questions with evidence (categories 1-4)`)
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-recall-"))
  const filename = NodePath.join(directory, "locomo.db")
  if (args.includes("--neighbours")) {
    try {
      const sqlite = ManagedRuntime.make(
        Layer.mergeAll(SqliteMemoryStore.layer({ filename }), IdGenerator.sequential("locomo"), quiet)
      )
      // Writes every turn (and ranks no question).
      await storeRanking(sqlite, turns, [])
      await sqlite.dispose()
      const windows = (option(args, "--windows") ?? "0,1,2,3").split(",").map(Number)
      const figures = await neighbourSweep(filename, questions, windows)
      console.log(
        `\nTuning half: the even-numbered conversations (${questions.filter(tuningHalf).length} questions); ` +
          `held out: the odd-numbered ones (${questions.filter((q) => !tuningHalf(q)).length}).`
      )
      console.log(`${machine()}.`)
      writeJson(option(args, "--json"), { bench: "recall-neighbours", figures })
    } finally {
      NodeFs.rmSync(directory, { recursive: true, force: true })
    }
    return
  }
  if (args.includes("--shares")) {
    NodeFs.rmSync(directory, { recursive: true, force: true })
    const figures = await shareSweep(turns, questions)
    console.log(
      `\nTuning half: the even-numbered conversations (${questions.filter(tuningHalf).length} questions); ` +
        `held out: the odd-numbered ones (${questions.filter((q) => !tuningHalf(q)).length}).`
    )
    console.log(`${machine()}.`)
    writeJson(option(args, "--json"), { bench: "recall-shares", figures })
    return
  }
  const results: Array<EngineRecall> = []
  const add = (engine: string, ranked: ReadonlyArray<ReadonlyArray<string>>) =>
    results.push({
      engine,
      recall: Object.fromEntries(KS.map((k) => [`@${k}`, recallAt(questions, ranked, k)])),
      halves: byHalf(questions, ranked)
    })
  let share:
    | {
      readonly evidenceShare: number
      readonly evidenceShareHalves: { readonly tuning: number; readonly heldOut: number }
      readonly evidenceSharePruningForced: number
      readonly meanChars: number
      readonly meanTokens: number
      readonly overBudget: number
      readonly overByO200k: number
      readonly projections: number
    }
    | undefined
  try {
    const sqlite = ManagedRuntime.make(
      Layer.mergeAll(SqliteMemoryStore.layer({ filename }), IdGenerator.sequential("locomo"), quiet)
    )
    add("MemoryStore.search — SQLite", await storeRanking(sqlite, turns, questions))
    await sqlite.dispose()
    // LoCoMo's 5,882 records are too few for the planner to prune anything (a token is pruned
    // only when over 256 records hold it): this row plans as a large store would, so the
    // planner's cost in recall shows.
    const forced = ManagedRuntime.make(
      Layer.mergeAll(SqliteMemoryStore.layer({ filename }), SearchPlan.layer({ minPrunedPostings: 0 }), quiet)
    )
    add(
      `MemoryStore.search — SQLite, pruning forced (> ${100 * SearchPlan.defaultOptions.maxDocumentShare}% of records)`,
      await searchRanking(forced, questions)
    )
    await forced.dispose()
    const memory = ManagedRuntime.make(Layer.mergeAll(MemoryStore.layerMemory, IdGenerator.sequential("locomo")))
    add("MemoryStore.search — layerMemory", await storeRanking(memory, turns, questions))
    await memory.dispose()
    const pg = pgUrl(args)
    if (pg !== undefined) {
      const schema = PgDatabase.temporarySchemaName("engram_recall")
      const postgres = ManagedRuntime.make(Layer.mergeAll(
        PgMemoryStore.layerPg.pipe(Layer.provideMerge(PgDatabase.layerClient({ url: pg, schema, maxConnections: 2 }))),
        IdGenerator.sequential("locomo"),
        quiet
      ))
      try {
        add("MemoryStore.search — PostgreSQL", await storeRanking(postgres, turns, questions))
      } finally {
        await postgres.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
        )
        await postgres.dispose()
      }
    }
    add("FTS5 bm25, all tokens (unpruned)", unprunedFts5(filename, questions))
    add("minisearch 7 (BM25+, OR)", minisearchRanking(turns, questions))
    const projected: Record<string, number> = {}
    let projectedHalves: EngineRecall["halves"]
    for (const k of KS) {
      const { delivered } = await projectionRanking(filename, questions, k)
      projected[`@${k}`] = recallAt(questions, delivered, k)
      if (k === 10) projectedHalves = byHalf(questions, delivered)
    }
    results.push({
      engine: "project() — SQLite, recallLimit k",
      recall: projected,
      ...(projectedHalves !== undefined ? { halves: projectedHalves } : {})
    })
    const atDefaults = await projectionRanking(filename, questions, undefined)
    const prunedAtDefaults = await projectionRanking(filename, questions, undefined, { pruningForced: true })
    share = {
      evidenceShare: recallAt(questions, atDefaults.delivered, Number.MAX_SAFE_INTEGER),
      evidenceShareHalves: shareByHalf(questions, atDefaults.delivered),
      evidenceSharePruningForced: recallAt(questions, prunedAtDefaults.delivered, Number.MAX_SAFE_INTEGER),
      meanChars: atDefaults.meanChars,
      meanTokens: atDefaults.meanTokens,
      overBudget: atDefaults.overBudget + prunedAtDefaults.overBudget,
      overByO200k: atDefaults.overByO200k + prunedAtDefaults.overByO200k,
      projections: 2 * questions.length
    }
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
  console.log()
  console.log(table(
    ["engine", ...KS.map((k) => `recall@${k}`), "R@10 tuning half", "R@10 held out"],
    results.map((r) => [
      r.engine,
      ...KS.map((k) => `${fmt(100 * r.recall[`@${k}`]!, 1)}%`),
      r.halves === undefined ? "–" : `${fmt(100 * r.halves.tuning, 1)}%`,
      r.halves === undefined ? "–" : `${fmt(100 * r.halves.heldOut, 1)}%`
    ])
  ))
  console.log(
    `\nTuning half: the even-numbered conversations (the ranking parameters were chosen on them, ` +
      `decisions 0050-0051); held out: the odd-numbered ones, ${questions.filter((q) => !tuningHalf(q)).length} ` +
      `questions.`
  )
  if (share !== undefined) {
    console.log(
      `\nproject() at default settings: ${fmt(100 * share.evidenceShare, 1)}% of evidence turns reach the projected ` +
        `context (tuning half ${fmt(100 * share.evidenceShareHalves.tuning, 1)}%, held out ${
          fmt(100 * share.evidenceShareHalves.heldOut, 1)
        }%; ${fmt(100 * share.evidenceSharePruningForced, 1)}% with pruning forced); mean projection ` +
        `${fmt(share.meanTokens, 0)} tokens (${
          fmt(share.meanChars, 0)
        } chars); of ${share.projections} projections, ${share.overBudget} over budget by the default ` +
        `estimator's own count, ${share.overByO200k} by o200k_base counting the whole text.`
    )
  }
  console.log(`${machine()}.`)
  writeJson(option(args, "--json"), {
    bench: "recall",
    turns: turns.length,
    questions: questions.length,
    results,
    share
  })
}
