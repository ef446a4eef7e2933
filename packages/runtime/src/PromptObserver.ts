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
import type { ProjectedContext } from "@engram/core"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as ModelRequest from "./ModelRequest.js"

/**
 * One model call as the model saw it.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptSnapshot {
  readonly sessionId: string
  readonly turn: number
  readonly call: number
  readonly request: ModelRequest.ModelRequest
  readonly tools: ReadonlyArray<string>
  readonly projection: ProjectedContext.ProjectedContext
}

/**
 * The observer interface. `observe` runs before the call is sent; it cannot fail the call.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromptObserverService {
  readonly observe: (snapshot: PromptSnapshot) => Effect.Effect<void>
}

/**
 * The observer that does nothing.
 *
 * @since 0.1.0
 * @category constructors
 */
export const noop: PromptObserverService = { observe: () => Effect.void }

/**
 * The prompt observer, a reference that defaults to {@link noop}: the agent loop always has one.
 *
 * @since 0.1.0
 * @category tags
 */
export class PromptObserver extends Context.Reference<PromptObserver>()("@engram/PromptObserver", {
  defaultValue: (): PromptObserverService => noop
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
  readonly snapshots: Effect.Effect<ReadonlyArray<PromptSnapshot>>
}

/**
 * Access to what {@link layerCapture} kept.
 *
 * @since 0.1.0
 * @category tags
 */
export class CapturedPrompts extends Context.Tag("@engram/CapturedPrompts")<
  CapturedPrompts,
  CapturedPromptsService
>() {}

/**
 * An observer that keeps every snapshot in memory, and the {@link CapturedPrompts} that reads
 * them back. Each build starts empty.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerCapture: Layer.Layer<PromptObserver | CapturedPrompts> = Layer.effectContext(
  Effect.sync(() => {
    const kept: Array<PromptSnapshot> = []
    const observer: PromptObserverService = { observe: (snapshot) => Effect.sync(() => void kept.push(snapshot)) }
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
export const captured: Effect.Effect<ReadonlyArray<PromptSnapshot>, never, CapturedPrompts> = Effect.flatMap(
  CapturedPrompts,
  (capture) => capture.snapshots
)

/**
 * Reports a snapshot to the observer in context.
 *
 * @since 0.1.0
 * @category observing
 */
export const observe = (snapshot: PromptSnapshot): Effect.Effect<void> =>
  Effect.flatMap(PromptObserver, (observer) => observer.observe(snapshot))
