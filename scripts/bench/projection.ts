/**
 * `npm run bench -- projection [options]` — `--help` lists them.
 *
 * Two figure sets.
 *
 * 1. **`project()` latency** on SQLite and, with `--pg`, PostgreSQL: for each size, the store
 *    bench's deterministic data (20 always-on records, as a real store has a handful of standing
 *    instructions rather than 5% of everything) in a fresh temporary file and in a schema (kept and
 *    reused with `--keep-pg`), then `ContextProjection.project` for each query — always-on read,
 *    `newest` prior-session digest, keyword recall (sized by the budget, pruned at 3%), composition
 *    under the default budget (16,000 tokens) and one injection-log row. p50/p95 over the queries,
 *    after a warm-up round, next to issue #39's naive projector of the same job on the same store
 *    (`scripts/lib/naiveProjector.ts`: top 300 with the scope join and the tail tier, each row a
 *    line counted with o200k_base, cut at the budget, one injection-log row), interleaved.
 *    Target: p50 ≤ 1.25× the naive projector at 100k on SQLite and at 1M on both backends. Every
 *    projection's whole text is counted by o200k_base against its budget. The same figures for the
 *    per-conversation workload (`--conversations`, SQLite): generated conversations,
 *    LoCoMo-shaped, each in its own scope with its own questions.
 *
 * 2. **Model-visible tokens per turn** across a scripted session on the first size's store, run by
 *    the native agent loop: what each turn's first model call carried (prefix + history + one
 *    projection), next to what a persist-every-frame design would send — the same session with each
 *    turn's projection stored in the history after that turn's input, so turn k re-sends k−1 old
 *    frames. Tokens are `TokenEstimator` estimates (chars/4) of every text the request carries.
 */
import type * as Prompt from "@effect/ai/Prompt"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  ContextProjection,
  IdGenerator,
  type MemoryRecord,
  MemoryStore,
  ProjectionLayout,
  PromptFragment,
  RoutingPresets,
  SessionStore,
  TokenEstimator
} from "@engram/core"
import { ModelRequest, NativeRuntime, PromptObserver, TokenEstimatorBpe } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { PgDatabase } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  appendChart,
  collectGarbage,
  fmt,
  machine,
  megabytes,
  mermaidBars,
  option,
  percentile,
  pgUrl,
  table,
  writeJson
} from "../lib/benchKit.js"
import {
  ALWAYS_ON,
  generateQuestions,
  generateShortQueries,
  generateTurns,
  type ScopeLayout,
  withAlwaysOn
} from "../lib/conversation.js"
import { NAIVE_LIMIT, type NaiveProjection, pgNaiveProjector, sqliteNaiveProjector } from "../lib/naiveProjector.js"
import { loaded, type PgRuntime } from "../lib/pgSchema.js"
import * as PgStatementTimings from "../lib/pgStatementTimings.js"
import * as StatementTimings from "../lib/statementTimings.js"
import * as StoreTimings from "../lib/storeTimings.js"
import { RUNTIME_SCOPES } from "./store.js"

export const USAGE = `usage: npm run bench -- projection [options]

  --sizes N,N,…     record counts (default 10000,100000)
  --queries N       queries per workload (default 200)
  --turns N         scripted turns for the tokens-per-turn table (default 20; 0 skips it)
  --conversations N generated conversations for the per-conversation workload (default 10; 0 skips it)
  --json FILE       write every figure as JSON
  --chart FILE      append a Mermaid chart of the question-shaped p50s (for docs/benchmarks.md)
  --phases          also time every store call project() makes, and print where its time goes
  --statements      also time every statement project() and the naive projector run, per projection (SQLite:
                    better-sqlite3's execution; PostgreSQL: each statement's round trip through the SQL client)
  --pg [url]        also measure PostgreSQL (url, or ENGRAM_PG_URL) on the same data, beside its naive projector
  --keep-pg PREFIX  with --pg: load each size into schema PREFIX_<layout>_<size> (e.g. PREFIX_tenants_1m)
                    once and keep it; a later run reuses it (default: a temporary schema, dropped)
  --keep-sqlite DIR write each size's SQLite store to DIR/store-<layout>-<size>.db once and keep it; a later
                    run reuses it (default: a temporary file, deleted; 1M records take minutes to write)
  --no-sqlite       with --pg: measure PostgreSQL only (the SQLite store is neither written nor measured)
  --tenants         issue #39's scope layout: 10% global, one project scope per 1,000 records
  --help            this text`

