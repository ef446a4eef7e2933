/**
 * The body of `Extraction.make`: one run (claim, read, call, write, record), the lock and the
 * background worker. It imports only types from the public module.
 */
import * as LanguageModel from "@effect/ai/LanguageModel"
import { Embeddings, MemoryStore, type PromotionStore, SessionStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Schedule from "effect/Schedule"
import type { Outcome, RunReport, RunRequest, Service, Settings } from "../Extraction.js"
import { ExtractionBusy, ExtractionFailed } from "../ExtractionError.js"
import * as ModelScreen from "../ModelScreen.js"
import { Candidates, defaults, metrics } from "./extractionModel.js"
import { promptOf, turnsOf, usageOf } from "./extractionPrompt.js"
import { writeCandidate } from "./extractionReview.js"
import type { NearDuplicates } from "./nearDuplicates.js"

const failed = (sessionId: string) => (error: { readonly message: string }) =>
  new ExtractionFailed({ sessionId, message: error.message })

/**
 * The extraction service over the model and the stores in context (and the embedder, unless
 * `nearDuplicates` is `false`: `Extraction.make`'s overloads say which).
 */
export const make = (settings: Settings = {}) =>
  Effect.gen(function*() {
    const context = yield* Effect.context<
      | LanguageModel.LanguageModel
      | MemoryStore.MemoryStore
      | PromotionStore.PromotionStore
      | SessionStore.SessionStore
    >()
    const maxTurns = settings.maxTurns ?? defaults.maxTurns
    const maxTurnChars = settings.maxTurnChars ?? defaults.maxTurnChars
    const shownMemories = settings.shownMemories ?? defaults.shownMemories
    const tokenBudget = settings.tokenBudget ?? defaults.tokenBudget
    const retry = settings.retry ??
      Schedule.exponential(Duration.seconds(1)).pipe(Schedule.intersect(Schedule.recurs(3)))
    const modelScreen = settings.modelScreen === true ? yield* ModelScreen.make : undefined
    const nearDuplicates: NearDuplicates | undefined = settings.nearDuplicates === false
      ? undefined
      : {
        embeddings: yield* Embeddings.Embeddings,
        threshold: settings.nearDuplicates?.threshold ?? defaults.nearDuplicateThreshold
      }
    // One run per session at a time in this process (a run reads and then advances the ledger),
    // and across processes the session's claim in the SessionStore, under this service's holder id.
    const lock = yield* Effect.makeSemaphore(1)
    const holder = globalThis.crypto.randomUUID()
    const lease = Duration.decode(settings.claimLease ?? defaults.claimLease)
    const claimed = <A, E, R>(sessionId: string, body: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.gen(function*() {
          const sessions = yield* SessionStore.SessionStore
          const at = yield* DateTime.now
          const claim = new SessionStore.ExtractionClaim({ holder, at, until: DateTime.addDuration(at, lease) })
          const outcome = yield* sessions.claimExtraction(sessionId, claim).pipe(Effect.mapError(failed(sessionId)))
          if (outcome._tag === "Held") {
            return yield* new ExtractionBusy({ sessionId, holder: outcome.claim.holder, until: outcome.claim.until })
          }
          return sessions
        }),
        () => body,
        (sessions) =>
          sessions.releaseExtraction(sessionId, holder).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("an extraction claim could not be released; it lapses with its lease").pipe(
                Effect.annotateLogs({ sessionId, problem: error.message })
              )
            )
          )
      )
    const ledgerOf = (sessionId: string) =>
      Effect.flatMap(SessionStore.SessionStore, (sessions) => sessions.loadExtractions(sessionId)).pipe(
        Effect.map(({ runs }) => SessionStore.summarizeExtractions(runs)),
        Effect.mapError(failed(sessionId)),
        Effect.provide(context)
      )

    const runOnce = (request: RunRequest): Effect.Effect<RunReport, ExtractionFailed | ExtractionBusy> =>
      Effect.gen(function*() {
        const { sessionId, memory } = request
        const sessions = yield* SessionStore.SessionStore
        const ledger = yield* ledgerOf(sessionId)
        const nothing = (status: RunReport["status"]): RunReport => ({
          sessionId,
          status,
          turns: [],
          calls: 0,
          outcomes: [],
          usage: undefined,
          ledger
        })
        if (request.mode === "incognito") return nothing("incognito")
        const messages = request.messages ??
          (yield* sessions.load(sessionId).pipe(Effect.mapError(failed(sessionId)))).messages
        const fresh = turnsOf(messages, maxTurnChars).filter((t) => t.turn > ledger.through).slice(0, maxTurns)
        if (fresh.length === 0) return nothing("nothing-new")
        if (ledger.tokens >= tokenBudget) return nothing("over-budget")
        const memories = yield* MemoryStore.MemoryStore
        const known = (yield* memories.list({
          scopes: [memory.scope],
          deliverable: true,
          deliveryPolicies: ["always", "retrieved"],
          limit: shownMemories
        }).pipe(Effect.mapError(failed(sessionId)))).records
        const prompt = promptOf(fresh, known)
        const turnNumbers = fresh.map((t) => t.turn)
        const turnTimes = new Map(fresh.map((t) => [t.turn, t.at] as const))
        const turns = { first: turnNumbers[0]!, last: turnNumbers[turnNumbers.length - 1]! }
        const record = (run: Omit<SessionStore.ExtractionRun, "at" | "turns" | "calls">) =>
          Effect.gen(function*() {
            const at = yield* DateTime.now
            yield* sessions.recordExtraction(sessionId, new SessionStore.ExtractionRun({ at, turns, calls: 1, ...run }))
          }).pipe(Effect.mapError(failed(sessionId)))
        const response = yield* LanguageModel.generateObject({
          prompt,
          schema: Candidates,
          objectName: "memories"
        }).pipe(
          Effect.mapError(failed(sessionId)),
          // A failed call is recorded with its prompt's estimated tokens (a provider may bill a
          // call whose answer did not decode); the turns stay unextracted, so the next run retries.
          Effect.tapError((error) =>
            record({
              outcome: "failed",
              usage: { ...usageOf({}, prompt.length, 0), outputTokens: 0 },
              written: [],
              corroborated: [],
              problem: error.message
            }).pipe(
              Effect.catchAll((unrecorded) =>
                Effect.logWarning("a failed extraction run could not be recorded").pipe(
                  Effect.annotateLogs({ sessionId, problem: unrecorded.message })
                )
              )
            )
          )
        )
        const usage = usageOf(response.usage, prompt.length, response.text.length)
        const shown = new Map(known.map((r) => [r.id, r] as const))
        const outcomes = yield* Effect.forEach(
          response.value.memories,
          (candidate) =>
            writeCandidate(candidate, {
              sessionId,
              memory: modelScreen === undefined ? memory : { ...memory, modelScreen },
              shown,
              turns: turnNumbers,
              nearDuplicates,
              turnTimes
            }).pipe(
              Effect.catchAll((error) =>
                Effect.succeed({ _tag: "Refused", problem: error.message } satisfies Outcome as Outcome)
              )
            )
        )
        yield* record({
          outcome: "extracted",
          usage,
          written: outcomes.flatMap((o) => (o._tag === "Saved" || o._tag === "Proposed" ? [o.id] : [])),
          corroborated: outcomes.flatMap((o) => (o._tag === "Corroborated" ? [o.holder] : []))
        })
        const written = outcomes.filter((o) => o._tag === "Saved" || o._tag === "Proposed").length
        yield* Metric.increment(metrics.runs)
        yield* Metric.incrementBy(metrics.extracted, written)
        yield* Metric.incrementBy(metrics.corroborated, outcomes.filter((o) => o._tag === "Corroborated").length)
        yield* Metric.incrementBy(metrics.tokens, usage.totalTokens)
        yield* Effect.annotateCurrentSpan({
          "engram.extraction.turns": turnNumbers.length,
          "engram.extraction.written": written,
          "engram.extraction.tokens": usage.totalTokens
        })
        return {
          sessionId,
          status: "extracted",
          turns: turnNumbers,
          calls: 1,
          outcomes,
          usage,
          ledger: yield* ledgerOf(sessionId)
        } satisfies RunReport
      }).pipe(
        // Incognito reads nothing, so it claims nothing.
        (body) => request.mode === "incognito" ? body : claimed(request.sessionId, body),
        lock.withPermits(1),
        Effect.provide(context),
        Effect.withSpan("engram.extraction.run", { attributes: { sessionId: request.sessionId } })
      )

    // The background worker: a queue of sessions, a count of the work not finished, and a latch
    // that opens when the count comes back to zero.
    const queue = yield* Queue.unbounded<RunRequest>()
    const inFlight = yield* Ref.make(0)
    const drained = yield* Ref.make(yield* Deferred.make<void>())
    yield* Deferred.succeed(yield* Ref.get(drained), undefined)
    const schedule = (request: RunRequest) =>
      request.mode === "incognito" ? Effect.void : Effect.gen(function*() {
        const before = yield* Ref.getAndUpdate(inFlight, (n) => n + 1)
        if (before === 0) yield* Ref.set(drained, yield* Deferred.make<void>())
        yield* Queue.offer(queue, request)
      })
    const finish = Effect.gen(function*() {
      const after = yield* Ref.updateAndGet(inFlight, (n) => n - 1)
      if (after === 0) yield* Deferred.succeed(yield* Ref.get(drained), undefined)
    })
    const work = (request: RunRequest) =>
      runOnce(request).pipe(
        Effect.tapError((error) =>
          (error._tag === "ExtractionBusy"
            ? Effect.logInfo("extraction is running in another process; it will be tried again")
            : Effect.logWarning("extraction failed; it will be retried")).pipe(
              Effect.annotateLogs({ sessionId: request.sessionId, problem: error.message })
            )
        ),
        Effect.retry(retry),
        Effect.catchAllCause((cause) =>
          Effect.logError("extraction gave up for now; the turns stay in the session").pipe(
            Effect.annotateLogs({ sessionId: request.sessionId }),
            Effect.annotateLogs("cause", cause.toString())
          )
        ),
        Effect.ensuring(finish)
      )
    yield* Effect.forkScoped(Effect.forever(Effect.flatMap(Queue.take(queue), work)))
    const idle = Effect.flatMap(Ref.get(drained), Deferred.await)

    const service: Service = {
      run: runOnce,
      schedule,
      idle,
      ledger: ledgerOf,
      endSession: (request) =>
        Effect.gen(function*() {
          yield* idle
          const reports: Array<RunReport> = []
          for (;;) {
            const report = yield* runOnce(request).pipe(
              Effect.retry({ schedule: retry, while: (error) => error._tag === "ExtractionBusy" })
            )
            reports.push(report)
            if (report.status !== "extracted") return reports
          }
        })
    }
    return service
  })
