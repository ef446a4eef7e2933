/**
 * `npm run bench -- budget [options]` — `--help` lists them; the protocol is in `docs/benchmarks.md`.
 *
 * The budget curve (issue 40): the share of each question's evidence turns that reaches the model's
 * context, per budget (1k–16k o200k_base tokens by default), for three ways of filling the same
 * budget with a dataset's turns (stored one record per turn as `"<speaker>: <text>"`, with and
 * without conversation positions):
 *
 * - **`project()`** at shipped settings, each call with its own `budgetTokens` (decision 0182);
 * - **FTS5 fill**: raw FTS5 (`unicode61`, bm25) top turns for the question, added in rank order,
 *   one turn a line, until the next would not fit;
 * - **most recent turns**: the conversation's last turns, newest first, until the next would not fit.
 *
 * Every text is counted with o200k_base (gpt-tokenizer) as a whole: `over` counts texts over their
 * budget. For `project()` it also prints how much of the budget the text fills when more relevant
 * candidates were left (`budget.recall.stop` is `budget-full`, `cap`, or `search-limit` — which
 * only projections before decision 0229 report: mean and least; `--least N` lists the least filled),
 * the recall rounds a projection ran (mean and most), and the overhead of a recalled line over the
 * turn it carries (line tokens less content tokens, over content tokens; envelope and tags of
 * sections aside).
 */
import { ContextProjection, IdGenerator, MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { fmt, machine, option, table, writeJson } from "../lib/benchKit.js"
import * as Datasets from "../lib/datasets/index.js"
import * as Peers from "../lib/lexicalPeers.js"

export const USAGE = `usage: npm run bench -- budget [options]

${Datasets.USAGE}
  --budgets LIST    token budgets (default 1000,2000,4000,8000,16000)
  --sample N        N questions per dataset, drawn with --seed (default: every question)
  --seed N          the sample's seed (default 42)
  --variants LIST   positions,no-positions (default both)
  --relevance MODE  content-words (default) or search: project() without the relevance step
                    (decision 0180), to measure what the step costs
  --no-baselines    measure project() only
  --least N         print the N least-filled project() texts per budget that stopped with
                    candidates left, with their recall report and shed lines
  --json FILE       write every figure as JSON
  --help            this text`

const quiet = Logger.minimumLogLevel(LogLevel.Warning)
const pct = (x: number) => fmt(100 * x, 1)
/** How deep the FTS5 ranking is read for the fill: more than any budget here holds. */
const FTS_DEPTH = 2_000

interface Row {
  readonly dataset: string
  readonly variant: string
  readonly method: string
  readonly budget: number
  readonly share: number
  readonly meanTokens: number
  readonly over: number
  readonly fill?: number
  readonly leastFill?: number
  readonly fillQuestions?: number
  readonly rounds?: { readonly mean: number; readonly most: number }
  readonly overhead?: number
  readonly stops?: Record<string, number>
}

/** Evidence share of each question's delivered ids (every delivered id counts). */
const shareOf = (questions: ReadonlyArray<Datasets.Question>, delivered: ReadonlyArray<ReadonlyArray<string>>) =>
  Datasets.recallAt(questions, delivered, Number.MAX_SAFE_INTEGER)

/** Turns added in the given order, one a line, while the whole text stays within the budget. */
const fill = (
  order: ReadonlyArray<string>,
  textOf: ReadonlyMap<string, string>,
  budget: number
): { readonly ids: ReadonlyArray<string>; readonly tokens: number } => {
  const ids: Array<string> = []
  let tokens = 0
  for (const id of order) {
    const line = textOf.get(id)!
    // A line's count with its newline is exact for o200k_base joins (decision 0070): check the
    // whole text only when the sum says it fits.
    const cost = countTokens(`${line}\n`)
    if (tokens + cost > budget + 1) break
    ids.push(id)
    tokens += cost
  }
  // The sum bounds the text's count but for the last newline: hold the text itself to the budget.
  let whole = countTokens(ids.map((id) => textOf.get(id)!).join("\n"))
  while (whole > budget) {
    ids.pop()
    whole = countTokens(ids.map((id) => textOf.get(id)!).join("\n"))
  }
  return { ids, tokens: whole }
}

/** A projection that stopped with candidates left, for `--least`. */
interface Filled {
  readonly question: string
  readonly budget: number
  readonly fill: number
  readonly recall: string
  readonly shed: string
}

const projectAll = (
  questions: ReadonlyArray<Datasets.Question>,
  budgets: ReadonlyArray<number>,
  contentOf: ReadonlyMap<string, string>,
  least: Array<Filled>
) =>
  Effect.gen(function*() {
    const projection = yield* ContextProjection.ContextProjection
    const out = new Map<number, {
      delivered: Array<ReadonlyArray<string>>
      tokens: number
      over: number
      fill: number
      leastFill: number
      fillQuestions: number
      rounds: number
      mostRounds: number
      lineTokens: number
      contentTokens: number
      stops: Record<string, number>
    }>()
    for (const budget of budgets) {
      const figures = {
        delivered: [] as Array<ReadonlyArray<string>>,
        tokens: 0,
        over: 0,
        fill: 0,
        leastFill: Number.POSITIVE_INFINITY,
        fillQuestions: 0,
        rounds: 0,
        mostRounds: 0,
        lineTokens: 0,
        contentTokens: 0,
        stops: {} as Record<string, number>
      }
      for (const [i, q] of questions.entries()) {
        const p = yield* projection.project({
          sessionId: "budget-bench",
          turn: i,
          query: q.text,
          scopes: [q.scope],
          mode: "native",
          record: false,
          settings: { budgetTokens: budget }
        })
        const real = countTokens(p.text)
        figures.delivered.push(p.injection.memoryIds)
        figures.tokens += real
        if (real > budget) figures.over++
        const stop = p.budget.recall?.stop ?? "none"
        figures.stops[stop] = (figures.stops[stop] ?? 0) + 1
        // Stops that leave relevant candidates unread (decision 0229): every other one says they ran out.
        if (stop === "budget-full" || stop === "cap" || stop === "search-limit") {
          figures.fill += real / budget
          figures.leastFill = Math.min(figures.leastFill, real / budget)
          figures.fillQuestions++
          const recall = p.budget.recall!
          const recalled = p.section("recalled_memory")
          const shed = p.budget.shed.filter((item) => item.section === "recalled_memory")
          least.push({
            question: q.id,
            budget,
            fill: real / budget,
            recall: `${recall.stop}, ${recall.rounds ?? "?"} rounds, limit ${recall.limit}, ${recall.candidates} ` +
              `candidates (${recall.relevant} relevant), ${recalled?.items ?? 0} lines delivered ` +
              `(${Object.keys(recalled?.neighbours ?? {}).length} neighbours)`,
            shed: `${shed.length} recall lines shed (${shed.filter((item) => item.neighbourOf !== undefined).length} ` +
              `neighbours), longest ${shed.reduce((a, item) => Math.max(a, item.chars), 0)} chars: ` +
              shed.slice(0, 6).map((item) =>
                `${item.ref}${item.neighbourOf === undefined ? "" : ` (of ${item.neighbourOf})`} ${item.chars}`
              ).join(", ")
          })
        }
        const rounds = p.budget.recall?.rounds ?? 0
        figures.rounds += rounds
        figures.mostRounds = Math.max(figures.mostRounds, rounds)
        // Overhead of a recalled line over the turn it carries.
        const recalled = new Set(p.section("recalled_memory")?.memoryIds ?? [])
        const byHandle = new Map<string, string>()
        for (const id of recalled) byHandle.set(p.handleOf(id), id)
        for (const line of p.text.split("\n")) {
          const match = /^- \[([^\]·]+?)(?: · [^\]]*)?\] /.exec(line)
          const id = match === null ? undefined : byHandle.get(match[1]!)
          if (id === undefined) continue
          figures.lineTokens += countTokens(`${line}\n`)
          figures.contentTokens += countTokens(contentOf.get(id)!)
        }
      }
      out.set(budget, figures)
    }
    return out
  })

