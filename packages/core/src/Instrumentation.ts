/**
 * Instrumentation: Engram's spans and metrics, with stable names, ready for any Effect tracer and
 * metrics exporter — `@effect/opentelemetry`'s `NodeSdk.layer` exports them to OpenTelemetry (see
 * `docs/guides/observability.md`).
 *
 * **Spans** (names are stable; attributes carry ids, counts and sizes — never memory content):
 *
 * | span | where | attributes |
 * | --- | --- | --- |
 * | `agent.turn`, `agent.resume` | one per turn | `sessionId`, `engram.turn`, `engram.memories.prefix`, `engram.memories.projected`, `engram.budget.used_chars`, `engram.budget.used_tokens`, `engram.budget.chars`, `engram.budget.tokens`, `engram.budget.shed`, `engram.calls` |
 * | `agent.model.call` | one per model call | `sessionId`, `turn`, `call`, `engram.request.chars`, `engram.request.messages`, `engram.tools`, usage tokens when reported |
 * | `agent.tool` | one per tool call | `tool` |
 * | `engram.projection` | one per projection | `sessionId`, `turn`, `mode`, `usedChars`, `usedTokens`, `budgetChars`, `budgetTokens`, `memories`, `shed` |
 * | `engram.<Service>.<method>` | every method of the stores, with {@link layerStores} | `engram.service`, `engram.method`, `engram.result.count`, `engram.result.skipped` |
 *
 * A budget attribute in the unit the budget is not in is `-1` (both are when it is unbounded).
 *
 * Libraries underneath may add their own attributes: `@effect/ai` records a tool call's
 * parameters on its `Toolkit.handle` span — for `memory_save`, the memory's content.
 * {@link layerRedaction} drops those; {@link layer} (stores + redaction) is what to provide.
 *
 * **Metrics**:
 *
 * | metric | kind | tags |
 * | --- | --- | --- |
 * | `engram_store_latency_ms` | histogram | `service`, `method`, `outcome` (`ok`/`error`) |
 * | `engram_store_rows_skipped` | counter | `service`, `method` |
 * | `engram_projection_chars` | histogram | `section` |
 * | `engram_projection_shed` | counter | `section` |
 * | `engram_gate_conflicts` | counter | `spec` |
 *
 * @since 0.1.0
 */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as MetricBoundaries from "effect/MetricBoundaries"
import * as Tracer from "effect/Tracer"
import * as MemoryStore from "./MemoryStore.js"
import type * as ProjectionLayout from "./ProjectionLayout.js"
import * as PromotionStore from "./PromotionStore.js"
import * as SessionStore from "./SessionStore.js"
import * as TelemetryStore from "./TelemetryStore.js"

/**
 * Latency of every store method (milliseconds), tagged `service`, `method`, `outcome`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const storeLatency = Metric.histogram(
  "engram_store_latency_ms",
  MetricBoundaries.exponential({ start: 0.25, factor: 2, count: 16 }),
  "Latency of Engram store methods in milliseconds"
)

/**
 * Stored rows a store method skipped because they failed to decode, tagged `service`, `method`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const storeRowsSkipped = Metric.counter("engram_store_rows_skipped", {
  description: "Stored rows Engram skipped because they failed to decode",
  incremental: true
})

/**
 * Characters each projection section delivered (tags included), tagged `section`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const projectionChars = Metric.histogram(
  "engram_projection_chars",
  MetricBoundaries.exponential({ start: 16, factor: 2, count: 14 }),
  "Characters delivered per projection section"
)

/**
 * Lines shed from a projection for budget, tagged `section`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const projectionShed = Metric.counter("engram_projection_shed", {
  description: "Projection lines shed for budget",
  incremental: true
})

/**
 * Saves the gate held because a live record already holds the address, tagged `spec`.
 *
 * @since 0.1.0
 * @category metrics
 */
export const gateConflicts = Metric.counter("engram_gate_conflicts", {
  description: "memory_save calls held by the save gate because the address is taken",
  incremental: true
})

/**
 * Saves the gate found restating the live value of their slot: nothing written, the holder
 * corroborated (decision 0171).
 *
 * @since 0.1.0
 * @category metrics
 */
export const gateRestatements = Metric.counter("engram_gate_restatements", {
  description: "memory_save calls that restated a live value: nothing written, the holder corroborated",
  incremental: true
})

/**
 * Records a projection's per-section chars and sheds. The projection service calls it once per
 * projection.
 *
 * @since 0.1.0
 * @category metrics
 */
export const recordProjection = (projection: ProjectionLayout.ProjectedContext): Effect.Effect<void> =>
  Effect.forEach(
    projection.sections,
    (section) =>
      Effect.zipRight(
        Metric.update(Metric.tagged(projectionChars, "section", section.label), section.chars),
        section.shed > 0
          ? Metric.incrementBy(Metric.tagged(projectionShed, "section", section.label), section.shed)
          : Effect.void
      ),
    { discard: true }
  )

const countOf = (value: unknown): number | undefined => {
  if (Array.isArray(value)) return value.length
  if (typeof value !== "object" || value === null) return undefined
  for (const key of ["records", "hits", "rows", "snapshots", "messages", "tombstones"]) {
    const field = (value as Record<string, unknown>)[key]
    if (Array.isArray(field)) return field.length
  }
  return undefined
}