const WRITE_BATCH = 1_000

/** Memory and telemetry stores in one SQLite file. */
const sqliteStores = (filename: string) =>
  Layer.merge(SqliteTelemetryStore.layer, SqlitePromotionStore.layer).pipe(
    Layer.provideMerge(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))))
  )

const quiet = <A, E>(effect: Effect.Effect<A, E>) =>
  effect.pipe(Logger.withMinimumLogLevel(LogLevel.Error), Effect.runPromise)

// ---------------------------------------------------------------------------------------------
// 1. project() latency

/** Where a measured store lives: SQLite (a temporary file) or PostgreSQL (a schema). */
type BackendName = "SQLite" | "PostgreSQL"

interface LatencyFigures {
  readonly backend: BackendName
  readonly records: number
  /** The store bench's question-shaped or short queries, or the per-conversation workload. */
  readonly workload: "question" | "short" | "conversation"
  /** Queries measured (after the warm-up). */
  readonly queries: number
  readonly p50: number
  readonly p95: number
  readonly searchP50: number
  readonly searchP95: number
  readonly meanChars: number
  readonly meanRecalled: number
  readonly meanShed: number
  /** The naive projector of the same job (`scripts/lib/naiveProjector.ts`), interleaved with project(). */
  readonly naiveP50: number
  readonly naiveP95: number
  /** p50 of project() over p50 of the naive projector. */
  readonly ratio: number
  /** Rows the naive projector read, lines it kept under the budget and their o200k_base tokens, per query (mean). */
  readonly naiveRows: number
  readonly naiveLines: number
  readonly naiveTokens: number
  /** project()'s tokens (its budget summary's `usedTokens`, o200k_base), per query (mean): the two outputs' sizes. */
  readonly meanTokens: number
  /** SHA-256 (first 12 hex digits) of every measured projection's text in order: equal digests, equal bytes. */
  readonly outputDigest: string
  /** Projections whose o200k_base count of the whole text exceeded their token budget (should be 0). */
  readonly overBudget: number
  /** chars/4 against o200k_base BPE tokens of each projection: mean of (heuristic - bpe) / bpe. */
  readonly heuristicError: number
  /** The same, mean of the absolute error. */
  readonly heuristicAbsError: number
  /** The process's resident set and V8 heap after loading the store, in MB. */
  readonly rssMb: number
  readonly heapMb: number
  /** The load average when the workload finished. */
  readonly load: string
  /** With `--phases`: project()'s mean, and the mean of each store call it made, per projection. */
  readonly phases?: { readonly meanMs: number; readonly calls: ReadonlyArray<StoreTimings.CallTime> }
  /** With `--statements` (SQLite): each statement's time, executions and rows per projection, by party. */
  readonly statements?: ReadonlyArray<StatementTimings.StatementTime>
}

/** Projections before the measured ones, per workload. */
const WARM_UP = 20

/** One measured request: the query and the scopes it reads. */
interface Asked {
  readonly query: string
  readonly scopes: ReadonlyArray<string>
}

const requestFor = (asked: Asked, turn: number): ContextProjection.ProjectionRequest => ({
  sessionId: "bench-session",
  turn,
  query: asked.query,
  scopes: asked.scopes,
  mode: "native",
  workingState: "goal: answer the operator\nstep: 1",
  skills: [{ name: "search", description: "find documents" }, { name: "deploy", description: "ship a build" }]
})

/** The default projection budget: 8% of a 200k-token window (16,000 tokens). */
const BUDGET_TOKENS = Math.floor(
  (ProjectionLayout.DEFAULT_CONTEXT_WINDOW_TOKENS * ProjectionLayout.DEFAULT_BUDGET_PCT) / 100
)

/** The naive projector of a backend: prime outside the timing, then one projection per call. */
interface Naive {
  readonly prime: (queries: ReadonlyArray<string>) => Promise<void> | void
  readonly project: (query: string, scopes: ReadonlyArray<string>, turn: number) => Promise<NaiveProjection>
  readonly close: () => void
}

/** A store to measure: its stores' layer, its naive projector and (SQLite) its statements' timings. */
interface Backend {
  readonly name: BackendName
  readonly stores: Layer.Layer<ContextProjection.Stores, unknown>
  readonly naive: () => Naive
  readonly statements?: Pick<StatementTimings.StatementTimings, "as" | "reset" | "perProjection"> | undefined
}

