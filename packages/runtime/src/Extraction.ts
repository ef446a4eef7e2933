/**
 * Memories from the conversation itself: an extraction pass that reads a session's new turns and
 * asks a `LanguageModel` for the memories they imply, for the things the model did not save.
 *
 * One **run** reads the turns after the session's watermark (at most `maxTurns` of them, each
 * message cut at `maxTurnChars`), shows the model the live memories of the scope (ids, labels,
 * values, so it can say which one a correction replaces) and makes **one** `generateObject` call
 * whose answer is decoded with {@link Candidates}. Each candidate then goes through the same path
 * as a model's `memory_save` — the very handler (`MemoryTools.make`), so the same routing, the
 * same save gate and the same promotion — written with `sourceType: "extracted"` (trust tier 2,
 * `pending`) and tagged with its source turns (`TurnProvenance`):
 *
 * - an **exact duplicate** (the same content key as a live memory of the scope) or a
 *   **canonical-key duplicate** (the gate's holder already says the same words) is not written:
 *   the run reports the holder as `corroborated`, and the holder counts it with the session
 *   (`MemoryStore.corroborate`, decision 0174; also in the `engram_extraction_corroborated` counter);
 * - a **conflict** (the gate's holder says something else), or a candidate naming a memory it
 *   `supersedes`, becomes a **supersede proposal**: a pending, `on_demand` record tagged
 *   `supersede-proposal:<holder>` — never promoted, never composed, never an overwrite. The holder
 *   stays in force until an operator calls {@link approve};
 * - anything else is saved as `memory_save` saves it: pending, routed and promoted, so an `auto`
 *   section composes it at once and a `guarded` one after review.
 *
 * The poisoning screen (`InstructionScreen`) applies on the write itself, on every path: an
 * instruction-like candidate is written, held pending and flagged, and no section composes it.
 * Nothing here confirms anything: extraction has no review operation, and {@link approve} is the
 * operator's.
 *
 * **When it runs.** {@link layer} starts a background worker: after every completed turn of an
 * agent built with it (`NativeRuntime.make({ extraction })`), the loop hands the session to the
 * worker and returns at once — the turn's latency and
 * result never depend on extraction; a failed run is logged and retried on `retry`'s schedule,
 * and the turns stay in the session, so nothing is lost. {@link Service.endSession} runs what is
 * left when a session ends; {@link Service.run} runs once on demand. Each session has a token
 * budget: a run that would start over it makes no call. Incognito sessions extract nothing.
 *
 * **One run per session, across processes.** A run first claims the session's extraction in the
 * `SessionStore` (`claimExtraction`: a lease of `claimLease`, taken atomically), and releases it when
 * it ends; a run that finds another service's claim in force fails with {@link ExtractionBusy} and
 * changes nothing — so two processes over one SQLite file or PostgreSQL schema never read the same
 * ledger and extract the same turns twice. The background worker retries a busy session on its
 * schedule; a claim whose holder died lapses when its lease ends.
 *
 * @since 0.1.0
 */

import type * as LanguageModel from "@effect/ai/LanguageModel"
import type { Embeddings, MemoryStore, PromotionStore, SessionStore } from "@engram/core"
import * as Context from "effect/Context"
import type * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Schedule from "effect/Schedule"
import type * as Scope from "effect/Scope"
import type { ExtractionBusy, ExtractionFailed } from "./ExtractionError.js"
import * as internal from "./internal/extraction.js"
import type * as MemoryTools from "./MemoryTools.js"

export {
  /** @since 0.1.0 @category errors */
  ApprovalRefused,
  /** @since 0.1.0 @category errors */
  ExtractionBusy,
  /** @since 0.1.0 @category errors */
  ExtractionFailed,
  /** @since 0.1.0 @category errors */
  type ReviewError
} from "./ExtractionError.js"
export {
  /** @since 0.1.0 @category schemas */
  Candidate,
  /** @since 0.1.0 @category schemas */
  Candidates,
  /** @since 0.1.0 @category constants */
  defaults,
  /** @since 0.1.0 @category metrics */
  metrics,
  /** @since 0.1.0 @category provenance */
  proposalTag,
  /** @since 0.1.0 @category provenance */
  proposedHolder
} from "./internal/extractionModel.js"
export {
  /** @since 0.1.0 @category prompt */
  promptOf,
  /** @since 0.1.0 @category prompt */
  turnsOf
} from "./internal/extractionPrompt.js"
export {
  /** @since 0.1.0 @category review */
  approve,
  /** @since 0.1.0 @category review */
  review,
  /** @since 0.1.0 @category writing */
  writeCandidate
} from "./internal/extractionReview.js"
export {
  /** @since 0.1.0 @category deduplication */
  nearDuplicateOf,
  /** @since 0.1.0 @category deduplication */
  type NearDuplicates,
  /** @since 0.1.0 @category deduplication */
  valuesOf
} from "./internal/nearDuplicates.js"

/**
 * What became of one candidate.
 *
 * @since 0.1.0
 * @category models
 */
export type Outcome =
  | { readonly _tag: "Saved"; readonly id: string; readonly flagged: boolean }
  | { readonly _tag: "Proposed"; readonly id: string; readonly supersedes: string; readonly flagged: boolean }
  | { readonly _tag: "Corroborated"; readonly holder: string }
  | { readonly _tag: "Refused"; readonly problem: string }

/**
 * The token usage of a run's model call: what the provider reported, or an estimate (characters
 * / 4) when it reported nothing (`estimated: true`).
 *
 * @since 0.1.0
 * @category models
 */
export type RunUsage = SessionStore.ExtractionUsage

