/**
 * `PromptObserver`: sees the model-visible request of every model call the agent loop makes —
 * the exact prompt (stable prefix, history, projection, the turn's rounds), each fragment's source
 * and memory ids, the tools offered, and the turn's projection with its budget summary.
 *
 * The default observer does nothing. {@link layerCapture} keeps every snapshot in memory, for
 * tests and for tooling that shows what a model was sent (`engram demo` prints one). A snapshot is
 * keyed by `(sessionId, turn, call)`; `call` counts the model calls of a turn from 0 and carries
 * on across a resume.
 *
 * @example
 * import { Effect } from "effect"
 * import { PromptObserver } from "@engram/runtime"
 *
 * // …run turns with PromptObserver.layerCapture provided, then:
 * const sent = Effect.map(PromptObserver.captured, (snapshots) =>
 *   snapshots.map((s) => `${s.sessionId}#${s.turn}.${s.call}: ${s.request.fragments.length} fragments`)
 * )
 *
 * @since 0.1.0
 */
import {
  type MemoryOverlay,
  type ProjectionLayout,
  PromptFragment,
  PromptSnapshot as Stored,
  SessionStore,
  TelemetryStore,
  Trajectory
} from "@engram/core"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ModelRequest from "./ModelRequest.js"

/**
 * One model call as the model saw it.
 *
 * @since 0.1.0
 * @category models
 */
export interface ObservedCall {
  readonly sessionId: string
  readonly turn: number
  readonly call: number
  readonly request: ModelRequest.ModelRequest
  readonly tools: ReadonlyArray<string>
  readonly projection: ProjectionLayout.ProjectedContext
  /**
   * What the request was composed from. A producer that sets it can be persisted by
   * {@link layerTelemetry}; the native loop always does.
   */
  readonly inputs?: ModelRequest.RequestInput | undefined
  /** The memory scopes the projection read (stored with the snapshot, for `Explain`). */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** The overlay report the prefix was built with (stored once per session, for `Explain`). */
  readonly overlay?: MemoryOverlay.OverlayReport | undefined
}

/**
 * The observer interface. `observe` runs before the call is sent; it cannot fail the call.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly observe: (snapshot: ObservedCall) => Effect.Effect<void>
  /**
   * Receives the token usage the provider reported for an observed call, after the call (when it
   * reported any figure). Optional; it cannot fail the turn.
   */
  readonly usage?: ((key: Stored.SnapshotKey, usage: Stored.TokenUsage) => Effect.Effect<void>) | undefined
}

/**
 * The observer that does nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noop: Service = { observe: () => Effect.void }

/**
 * The prompt observer, a reference that defaults to {@link noop}: the agent loop always has one.
 *
 * @since 0.1.0
 * @category tags
 */
export class PromptObserver extends Context.Reference<PromptObserver>()("@engram/runtime/PromptObserver", {
  defaultValue: (): Service => noop
}) {}

/**
 * The no-op observer as a layer (to switch capture off again in a narrower scope).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNoop: Layer.Layer<PromptObserver> = Layer.succeed(PromptObserver, noop)

/**
 * The snapshots a capturing observer kept, in call order.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapturedPromptsService {
  readonly snapshots: Effect.Effect<ReadonlyArray<ObservedCall>>
}

/**
 * Access to what {@link layerCapture} kept.
 *
 * @since 0.1.0
 * @category tags
 */
export class CapturedPrompts extends Context.Tag("@engram/runtime/CapturedPrompts")<
  CapturedPrompts,
  CapturedPromptsService
>() {}

/**
 * An observer that keeps every snapshot in memory, and the {@link CapturedPrompts} that reads
 * them back. Each build starts empty. Every snapshot (and usage report) is also passed on to the
 * observer in context where the layer is built — none by default; `engram demo` builds it over
 * {@link layerTelemetry}, so it both shows and stores what the model saw.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCapture: Layer.Layer<PromptObserver | CapturedPrompts> = Layer.effectContext(
  Effect.map(PromptObserver, (outer) => {
    const kept: Array<ObservedCall> = []
    const observer: Service = {
      observe: (snapshot) => Effect.zipRight(Effect.sync(() => void kept.push(snapshot)), outer.observe(snapshot)),
      usage: outer.usage
    }
    return Context.make(PromptObserver, observer).pipe(
      Context.add(CapturedPrompts, { snapshots: Effect.sync(() => [...kept]) })
    )
  })
)

/**
 * Every snapshot captured so far, in call order.
 *
 * @since 0.1.0
 * @category accessors
 */
export const captured: Effect.Effect<ReadonlyArray<ObservedCall>, never, CapturedPrompts> = Effect.flatMap(
  CapturedPrompts,
  (capture) => capture.snapshots
)