const skippedOf = (value: unknown): number =>
  typeof value === "object" && value !== null && typeof (value as { skipped?: unknown }).skipped === "number"
    ? (value as { skipped: number }).skipped
    : 0

/** Own properties and, for a class instance, its prototype methods (constructor excluded). */
const methodsOf = (implementation: object): ReadonlyArray<readonly [string, unknown]> => {
  const seen = new Map<string, unknown>(Object.entries(implementation))
  for (
    let proto = Object.getPrototypeOf(implementation);
    proto !== null && proto !== Object.prototype;
    proto = Object.getPrototypeOf(proto)
  ) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== "constructor" && !seen.has(name)) seen.set(name, (implementation as Record<string, unknown>)[name])
    }
  }
  return [...seen.entries()]
}

/**
 * Wraps every method of a service that returns an Effect in a span `engram.<service>.<method>`
 * and records {@link storeLatency} and {@link storeRowsSkipped}. Arguments are never recorded
 * (they hold memory content); results only as counts. Other properties are copied as they are.
 *
 * @since 0.1.0
 * @category instrumenting
 */
export const instrument = <S extends object>(service: string, implementation: S): S => {
  const out: Record<string, unknown> = {}
  for (const [method, value] of methodsOf(implementation)) {
    if (typeof value !== "function") {
      out[method] = value
      continue
    }
    const latency = storeLatency.pipe(Metric.tagged("service", service), Metric.tagged("method", method))
    const skipped = storeRowsSkipped.pipe(Metric.tagged("service", service), Metric.tagged("method", method))
    out[method] = (...args: Array<unknown>) => {
      const result: unknown = (value as (...a: Array<unknown>) => unknown).apply(implementation, args)
      if (!Effect.isEffect(result)) return result
      return Effect.gen(function*() {
        const start = performance.now()
        const exit = yield* Effect.exit(result as Effect.Effect<unknown, unknown, unknown>)
        const ms = performance.now() - start
        yield* Metric.update(Metric.tagged(latency, "outcome", Exit.isSuccess(exit) ? "ok" : "error"), ms)
        if (Exit.isSuccess(exit)) {
          const count = countOf(exit.value)
          const rowsSkipped = skippedOf(exit.value)
          yield* Effect.annotateCurrentSpan({
            ...(count !== undefined ? { "engram.result.count": count } : {}),
            "engram.result.skipped": rowsSkipped
          })
          if (rowsSkipped > 0) yield* Metric.incrementBy(skipped, rowsSkipped)
        }
        return yield* exit
      }).pipe(
        Effect.withSpan(`engram.${service}.${method}`, {
          attributes: { "engram.service": service, "engram.method": method }
        })
      )
    }
  }
  return out as S
}

const wrap = <I, S extends object>(tag: Context.Tag<I, S>, name: string): Layer.Layer<I, never, I> =>
  Layer.effect(tag, Effect.map(tag, (service) => instrument(name, service)))

/**
 * Replaces the memory, promotion, session and telemetry stores in context with instrumented ones
 * (see {@link instrument}). Provide it between the stores and what uses them:
 * `app.pipe(Layer.provide(Instrumentation.layerStores), Layer.provide(stores))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStores: Layer.Layer<
  MemoryStore.MemoryStore | PromotionStore.PromotionStore | SessionStore.SessionStore | TelemetryStore.TelemetryStore,
  never,
  MemoryStore.MemoryStore | PromotionStore.PromotionStore | SessionStore.SessionStore | TelemetryStore.TelemetryStore
> = Layer.mergeAll(
  wrap(MemoryStore.MemoryStore, "MemoryStore"),
  wrap(PromotionStore.PromotionStore, "PromotionStore"),
  wrap(SessionStore.SessionStore, "SessionStore"),
  wrap(TelemetryStore.TelemetryStore, "TelemetryStore")
)

/**
 * Span attributes that carry content, by span name, which {@link redactingTracer} drops.
 *
 * @since 0.1.0
 * @category redaction
 */
export const CONTENT_ATTRIBUTES: Readonly<Record<string, ReadonlyArray<string>>> = {
  "Toolkit.handle": ["parameters"]
}

/**
 * A tracer that delegates to `tracer` but drops the {@link CONTENT_ATTRIBUTES} of the spans it
 * makes.
 *
 * @since 0.1.0
 * @category redaction
 */
export const redactingTracer = (tracer: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (name, parent, context, links, startTime, kind, options) => {
      const span = tracer.span(name, parent, context, links, startTime, kind, options)
      const dropped = CONTENT_ATTRIBUTES[name]
      if (dropped === undefined) return span
      const attribute = span.attribute.bind(span)
      span.attribute = (key, value) => (dropped.includes(key) ? undefined : attribute(key, value))
      return span
    },
    context: (f, fiber) => tracer.context(f, fiber)
  })

/**
 * Wraps the tracer in place (the OpenTelemetry one, when its layer is provided below this one) in
 * {@link redactingTracer}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerRedaction: Layer.Layer<never> = Layer.unwrapEffect(
  Effect.map(Effect.tracer, (tracer) => Layer.setTracer(redactingTracer(tracer)))
)

/**
 * Everything Engram adds for tracing: instrumented stores ({@link layerStores}) and the redacting
 * tracer ({@link layerRedaction}). Provide the OpenTelemetry layer below it:
 * `app.pipe(Layer.provide(Instrumentation.layer), Layer.provide(stores), Layer.provide(otel))`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = Layer.merge(layerStores, layerRedaction)
