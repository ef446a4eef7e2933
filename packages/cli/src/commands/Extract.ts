/**
 * `engram extract <session> [--agent <config.json>] [--model openai|openai:<model>|scripted:<file>] [--all]`:
 * runs one extraction run (`Extraction.run`) over the session's next turns in the store — those
 * after the last turn its extraction ledger (kept in the session store) records as extracted, at
 * most `maxTurns` of them in one model call; with `--all`, runs until the session is caught up —
 * and prints what it proposed — each memory's id and content and what became of it (`pending`, `flagged`,
 * `duplicate` of a live memory, `supersede-proposal` against one, or `refused`), the model calls
 * and the tokens. Nothing it writes is confirmed: review with `engram memory review <id>`.
 *
 * The memory tools' configuration (scope, routing spec, Background) is the agent config's, read
 * as `engram mcp` reads it; without one, the `user-background` preset in `global`. A session whose
 * stored calls were sent in `incognito` mode extracts nothing. The model is built by `Provider`:
 * `--model` when given, else OpenAI when `OPENAI_API_KEY` is set, else the command is refused
 * naming what to set. `--model scripted:<file>` (for tests and demos) answers from a JSON file.
 * With `--embedder test|local|openai` (`Embedder`) the extraction also has the store's vectors: a memory
 * worded otherwise than one already stored, yet near it, is corroborated as a duplicate instead of
 * proposed again; without it, duplicates are caught by their words only.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Embeddings from "@engram/core/Embeddings"
import * as MemoryStore from "@engram/core/MemoryStore"
import * as SessionStore from "@engram/core/SessionStore"
import * as TelemetryStore from "@engram/core/TelemetryStore"
import type * as Extraction from "@engram/runtime/Extraction"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Embedder from "../Embedder.js"
import * as Flags from "../Flags.js"
import * as Provider from "../Provider.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"
import { agentFlag } from "./Compose.js"
import { memoryConfig } from "./Mcp.js"

/**
 * What became of one proposed memory: `pending` (saved, waiting for review), `flagged` (saved,
 * held and flagged by the poisoning screen), `duplicate` (a live memory already says it; nothing
 * written), `supersede-proposal` (a pending proposal to replace `supersedes`), `refused` (not
 * written: `problem`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ProposedMemory {
  readonly outcome: "pending" | "flagged" | "duplicate" | "supersede-proposal" | "refused"
  /** The memory written, or for a duplicate the live memory that holds it. */
  readonly id: string | null
  readonly content: string | null
  readonly reviewState: string | null
  readonly supersedes?: string | undefined
  readonly problem?: string | undefined
}

/**
 * The session's extraction ledger after the command, as the store keeps it: the last turn
 * extracted (`through`) of the session's `turns`, the runs, calls and tokens spent on it (of the
 * `tokenBudget`), the failed runs waiting to be retried and the last one's problem.
 *
 * @since 0.1.0
 * @category models
 */
export interface LedgerView {
  readonly through: number
  readonly turns: number
  readonly runs: number
  readonly calls: number
  readonly tokens: number
  readonly tokenBudget: number
  readonly failures: number
  readonly lastProblem: string | null
}