/**
 * Reports a call's token usage to the observer in context (if it takes usage).
 *
 * @since 0.1.0
 * @category observing
 */
export const reportUsage = (key: Stored.SnapshotKey, usage: Stored.TokenUsage): Effect.Effect<void> =>
  Effect.flatMap(PromptObserver, (observer) => observer.usage === undefined ? Effect.void : observer.usage(key, usage))

/**
 * Reports a snapshot to the observer in context.
 *
 * @since 0.1.0
 * @category observing
 */
export const observe = (snapshot: ObservedCall): Effect.Effect<void> =>
  Effect.flatMap(PromptObserver, (observer) => observer.observe(snapshot))

// ---------------------------------------------------------------------------------------------
// Persisting snapshots
// ---------------------------------------------------------------------------------------------

/**
 * Full-text capture: the request's text, passed through `redact`, cut at `maxBytes` UTF-8 bytes.
 *
 * @since 0.1.0
 * @category models
 */
export interface FullTextCapture {
  readonly maxBytes: number
  readonly redact?: ((text: string) => string) | undefined
}

/**
 * How {@link layerTelemetry} persists: the model name to record, and full-text capture (off by
 * default: snapshots hold references only).
 *
 * @since 0.1.0
 * @category models
 */
export interface TelemetryOptions {
  readonly model?: string | undefined
  readonly fullText?: FullTextCapture | undefined
}

const encoder = new TextEncoder()

/**
 * The text of a request as one string: every fragment's text, messages separated by a blank line.
 * What full-text capture stores and what {@link requestHash} covers (with the attribution).
 *
 * @since 0.1.0
 * @category persisting
 */
export const requestText = (request: ModelRequest.ModelRequest): string => {
  const messages: Array<string> = []
  for (const fragment of request.fragments) {
    messages[fragment.message] = (messages[fragment.message] ?? `[${fragment.role}]\n`) + fragment.text
  }
  return messages.join("\n\n")
}

/**
 * The content hash of a composed request: its model-visible prompt ({@link modelVisible}) and its
 * attribution, so two requests share a hash only when they are the same bytes from the same
 * sources.
 *
 * @since 0.1.0
 * @category persisting
 */
export const requestHash = (request: ModelRequest.ModelRequest): Trajectory.ContentHash =>
  Trajectory.contentHash(
    JSON.stringify({
      prompt: modelVisible(request),
      fragments: request.fragments.map((f) => [f.message, f.role, f.source, f.label, f.text, f.memoryIds]),
      strippedFrames: request.strippedFrames
    })
  )

/**
 * A request's prompt messages as JSON text without provider options (cache hints and the like
 * steer the provider, not the model): the bytes a snapshot vouches for.
 *
 * @since 0.1.0
 * @category persisting
 */
export const modelVisible = (request: ModelRequest.ModelRequest): string =>
  JSON.stringify(request.prompt.content, (key, value) => (key === "options" ? undefined : value))

const cut = (text: string, maxBytes: number): Stored.FullText => {
  const bytes = encoder.encode(text).length
  if (bytes <= maxBytes) return { text, bytes, truncated: false }
  let end = Math.min(text.length, Math.max(0, Math.floor(maxBytes)))
  while (end > 0 && encoder.encode(text.slice(0, end)).length > maxBytes) end--
  // Never split a surrogate pair.
  if (end > 0 && /[\uD800-\uDBFF]/.test(text[end - 1]!)) end--
  return { text: text.slice(0, end), bytes, truncated: true }
}

/**
 * The stored form of one observed call: the snapshot (references only) and the trajectory entries
 * it refers to — the prefix blob, the projection blob and the messages from position `fromSeq`
 * on (earlier ones are already stored). Pure.
 *
 * @since 0.1.0
 * @category persisting
 */