export const run = async (args: ReadonlyArray<string>) => {
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const budgets = (option(args, "--budgets") ?? "1000,2000,4000,8000,16000").split(",").map(Number)
  const sampleSize = option(args, "--sample") === undefined ? undefined : Number(option(args, "--sample"))
  const seed = Number(option(args, "--seed") ?? 42)
  const variants = (option(args, "--variants")?.split(",") ?? Datasets.VARIANTS) as ReadonlyArray<Datasets.Variant>
  const datasets = Datasets.fromArgs(args)
  const relevance = option(args, "--relevance") === "search" ? "search" as const : "content-words" as const
  const baselines = !args.includes("--no-baselines")
  const leastCount = Number(option(args, "--least") ?? 0)
  const rows: Array<Row> = []
  for (const dataset of datasets) {
    const questions = Datasets.sample(dataset.questions, sampleSize, seed)
    const sampled: Datasets.Dataset = { ...dataset, questions }
    console.log(
      `${dataset.name}: ${dataset.turns.length} turns, ${questions.length} of ${dataset.questions.length} questions` +
        `, ~${fmt(Datasets.meanConversationTokens(dataset) / 1000, 1)}k tokens a conversation`
    )
    const textOf = new Map(dataset.turns.map((turn) => [turn.id, Datasets.contentOf(turn)]))
    // Baselines: raw FTS5 top turns, and the conversation's newest turns.
    const ranked = baselines ? Peers.rawFts5(sampled, FTS_DEPTH) : []
    const byScope = new Map<string, Array<string>>()
    for (const turn of dataset.turns) byScope.set(turn.scope, [...(byScope.get(turn.scope) ?? []), turn.id])
    for (const budget of baselines ? budgets : []) {
      for (
        const [method, orders] of [
          ["FTS5 fill", ranked],
          ["recent turns", questions.map((q) => [...byScope.get(q.scope)!].reverse())]
        ] as const
      ) {
        const filled = orders.map((order) => fill(order, textOf, budget))
        rows.push({
          dataset: dataset.name,
          variant: "text only",
          method,
          budget,
          share: shareOf(questions, filled.map((f) => f.ids)),
          meanTokens: filled.reduce((a, f) => a + f.tokens, 0) / filled.length,
          over: filled.filter((f) => f.tokens > budget).length
        })
      }
    }
    for (const variant of variants) {
      const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-budget-"))
      const filename = NodePath.join(directory, "store.db")
      try {
        const writer = ManagedRuntime.make(
          Layer.mergeAll(
            SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
            IdGenerator.sequential("budget"),
            quiet
          )
        )
        await writer.runPromise(Effect.gen(function*() {
          const store = yield* MemoryStore.MemoryStore
          const records = Datasets.records(dataset, variant)
          for (let i = 0; i < records.length; i += 1_000) yield* store.write(records.slice(i, i + 1_000))
        }))
        await writer.dispose()
        const started = performance.now()
        const least: Array<Filled> = []
        const figures = await Effect.runPromise(
          projectAll(questions, budgets, textOf, least).pipe(
            Effect.provide(
              Layer.effect(ContextProjection.ContextProjection, ContextProjection.make({ recallRelevance: relevance }))
                .pipe(
                  Layer.provideMerge(
                    Layer.merge(SqliteTelemetryStore.layer, SqlitePromotionStore.layer).pipe(
                      Layer.provideMerge(
                        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename })))
                      )
                    )
                  )
                )
            ),
            Effect.provide(quiet)
          )
        )
        console.log(
          `  project(), ${variant}: ${fmt((performance.now() - started) / 1000, 0)} s for ${
            questions.length * budgets.length
          } projections, ${machine()}`
        )
        for (const budget of budgets) {
          const filled = least.filter((f) => f.budget === budget).sort((a, b) => a.fill - b.fill)
          for (const f of filled.slice(0, leastCount)) {
            console.log(`    ${pct(f.fill)}% of ${f.budget}: ${f.question}: ${f.recall}; ${f.shed}`)
          }
        }
        for (const [budget, f] of figures) {
          rows.push({
            dataset: dataset.name,
            variant,
            method: relevance === "search" ? "project(), no relevance step" : "project()",
            budget,
            share: shareOf(questions, f.delivered),
            meanTokens: f.tokens / questions.length,
            over: f.over,
            fill: f.fillQuestions === 0 ? Number.NaN : f.fill / f.fillQuestions,
            leastFill: f.fillQuestions === 0 ? Number.NaN : f.leastFill,
            fillQuestions: f.fillQuestions,
            rounds: { mean: f.rounds / questions.length, most: f.mostRounds },
            overhead: f.contentTokens === 0 ? Number.NaN : (f.lineTokens - f.contentTokens) / f.contentTokens,
            stops: f.stops
          })
        }
      } finally {
        NodeFs.rmSync(directory, { recursive: true, force: true })
      }
    }
  }

  console.log()
  console.log(table(
    ["dataset", "stored", "method", ...budgets.map((b) => `${b / 1000}k`)],
    [...new Set(rows.map((r) => `${r.dataset}\u0000${r.variant}\u0000${r.method}`))].map((key) => {
      const [dataset, variant, method] = key.split("\u0000") as [string, string, string]
      return [
        dataset,
        variant,
        method,
        ...budgets.map((b) => {
          const row = rows.find((r) =>
            r.dataset === dataset && r.variant === variant && r.method === method && r.budget === b
          )
          return row === undefined ? "-" : pct(row.share)
        })
      ]
    })
  ))
  console.log("\nevidence share (%) per budget (o200k_base tokens)\n")
  console.log(table(
    [
      "dataset",
      "stored",
      "method",
      "budget",
      "mean tokens",
      "over",
      "fill when candidates left (least)",
      "rounds (most)",
      "line overhead",
      "recall stops"
    ],
    rows.map((r) => [
      r.dataset,
      r.variant,
      r.method,
      String(r.budget),
      fmt(r.meanTokens, 0),
      String(r.over),
      r.fill === undefined ? "" : `${pct(r.fill)}% (${pct(r.leastFill ?? Number.NaN)}%) of ${r.fillQuestions}`,
      r.rounds === undefined ? "" : `${fmt(r.rounds.mean, 2)} (${r.rounds.most})`,
      r.overhead === undefined ? "" : `${pct(r.overhead)}%`,
      r.stops === undefined ? "" : Object.entries(r.stops).map(([k, v]) => `${k} ${v}`).join(", ")
    ])
  ))
  console.log(`\n${machine()}.`)
  writeJson(option(args, "--json"), { bench: "budget", budgets, sample: sampleSize ?? null, seed, relevance, rows })
}