/**
 * One run's report: whether it called the model, the turns it read, what became of each
 * candidate, and the usage of its one call.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunReport {
  readonly sessionId: string
  readonly status: "extracted" | "nothing-new" | "incognito" | "over-budget"
  readonly turns: ReadonlyArray<number>
  readonly calls: number
  readonly outcomes: ReadonlyArray<Outcome>
  readonly usage: RunUsage | undefined
  /** The session's ledger after the run. */
  readonly ledger: Ledger
}

/**
 * A session's extraction ledger, as the `SessionStore` keeps it (one record per run that called
 * the model) and sums it up: the last turn extracted (`through`), the runs, calls and tokens spent
 * on the session (failed runs included), and the failed runs since the last successful one
 * (`failures`, the retry count of the batch waiting) with the last `lastProblem`.
 *
 * @since 0.1.0
 * @category models
 */
export type Ledger = SessionStore.ExtractionLedger

/**
 * What a run needs to know about the session's agent: the memory tools' configuration (scope,
 * Background, routing spec, provenance tags such as a subagent's) and its mode.
 *
 * @since 0.1.0
 * @category models
 */
export interface RunRequest {
  readonly sessionId: string
  readonly memory: MemoryTools.MemoryToolsConfig
  readonly mode?: string | undefined
  /**
   * The session's messages, when they are not in the `SessionStore` — an ACP session's, from
   * `ContextAssembler.transcript`. Without them the run loads the session from the store.
   */
  readonly messages?: ReadonlyArray<SessionStore.SessionMessage> | undefined
}

/**
 * The limits of extraction: the most turns one run reads (default 8), the characters kept of each
 * message (default 2000), the live memories shown to the model (default 30), the tokens one
 * session may spend in all (default 20 000), and the schedule a failed background run is retried
 * on (default: 3 retries, exponential from 1 second).
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly maxTurns?: number | undefined
  readonly maxTurnChars?: number | undefined
  readonly shownMemories?: number | undefined
  readonly tokenBudget?: number | undefined
  readonly retry?: Schedule.Schedule<unknown, unknown> | undefined
  /**
   * Near-duplicates by meaning ({@link nearDuplicateOf}): the cosine similarity at or above which a
   * candidate is a near-duplicate of a live memory of its scope and slot (default 0.9), over the
   * `Embeddings` service the layer then requires; `false` checks exact and canonical-key duplicates
   * only, and the layer needs no embedder.
   */
  readonly nearDuplicates?: false | { readonly threshold?: number | undefined } | undefined
  /**
   * How long a run's claim on its session holds (default 10 minutes): longer than any one run
   * (one model call) takes, short enough that a claim whose process died soon lapses.
   */
  readonly claimLease?: Duration.DurationInput | undefined
  /**
   * Ask the run's `LanguageModel` to classify each candidate the rule screen passes before it is
   * written (`ModelScreen`, one more call per such candidate; default off). It may flag a
   * candidate — held for review — and never confirms one.
   */
  readonly modelScreen?: boolean | undefined
}

/**
 * The extraction service: one run now, the background queue, session end, and the ledgers.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /**
   * Runs once now over the session's new turns (one model call at most). Fails with
   * {@link ExtractionBusy} when another service (another process) is running the session.
   */
  readonly run: (request: RunRequest) => Effect.Effect<RunReport, ExtractionFailed | ExtractionBusy>
  /** Hands the session to the background worker; returns at once and never fails. */
  readonly schedule: (request: RunRequest) => Effect.Effect<void>
  /**
   * Waits for the background worker to finish what it was given, then runs until the session is
   * caught up; a session busy elsewhere is tried again on the retry schedule before it fails.
   */
  readonly endSession: (
    request: RunRequest
  ) => Effect.Effect<ReadonlyArray<RunReport>, ExtractionFailed | ExtractionBusy>
  /** Completes when the background worker has nothing queued or running. */
  readonly idle: Effect.Effect<void>
  /** The session's ledger, read from the `SessionStore`. */
  readonly ledger: (sessionId: string) => Effect.Effect<Ledger, ExtractionFailed>
}

/**
 * The extraction service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class Extraction extends Context.Tag("@engram/runtime/Extraction")<Extraction, Service>() {}

/**
 * What {@link make} and {@link layer} require besides the embedder: the model and the stores.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | LanguageModel.LanguageModel
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore

/**
 * Builds the extraction service over the `LanguageModel` and the stores in context, and the
 * `Embeddings` service unless `nearDuplicates` is `false`.
 *
 * @since 0.1.0
 * @category constructors
 */
export function make(
  settings: Settings & { readonly nearDuplicates: false }
): Effect.Effect<Service, never, Requirements | Scope.Scope>
export function make(
  settings?: Settings
): Effect.Effect<Service, never, Requirements | Embeddings.Embeddings | Scope.Scope>
export function make(settings?: Settings) {
  return internal.make(settings)
}

/**
 * The extraction service with its background worker: an agent built with it
 * (`NativeRuntime.make({ extraction })`) hands its session to the worker after every completed
 * turn. Needs a
 * `LanguageModel`, a `MemoryStore`, a `PromotionStore` and a `SessionStore`, and an `Embeddings`
 * service unless `nearDuplicates` is `false` (a wiring without an embedder says so).
 *
 * @since 0.1.0
 * @category layers
 */
export function layer(
  settings: Settings & { readonly nearDuplicates: false }
): Layer.Layer<Extraction, never, Requirements>
export function layer(
  settings?: Settings
): Layer.Layer<Extraction, never, Requirements | Embeddings.Embeddings>
export function layer(settings?: Settings) {
  return Layer.scoped(Extraction, internal.make(settings))
}