export const toStored = (
  snapshot: ObservedCall & { readonly inputs: ModelRequest.RequestInput },
  options: TelemetryOptions & { readonly at: DateTime.Utc; readonly fromSeq?: number | undefined }
): { readonly snapshot: Stored.PromptSnapshot; readonly entries: ReadonlyArray<Trajectory.TrajectoryEntry> } => {
  const { inputs, request } = snapshot
  const stream = [...inputs.history, inputs.input, ...inputs.rounds]
  const inputSeq = inputs.history.length
  const prefixBlob = inputs.prefix.length > 0 ? Trajectory.prefixBlob(inputs.prefix) : undefined
  const projectionBlob = inputs.projection.isEmpty ? undefined : Trajectory.projectionBlob(inputs.projection)
  const overlayBlob = snapshot.overlay === undefined ? undefined : Trajectory.overlayBlob(snapshot.overlay)
  const entries: Array<Trajectory.TrajectoryEntry> = []
  if (prefixBlob !== undefined) entries.push(prefixBlob)
  if (overlayBlob !== undefined) entries.push(overlayBlob)
  stream.forEach((message, seq) => {
    if (seq >= (options.fromSeq ?? 0)) entries.push(Trajectory.messageEntry(seq, message))
  })
  if (projectionBlob !== undefined) entries.push(projectionBlob)
  const budget = inputs.projection.budget
  const text = requestText(request)
  const stored = new Stored.PromptSnapshot({
    sessionId: snapshot.sessionId,
    turn: snapshot.turn,
    call: snapshot.call,
    mode: inputs.projection.mode,
    at: options.at,
    model: options.model ?? null,
    tools: snapshot.tools,
    scopes: snapshot.scopes ?? null,
    overlay: overlayBlob?.hash ?? null,
    prefix: {
      hash: prefixBlob?.hash ?? null,
      chars: PromptFragment.joinPrompt(inputs.prefix).length,
      sections: inputs.prefix.map((section) => {
        const sectionText = PromptFragment.joinFragments(section.fragments)
        return {
          name: section.name,
          source: section.source,
          chars: sectionText.length,
          hash: Trajectory.contentHash(sectionText),
          fragments: section.fragments.map((f) => ({
            source: f.source,
            chars: f.text.length,
            memoryIds: f.source === "memory" ? f.memoryIds : []
          }))
        }
      })
    },
    messages: { input: inputSeq, count: stream.length },
    projection: {
      hash: projectionBlob?.hash ?? null,
      chars: inputs.projection.text.length,
      budgetTokens: budget.budgetTokens,
      budgetChars: budget.budgetChars,
      sections: inputs.projection.sections,
      shed: budget.shed,
      withheld: budget.withheld,
      suppressed: budget.suppressed
    },
    strippedFrames: stream.flatMap((message, seq) =>
      SessionStore.isLegacyContextFrame(message) ? [{ seq, hash: Trajectory.messageEntry(seq, message).hash }] : []
    ),
    request: { hash: requestHash(request), chars: text.length, messages: request.prompt.content.length },
    usage: null,
    fullText: options.fullText === undefined
      ? null
      : cut((options.fullText.redact ?? ((t: string) => t))(text), options.fullText.maxBytes)
  }, { disableValidation: true })
  return { snapshot: stored, entries }
}

/**
 * An observer that persists every call's snapshot to the `TelemetryStore`: references into the
 * session's trajectory (prefix and projection stored once per session, each message once), and
 * full text only when {@link TelemetryOptions.fullText} asks for it. A failed write is logged,
 * never raised: observing cannot fail the call.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTelemetry = (
  options: TelemetryOptions = {}
): Layer.Layer<PromptObserver, never, TelemetryStore.TelemetryStore> =>
  Layer.effect(
    PromptObserver,
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      // Positions of each session's stream this observer has stored; only newer ones are sent.
      const stored = new Map<string, number>()
      const observer: Service = {
        observe: (snapshot) => {
          const inputs = snapshot.inputs
          if (inputs === undefined) {
            return Effect.logWarning("a prompt snapshot without its inputs cannot be persisted").pipe(
              Effect.annotateLogs({ sessionId: snapshot.sessionId, turn: snapshot.turn, call: snapshot.call })
            )
          }
          return Effect.gen(function*() {
            const at = yield* DateTime.now
            const { entries, snapshot: row } = toStored({ ...snapshot, inputs }, {
              ...options,
              at,
              fromSeq: stored.get(snapshot.sessionId) ?? 0
            })
            yield* store.appendSnapshot(row, entries)
            stored.set(snapshot.sessionId, Math.max(stored.get(snapshot.sessionId) ?? 0, row.messages.count))
          }).pipe(
            Effect.catchAll((error) =>
              Effect.logWarning("a prompt snapshot could not be stored").pipe(
                Effect.annotateLogs({
                  sessionId: snapshot.sessionId,
                  turn: snapshot.turn,
                  call: snapshot.call,
                  problem: error.message
                })
              )
            ),
            Effect.withSpan("engram.PromptObserver.persist", {
              attributes: { sessionId: snapshot.sessionId, turn: snapshot.turn, call: snapshot.call }
            })
          )
        },
        usage: (key, usage) =>
          store.recordUsage(key, usage).pipe(
            Effect.flatMap((found) =>
              found ? Effect.void : Effect.logWarning("token usage arrived for a call with no stored snapshot")
            ),
            Effect.catchAll((error) =>
              Effect.logWarning("token usage could not be stored").pipe(Effect.annotateLogs({ problem: error.message }))
            ),
            Effect.annotateLogs({ sessionId: key.sessionId, turn: key.turn, call: key.call })
          )
      }
      return observer
    })
  )