const sqliteBackend = (filename: string, statements?: StatementTimings.StatementTimings): Backend => ({
  name: "SQLite",
  stores: sqliteStores(filename),
  statements,
  naive: () => {
    const naive = sqliteNaiveProjector(filename, ContextProjection.DEFAULT_RECALL_PRUNE_SHARE, BUDGET_TOKENS)
    return { ...naive, project: (q, scopes, turn) => Promise.resolve(naive.project(q, scopes, turn)) }
  }
})

const pgBackend = (runtime: PgRuntime, statements?: PgStatementTimings.PgStatementTimings): Backend => ({
  name: "PostgreSQL",
  statements,
  stores: Layer.succeedContext(runtime.runSync(Effect.context<ContextProjection.Stores>())),
  naive: () => ({
    ...pgNaiveProjector((e) => runtime.runPromise(e), ContextProjection.DEFAULT_RECALL_PRUNE_SHARE, BUDGET_TOKENS),
    close: () => {}
  })
})

/**
 * `project()` and, interleaved with it, the recall search alone (the same query and filters,
 * through `MemoryStore.search`) and the naive projector: the order alternates per query, so
 * neither always runs on the cache the other just warmed.
 */
const measure = (
  backend: Backend,
  records: number,
  workloads: ReadonlyArray<readonly [LatencyFigures["workload"], ReadonlyArray<Asked>]>,
  timings: StoreTimings.StoreTimings | undefined
) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    collectGarbage()
    const memory = process.memoryUsage()
    const projection = yield* ContextProjection.make()
    const bpe = yield* TokenEstimatorBpe.make("o200k_base")
    const naive = backend.naive()
    const figures: Array<LatencyFigures> = []
    let turn = 0
    for (const [workload, asked] of workloads) {
      yield* Effect.promise(() => Promise.resolve(naive.prime(asked.map((a) => a.query))))
      // Warm-up on the workload's last queries, measured on the others: recall meets lines it has
      // not counted yet, as a new turn does.
      const warm = Math.min(WARM_UP, Math.floor(asked.length / 2))
      for (const a of asked.slice(asked.length - warm)) {
        yield* projection.project(requestFor(a, turn++))
        yield* Effect.promise(() => naive.project(a.query, a.scopes, turn++))
      }
      const measured = asked.slice(0, asked.length - warm)
      timings?.reset()
      const statements = backend.statements
      statements?.reset()
      const as = (party: string | undefined) => Effect.sync(() => statements?.as(party))
      const times: Array<number> = []
      const naiveTimes: Array<number> = []
      let naiveRows = 0
      let naiveLines = 0
      let naiveTokens = 0
      let projectTokens = 0
      let overBudget = 0
      const searches: Array<number> = []
      let chars = 0
      let recalled = 0
      let shed = 0
      let error = 0
      let absError = 0
      const digest = NodeCrypto.createHash("sha256")
      for (const [i, a] of measured.entries()) {
        const timeSearch = Effect.gen(function*() {
          const start = performance.now()
          const search = store.search(a.query, { scopes: a.scopes, deliverable: true, limit: 20 })
          yield* timings === undefined ? search : timings.untimed(search)
          searches.push(performance.now() - start)
        })
        const naiveTurn = turn++
        const timeNaive = Effect.promise(async () => {
          const start = performance.now()
          statements?.as("naive projector")
          const done = await naive.project(a.query, a.scopes, naiveTurn)
          statements?.as(undefined)
          naiveTimes.push(performance.now() - start)
          naiveRows += done.rows
          naiveLines += done.lines
          naiveTokens += done.tokens
        })
        if (i % 2 === 0) yield* timeSearch
        if (i % 2 === 1) yield* timeNaive
        const start = performance.now()
        yield* as("project()")
        const projected = yield* projection.project(requestFor(a, turn++))
        yield* as(undefined)
        times.push(performance.now() - start)
        if (i % 2 === 1) yield* timeSearch
        if (i % 2 === 0) yield* timeNaive
        digest.update(projected.text).update("\u0000")
        chars += projected.budget.usedChars
        projectTokens += projected.budget.usedTokens
        recalled += projected.section("recalled_memory")?.items ?? 0
        shed += projected.budget.shed.length
        const tokens = bpe.estimate(projected.text)
        const budget = projected.budget.budgetTokens
        if (budget !== null && countO200k(projected.text) > budget) overBudget++
        const heuristic = Math.ceil(projected.text.length / TokenEstimator.CHARS_PER_TOKEN)
        if (tokens > 0) {
          error += (heuristic - tokens) / tokens
          absError += Math.abs(heuristic - tokens) / tokens
        }
      }
      figures.push({
        ...(statements === undefined ? {} : { statements: statements.perProjection(measured.length) }),
        ...(timings === undefined ? {} : {
          phases: {
            meanMs: times.reduce((sum, t) => sum + t, 0) / times.length,
            calls: timings.perProjection(measured.length)
          }
        }),
        backend: backend.name,
        records,
        workload,
        queries: measured.length,
        p50: percentile(times, 50),
        p95: percentile(times, 95),
        naiveP50: percentile(naiveTimes, 50),
        naiveP95: percentile(naiveTimes, 95),
        ratio: percentile(times, 50) / percentile(naiveTimes, 50),
        naiveRows: naiveRows / measured.length,
        naiveLines: naiveLines / measured.length,
        naiveTokens: naiveTokens / measured.length,
        meanTokens: projectTokens / measured.length,
        outputDigest: digest.digest("hex").slice(0, 12),
        overBudget,
        searchP50: percentile(searches, 50),
        searchP95: percentile(searches, 95),
        meanChars: chars / measured.length,
        meanRecalled: recalled / measured.length,
        meanShed: shed / measured.length,
        heuristicError: error / measured.length,
        heuristicAbsError: absError / measured.length,
        rssMb: megabytes(memory.rss),
        heapMb: megabytes(memory.heapUsed),
        load: machine()
      })
    }
    naive.close()
    return figures
  }).pipe(Effect.provide(timedStores(backend.stores, timings)))