/**
 * One run of the command: its status, the turns it read, its call and usage, its memories.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunView {
  readonly status: Extraction.RunReport["status"]
  readonly turns: ReadonlyArray<number>
  readonly calls: number
  readonly usage: Extraction.RunUsage | null
  readonly memories: ReadonlyArray<ProposedMemory>
}

/**
 * What `engram extract` did: one run (or, with `--all`, every run until the session was caught
 * up: `runs`, with the figures above summed over them and `status` the last run's), and the
 * session's ledger after it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ExtractReport extends RunView {
  readonly session: string
  readonly store: string
  readonly model: string
  readonly ledger: LedgerView
  readonly runs?: ReadonlyArray<RunView> | undefined
}

const modelFlag = Flags.make(
  "model",
  (text) => Either.match(Provider.parseModelChoice(text), { onLeft: Effect.fail, onRight: Effect.succeed }),
  "The language model: openai (" + Provider.OPENAI_LANGUAGE_MODEL + "), openai:<model>, or scripted:<file> " +
    "(a JSON file of scripted replies, for tests and demos). Default: openai when OPENAI_API_KEY is set.",
  "model"
)

const turnRange = (turns: ReadonlyArray<number>): string =>
  turns.length === 0 ? "none" : turns.length === 1 ? `${turns[0]}` : `${turns[0]}-${turns[turns.length - 1]}`

/**
 * The human view of a report.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderReport = (report: ExtractReport): string => {
  const head = `extract ${report.session} (${report.model}, ${report.store}): `
  const runs = report.runs ?? [report]
  return [
    ...runs.map((run) => renderRun(head, run)),
    Render.escapeControls(renderLedger(report.ledger, report.status))
  ].join("\n")
}

const renderLedger = (ledger: LedgerView, status: RunView["status"]): string => {
  const left = ledger.turns - ledger.through
  const spent = `${ledger.runs} run${ledger.runs === 1 ? "" : "s"}, ${ledger.calls} model call` +
    `${ledger.calls === 1 ? "" : "s"}, ${ledger.tokens} of ${ledger.tokenBudget} tokens`
  const next = status === "incognito"
    ? ""
    : left <= 0
    ? "; caught up"
    : status === "over-budget"
    ? `; ${left} turn${left === 1 ? "" : "s"} left, over the token budget`
    : `; ${left} turn${left === 1 ? "" : "s"} left: run it again, or pass --all`
  const failed = ledger.failures === 0
    ? ""
    : `\n${ledger.failures} failed run${ledger.failures === 1 ? "" : "s"} waiting to be retried: ` +
      `${ledger.lastProblem ?? "no problem recorded"}`
  return `ledger: extracted through turn ${ledger.through} of ${ledger.turns} (${spent})${next}${failed}`
}

const renderRun = (head: string, report: RunView): string => {
  if (report.status === "incognito") {
    return Render.escapeControls(`${head}incognito session: nothing extracted, no model call`)
  }
  if (report.status === "nothing-new") return Render.escapeControls(`${head}no new turns to extract, no model call`)
  if (report.status === "over-budget") {
    return Render.escapeControls(`${head}over the session's token budget, no model call`)
  }
  const usage = report.usage === null
    ? ""
    : `, ${report.usage.totalTokens} tokens (${report.usage.inputTokens} in, ${report.usage.outputTokens} out` +
      `${report.usage.estimated ? ", estimated" : ""})`
  const lines = [
    `${head}turns ${turnRange(report.turns)}, ${report.calls} model call${report.calls === 1 ? "" : "s"}${usage}, ` +
    `${report.memories.length} memor${report.memories.length === 1 ? "y" : "ies"} proposed`,
    ...report.memories.map((m) => {
      const what = m.outcome === "duplicate"
        ? "duplicate of"
        : m.outcome === "supersede-proposal"
        ? "supersede proposal"
        : m.outcome
      const detail = m.outcome === "refused"
        ? m.problem ?? ""
        : `${m.content ?? ""}${m.supersedes === undefined ? "" : ` (supersedes ${m.supersedes})`}`
      return `  ${what.padEnd(18)} ${(m.id ?? "-").padEnd(12)} ${Render.truncate(detail, 80)}`
    })
  ]
  if (report.memories.some((m) => m.outcome !== "duplicate" && m.outcome !== "refused")) {
    lines.push("nothing is confirmed: review with engram memory review <id> confirmed (or rejected)")
  }
  return lines.map(Render.escapeControls).join("\n")
}

/**
 * `engram extract`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "extract",
  {
    session: Flags.argument(Flags.text("session", SessionStore.SessionId, "The session whose turns to extract.")),
    agent: Flags.optional(
      agentFlag("The agent config: spec, background, scope, and optionally db (default: user-background in global).")
    ),
    model: Flags.optional(modelFlag),
    all: Flags.boolean(
      "all",
      "Run until the session is caught up (each run one model call over at most " +
        "8 turns), instead of once."
    ),
    ...Embedder.recallOptions
  },
  ({ agent, all, embedder, embedderDimensions, embedderModel, model, session }) =>
    Effect.scoped(Effect.gen(function*() {
      // The model first: a command with no provider is refused before any store is opened.
      const language = yield* Provider.languageModel("engram extract", model)
      const { db, memory } = yield* memoryConfig({ agent, scope: undefined })
      const where = yield* StoreBackend.locationFor({ configured: db })
      const store = StoreBackend.describeLocation(where)
      const ExtractionModule = yield* Effect.promise(() => import("@engram/runtime/Extraction"))
      // The embedder `--embedder` chose, if any: the store keeps vectors with it and the extraction
      // catches near-duplicates by meaning with it; built once, for both.
      const embeddings = embedder === undefined
        ? undefined
        : yield* Embedder.make(embedder, { model: embedderModel, dimensions: embedderDimensions })
      const report = yield* Effect.gen(function*() {
        const { messages } = yield* (yield* SessionStore.SessionStore).load(session)
        if (messages.length === 0) {
          return yield* new CliFailure({
            problem: `session ${session} has no turns in ${store} (engram sessions lists the sessions)`,
            exitCode: ExitCode.refused
          })
        }
        // The session's mode is what its stored calls were sent in: an incognito call makes the
        // whole session incognito.
        const { snapshots } = yield* (yield* TelemetryStore.TelemetryStore).listSnapshots(session)
        const mode = snapshots.some((s) => s.mode === "incognito") ? "incognito" : undefined
        // Near-duplicates by meaning only with an embedder.
        const extraction = yield* embeddings === undefined
          ? ExtractionModule.make({ nearDuplicates: false })
          : Effect.provideService(ExtractionModule.make(), Embeddings.Embeddings, embeddings)
        const memories = yield* MemoryStore.MemoryStore
        const view = (run: Extraction.RunReport) =>
          Effect.gen(function*() {
            const ids = run.outcomes.flatMap((o) =>
              o._tag === "Saved" || o._tag === "Proposed" ? [o.id] : o._tag === "Corroborated" ? [o.holder] : []
            )
            const records = new Map((yield* memories.get(ids)).records.map((r) => [r.id, r] as const))
            const proposed = run.outcomes.map((o): ProposedMemory => {
              if (o._tag === "Refused") {
                return { outcome: "refused", id: null, content: null, reviewState: null, problem: o.problem }
              }
              const id = o._tag === "Corroborated" ? o.holder : o.id
              const record = records.get(id)
              return {
                outcome: o._tag === "Corroborated"
                  ? "duplicate"
                  : o._tag === "Proposed"
                  ? "supersede-proposal"
                  : o.flagged
                  ? "flagged"
                  : "pending",
                id,
                content: record?.content ?? null,
                reviewState: record?.reviewState ?? null,
                ...(o._tag === "Proposed" ? { supersedes: o.supersedes } : {})
              }
            })
            return {
              status: run.status,
              turns: run.turns,
              calls: run.calls,
              usage: run.usage ?? null,
              memories: proposed
            } satisfies RunView
          })
        // One run, or with --all runs until caught up: each is bounded (one call, maxTurns turns).
        const reports: Array<Extraction.RunReport> = []
        for (;;) {
          const run = yield* extraction.run({ sessionId: session, memory, mode, messages })
          reports.push(run)
          if (!all || run.status !== "extracted") break
        }
        const runs = yield* Effect.forEach(reports, view)
        const last = reports[reports.length - 1]!
        const usages = runs.flatMap((r) => (r.usage === null ? [] : [r.usage]))
        const usage = usages.length === 0 ? null : {
          inputTokens: usages.reduce((n, u) => n + u.inputTokens, 0),
          outputTokens: usages.reduce((n, u) => n + u.outputTokens, 0),
          totalTokens: usages.reduce((n, u) => n + u.totalTokens, 0),
          estimated: usages.some((u) => u.estimated)
        }
        const ledger: LedgerView = {
          through: last.ledger.through,
          turns: ExtractionModule.turnsOf(messages).length,
          runs: last.ledger.runs,
          calls: last.ledger.calls,
          tokens: last.ledger.tokens,
          tokenBudget: ExtractionModule.defaults.tokenBudget,
          failures: last.ledger.failures,
          lastProblem: last.ledger.lastProblem ?? null
        }
        return {
          session,
          store,
          model: Provider.describeModel(language.model),
          status: last.status,
          turns: runs.flatMap((r) => r.turns),
          calls: runs.reduce((n, r) => n + r.calls, 0),
          usage,
          memories: runs.flatMap((r) => r.memories),
          ledger,
          ...(all ? { runs } : {})
        } satisfies ExtractReport
      }).pipe(Effect.provide(Layer.merge(
        StoreBackend.layerObserved(
          where,
          embeddings === undefined ? undefined : Layer.succeed(Embeddings.Embeddings, embeddings)
        ),
        language.layer
      )))
      const settings = yield* Root.settings
      yield* Console.log(settings.json ? Render.json(report) : renderReport(report))
    })).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Run one extraction over a session's next turns (after the last extracted one; --all: until caught up): the " +
      "memories they imply, proposed pending through the save gate (--model openai|openai:<model>|scripted:<file>; " +
      "OPENAI_API_KEY); --embedder test|local|openai also catches near-duplicates by their vectors."
  )
)