/** The stores, each call timed when `timings` is given (one set of stores either way). */
const timedStores = (
  stores: Layer.Layer<ContextProjection.Stores, unknown>,
  timings: StoreTimings.StoreTimings | undefined
) => (timings === undefined ? stores : Layer.merge(stores, timings.around(stores)))

/** The store bench's data at `size` records in `layout`, with a few always-on records. */
const dataFor = (size: number, layout: ScopeLayout, queryCount: number) => {
  // The generated turns are dropped once the questions are drawn and the inputs made.
  const turns = generateTurns(size, 1, layout)
  const asked = (query: string): Asked => ({ query, scopes: RUNTIME_SCOPES })
  return {
    inputs: withAlwaysOn(turns),
    workloads: [
      ["question", generateQuestions(turns, queryCount + WARM_UP, 42, RUNTIME_SCOPES).map((q) => asked(q.text))],
      ["short", generateShortQueries(queryCount + WARM_UP, 43).map(asked)]
    ] as const
  }
}

/** Writes `inputs` into the SQLite store at `filename`, 1,000 at a time. */
const writeSqlite = (filename: string, inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < inputs.length; i += WRITE_BATCH) yield* store.write(inputs.slice(i, i + WRITE_BATCH))
  }).pipe(Effect.provide(sqliteStores(filename)))

/**
 * The store bench's data at `size` records: question-shaped and short queries over the runtime's
 * scopes, measured on SQLite and, with `pg`, on PostgreSQL (a schema loaded once and kept when
 * `pg.keep` names a prefix, else a temporary one).
 */
const benchProject = async (
  filename: string,
  size: number,
  queryCount: number,
  options: {
    readonly layout: ScopeLayout
    readonly timings?: StoreTimings.StoreTimings | undefined
    readonly statements?: StatementTimings.StatementTimings | undefined
    readonly pg?: { readonly url: string; readonly keep: string | undefined } | undefined
    /** `reuse`: the file at `filename` is kept across runs (reused when it holds the data); `false`: no SQLite. */
    readonly sqlite?: { readonly reuse: boolean } | false | undefined
  }
): Promise<Array<LatencyFigures>> => {
  let data: ReturnType<typeof dataFor> | undefined = dataFor(size, options.layout, queryCount)
  const workloads = data.workloads
  const figures: Array<LatencyFigures> = []
  if (options.sqlite !== false) {
    if (options.sqlite?.reuse !== true || sqliteRecords(filename) !== data.inputs.length) {
      NodeFs.rmSync(filename, { force: true })
      await quiet(writeSqlite(filename, data.inputs))
    }
    figures.push(
      ...await quiet(measure(sqliteBackend(filename, options.statements), size, workloads, options.timings))
    )
  }
  if (options.pg !== undefined) {
    const { keep, url } = options.pg
    const schema = keep === undefined
      ? PgDatabase.temporarySchemaName("engram_bench_projection")
      : `${keep}_${options.layout}_${sizeLabel(size).toLowerCase()}`
    const inputs = data.inputs
    data = undefined
    const pgStatements = options.statements === undefined ? undefined : PgStatementTimings.make()
    const { runtime } = await loaded(url, schema, size, () => inputs, undefined, { around: pgStatements?.layer })
    try {
      figures.push(...await quiet(measure(pgBackend(runtime, pgStatements), size, workloads, options.timings)))
      if (pgStatements !== undefined) pgSamples[`${size}`] = pgStatements.samples()
    } finally {
      if (keep === undefined) {
        await runtime.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
        )
      }
      await runtime.dispose()
    }
  }
  return figures
}

/** Records in the SQLite store at `file` (0 when there is none). */
const sqliteRecords = (file: string): number => {
  if (!NodeFs.existsSync(file)) return 0
  const db = new Database(file, { readonly: true })
  try {
    return (db.prepare("SELECT count(*) AS n FROM engram_memories").get() as { n: number }).n
  } catch {
    return 0
  } finally {
    db.close()
  }
}

/** With `--pg --statements`: one text and its parameters per PostgreSQL statement kind, by size (in `--json`). */
const pgSamples: Record<string, unknown> = {}

const sizeLabel = (n: number) => (n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1_000}k`)

/** Turns per generated conversation (LoCoMo's run from about 300 to 700) and per session of it. */
const CONVERSATION_TURNS = 600
const SESSION_TURNS = 25

/**
 * The per-conversation workload, LoCoMo-shaped: `count` generated conversations of
 * {@link CONVERSATION_TURNS} turns in one store, each in its own scope (`project:conversation-<n>`)
 * and in sessions of {@link SESSION_TURNS} turns (each turn's conversation position written, so
 * recall reads its neighbours), and questions about each conversation asked in its scope alone —
 * the recall benchmark's shape on LoCoMo, with no download.
 */
const benchConversations = (
  filename: string,
  count: number,
  queryCount: number,
  timings?: StoreTimings.StoreTimings
) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const asked: Array<Asked> = []
    const perConversation = Math.ceil((queryCount + WARM_UP) / count)
    for (let c = 0; c < count; c++) {
      const scope = `project:conversation-${c}`
      const turns = generateTurns(CONVERSATION_TURNS, 100 + c).map((turn, i) => ({
        ...turn,
        input: {
          ...turn.input,
          id: `conversation-${c}-${String(i).padStart(4, "0")}`,
          scope,
          position: { thread: `conversation-${c}-session-${Math.floor(i / SESSION_TURNS)}`, turn: i % SESSION_TURNS }
        }
      }))
      yield* store.write(turns.map((turn) => turn.input))
      asked.push(
        ...generateQuestions(turns, perConversation, 200 + c, [scope]).map((q) => ({
          query: q.text,
          scopes: [scope]
        }))
      )
    }
    return [["conversation", asked.slice(0, queryCount + WARM_UP)]] as const
  }).pipe(
    Effect.provide(sqliteStores(filename)),
    Effect.flatMap((workloads) => measure(sqliteBackend(filename), count * CONVERSATION_TURNS, workloads, timings))
  )

const countO200k = (text: string) => countTokens(text, { disallowedSpecial: new Set() })

// ---------------------------------------------------------------------------------------------
// 2. Tokens per turn

/** Every text a prompt carries to the model: system text, message text, tool calls and results. */
const visibleChars = (prompt: Prompt.Prompt): number => {
  let chars = 0
  for (const message of prompt.content) {
    if (message.role === "system") {
      chars += message.content.length
      continue
    }
    for (const part of message.content) {
      if (part.type === "text") chars += part.text.length
      else if (part.type === "tool-call") chars += part.name.length + JSON.stringify(part.params).length
      else if (part.type === "tool-result") chars += part.name.length + JSON.stringify(part.result).length
    }
  }
  return chars
}

const PERSONA = "You are Ada, a careful assistant for a small engineering team. " +
  "You keep track of deploys, incidents and decisions, and you answer in a few sentences. ".repeat(6)

/** Answers every turn; every third turn looks something up first. */
const sessionScript: ScriptedModel.Script = (request) => {
  const input = ScriptedModel.lastUserText(request)
  const turn = ScriptedModel.userTexts(request).filter((text) => !ProjectionLayout.containsProjection(text)).length
  if (ScriptedModel.pendingToolResults(request).length === 0 && turn % 3 === 0) {
    return [ScriptedModel.toolCall("memory_recall", { query: input })]
  }
  return [ScriptedModel.text(`Here is what I know about ${input}: `.concat("a short answer. ".repeat(12)))]
}

interface TurnFigures {
  readonly turn: number
  readonly projectionTokens: number
  readonly engramTokens: number
  readonly persistedTokens: number
}

const benchSession = (filename: string, turns: number, queries: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const agent = yield* NativeRuntime.make({
      prefix: [{ name: "Identity", source: "role", fragments: [PromptFragment.authored(PERSONA)] }],
      memory: {
        scope: "global",
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      }
    })
    for (let k = 0; k < turns; k++) {
      yield* NativeRuntime.runTurn({ agent, sessionId: "bench-turns", input: queries[k % queries.length]! })
    }
    const snapshots = (yield* PromptObserver.captured).filter((snapshot) => snapshot.call === 0)
    const stored = (yield* Effect.flatMap(SessionStore.SessionStore, (s) => s.load("bench-turns"))).messages
    const estimate = (chars: number) => Math.ceil(chars / TokenEstimator.CHARS_PER_TOKEN)

    // Persist-every-frame: the same stored session, with each earlier turn's projection stored as a
    // message right after that turn's input.
    const inputs = stored.flatMap((message, index) => (message._tag === "OperatorMessage" ? [index] : []))
    return snapshots.map((snapshot, k): TurnFigures => {
      const start = inputs[k]!
      const persisted: Array<SessionStore.SessionMessage> = []
      let t = 0
      for (const [index, message] of stored.slice(0, start).entries()) {
        persisted.push(message)
        if (inputs[t] === index) {
          const frame = snapshots[t]!.projection.text
          if (frame !== "") persisted.push(new SessionStore.OperatorMessage({ text: frame, at: message.at }))
          t++
        }
      }
      const withFrames = ModelRequest.compose({
        prefix: agent.prefix,
        history: persisted,
        input: stored[start] as SessionStore.OperatorMessage,
        rounds: [],
        projection: snapshot.projection
      })
      return {
        turn: k + 1,
        projectionTokens: snapshot.projection.budget.usedTokens,
        engramTokens: estimate(visibleChars(snapshot.request.prompt)),
        persistedTokens: estimate(visibleChars(withFrames.prompt))
      }
    })
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        ContextProjection.layer,
        ScriptedModel.layer(sessionScript),
        PromptObserver.layerCapture,
        SessionStore.layerMemory,
        IdGenerator.sequential("turn")
      ).pipe(Layer.provideMerge(sqliteStores(filename)))
    )
  )

// ---------------------------------------------------------------------------------------------

/** With `--phases`: per workload, each store call's mean per projection, and what is left. */
const printPhases = (latency: ReadonlyArray<LatencyFigures>) => {
  const timed = latency.filter((f) => f.phases !== undefined)
  if (timed.length === 0) return
  const calls = [...new Set(timed.flatMap((f) => f.phases!.calls.map((c) => c.call)))].sort()
  console.log()
  console.log(table(
    ["backend", "records", "workload", "project mean ms", ...calls.map((c) => `${c} ms`), "rest ms"],
    timed.map((f) => {
      const phases = f.phases!
      const of = (call: string) => phases.calls.find((c) => c.call === call)
      const stores = phases.calls.reduce((sum, c) => sum + c.ms, 0)
      return [
        f.backend,
        f.records.toLocaleString("en-US"),
        f.workload,
        fmt(phases.meanMs, 2),
        ...calls.map((call) => {
          const c = of(call)
          return c === undefined ? "-" : `${fmt(c.ms, 2)} (${fmt(c.calls, 1)}×)`
        }),
        fmt(phases.meanMs - stores, 2)
      ]
    })
  ))
  console.log(
    "\nphases: the mean of project() and of each store call made inside it, per projection (calls per " +
      "projection in brackets); rest: project()'s own work — composing, counting tokens, screening — and the " +
      "Effect runtime's. Timing each call adds a little to project()."
  )
}

/** With `--statements`: per workload, each statement's time, executions and rows per projection, by party. */
const printStatements = (latency: ReadonlyArray<LatencyFigures>) => {
  const timed = latency.filter((f) => f.statements !== undefined)
  if (timed.length === 0) return
  console.log()
  console.log(table(
    ["backend", "records", "workload", "party", "statement", "ms / projection", "runs / projection", "rows / run"],
    timed.flatMap((f) =>
      f.statements!.map((s) => [
        f.backend,
        f.records.toLocaleString("en-US"),
        f.workload,
        s.party,
        s.statement,
        fmt(s.ms, 2),
        fmt(s.calls, 2),
        fmt(s.calls > 0 ? s.rows / s.calls : 0, 0)
      ])
    )
  ))
  console.log(
    "\nstatements: every statement run inside project() and inside the naive projector, per projection of the " +
      "workload, and the rows it returned (SQLite: better-sqlite3's execution, not the Effect or decoding around " +
      "it; PostgreSQL: the round trip through the SQL client, the driver's decoding included)."
  )
}

/** How many projections went over their budget as o200k_base counts their whole text. */
const overO200k = (latency: ReadonlyArray<LatencyFigures>): string => {
  const over = latency.reduce((sum, f) => sum + f.overBudget, 0)
  return `${over} projection(s) over their budget as o200k_base counts the whole text`
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const sizes = (option(args, "--sizes") ?? "10000,100000").split(",").map(Number).filter((n) => n > 0)
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const queryCount = Number(option(args, "--queries") ?? "200")
  const turns = Number(option(args, "--turns") ?? "20")
  const conversations = Number(option(args, "--conversations") ?? "10")
  const timings = args.includes("--phases") ? StoreTimings.make() : undefined
  const statements = args.includes("--statements") ? StatementTimings.make() : undefined
  const pgAt = pgUrl(args)
  const pg = pgAt === undefined ? undefined : { url: pgAt, keep: option(args, "--keep-pg") }
  const layout: ScopeLayout = args.includes("--tenants") ? "tenants" : "mixed"
  const keepSqlite = option(args, "--keep-sqlite")
  if (keepSqlite !== undefined) NodeFs.mkdirSync(keepSqlite, { recursive: true })
  const noSqlite = args.includes("--no-sqlite") && pg !== undefined
  const queries = generateShortQueries(queryCount, 42)
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-projection-"))
  const latency: Array<LatencyFigures> = []
  let session: ReadonlyArray<TurnFigures> = []
  try {
    await benchProject(NodePath.join(directory, "warm-up.db"), 2_000, 40, { layout })
    for (const size of sizes) {
      process.stdout.write(`projection bench: ${size.toLocaleString("en-US")} records … `)
      const filename = keepSqlite === undefined
        ? NodePath.join(directory, `store-${size}.db`)
        : NodePath.join(keepSqlite, `store-${layout}-${sizeLabel(size).toLowerCase()}.db`)
      const sqlite = noSqlite ? false : { reuse: keepSqlite !== undefined }
      latency.push(...await benchProject(filename, size, queryCount, { layout, timings, statements, pg, sqlite }))
      if (session.length === 0 && turns > 0 && !noSqlite) {
        session = await quiet(benchSession(filename, turns, queries.length > 50 ? queries.slice(50) : queries))
      }
      process.stdout.write("done\n")
    }
    if (conversations > 0) {
      process.stdout.write(`projection bench: ${conversations} conversations … `)
      const filename = NodePath.join(directory, "conversations.db")
      latency.push(...await quiet(benchConversations(filename, conversations, queryCount, timings)))
      process.stdout.write("done\n")
    }
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }

  console.log()
  console.log(table(
    [
      "backend",
      "records",
      "workload",
      "queries",
      "project p50 ms",
      "project p95 ms",
      "naive p50 ms",
      "project / naive p50",
      "naive rows",
      "naive lines",
      "naive tokens",
      "search p50 ms",
      "search p95 ms",
      "projected chars",
      "projected tokens",
      "recalled/turn",
      "shed/turn",
      "chars/4 vs BPE",
      "output digest",
      "RSS MB",
      "heap MB",
      "load"
    ],
    latency.map((f) => [
      f.backend,
      f.records.toLocaleString("en-US"),
      f.workload,
      String(f.queries),
      fmt(f.p50, 3),
      fmt(f.p95, 3),
      fmt(f.naiveP50, 3),
      `${fmt(f.ratio, 2)}x`,
      fmt(f.naiveRows, 0),
      fmt(f.naiveLines, 0),
      fmt(f.naiveTokens, 0),
      fmt(f.searchP50, 3),
      fmt(f.searchP95, 3),
      fmt(f.meanChars, 0),
      fmt(f.meanTokens, 0),
      fmt(f.meanRecalled, 1),
      fmt(f.meanShed, 1),
      `${f.heuristicError >= 0 ? "+" : ""}${fmt(100 * f.heuristicError, 1)}% (|${fmt(100 * f.heuristicAbsError, 1)}%|)`,
      f.outputDigest,
      fmt(f.rssMb, 0),
      fmt(f.heapMb, 0),
      f.load.replace("load average ", "").replace(/ on .*/, "")
    ])
  ))
  console.log(
    `\n${queryCount} queries per workload after ${WARM_UP} warm-up ones (questions of ~10 tokens; 1-3 word queries), ` +
      `scopes ${RUNTIME_SCOPES.join(" + ")} (${layout} layout), ${ALWAYS_ON} always-on records, default budget ` +
      `(${BUDGET_TOKENS.toLocaleString("en-US")} tokens), injection row written each time.\nconversation: ` +
      `${conversations} generated conversations of ${CONVERSATION_TURNS} turns in one store, each in its own scope ` +
      `and in sessions of ${SESSION_TURNS} turns (positions written: recall reads neighbours), questions about each ` +
      `asked in its scope alone (LoCoMo's shape); no always-on records.\nproject: the default estimator (o200k_base, ` +
      `counted by line); ${overO200k(latency)}. naive: the naive projector (issue #39) on the same store — the ` +
      `query's tokens held by at most ${100 * ContextProjection.DEFAULT_RECALL_PRUNE_SHARE}% of records ` +
      `(frequencies free), top ${NAIVE_LIMIT} by the backend's rank (SQLite: FTS5 bm25; PostgreSQL: one BM25 ` +
      `ORDER BY … LIMIT statement) joined to the request's scopes, the tail tier when fewer, each row rendered as a ` +
      `line, counted with o200k_base, cut at the budget, one injection-log row inserted; interleaved with ` +
      `project(), before it on every other query.\nsearch: the recall search alone (MemoryStore.search, same query ` +
      `and filters, limit 20), interleaved the same way. Target (issue #39): project p50 <= 1.25x the naive ` +
      `projector at 100k on SQLite and at 1M on both backends. ${machine()}.\nchars/4 vs BPE: the default estimate ` +
      `of each default projection against its o200k_base token count (TokenEstimatorBpe): mean signed error ` +
      `(|mean absolute error|).`
  )

  printPhases(latency)
  printStatements(latency)

  console.log()
  console.log(table(
    ["turn", "projection tok", "model-visible tok", "persist-every-frame tok", "ratio"],
    session.map((f) => [
      String(f.turn),
      fmt(f.projectionTokens, 0),
      fmt(f.engramTokens, 0),
      fmt(f.persistedTokens, 0),
      `${fmt(f.persistedTokens / f.engramTokens)}x`
    ])
  ))
  const last = session[session.length - 1]
  if (last !== undefined) {
    console.log(
      `\n${turns} scripted turns on the ${sizes[0]!.toLocaleString("en-US")}-record store (native loop, first model ` +
        `call of each turn; every third turn also makes a memory_recall round). Tokens: chars/4 of every text the ` +
        `request carries.\nAt turn ${last.turn}: ${fmt(last.engramTokens, 0)} tokens with one projection vs ` +
        `${fmt(last.persistedTokens, 0)} when every frame is persisted ` +
        `(${fmt(last.persistedTokens - last.engramTokens, 0)} tokens of stale context).`
    )
  }
  console.log(`${machine()}.`)
  writeJson(option(args, "--json"), { bench: "projection", latency, session, pgStatementSamples: pgSamples })
  const questions = latency.filter((f) => f.workload === "question" && f.backend === "SQLite")
  if (questions.length > 0) {
    appendChart(
      option(args, "--chart"),
      mermaidBars(
        "Question-shaped turn, p50 (ms): project() and its recall search (limit 20)",
        "ms",
        questions.flatMap((f) => {
          const n = f.records >= 1_000_000 ? `${f.records / 1_000_000}M` : `${f.records / 1_000}k`
          return [[`project ${n}`, f.p50], [`search ${n}`, f.searchP50]] as const
        })
      )
    )
  }
}
