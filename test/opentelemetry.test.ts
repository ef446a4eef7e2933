/**
 * Engram's spans and metrics exported through `@effect/opentelemetry` (the `NodeSdk` layer) to
 * in-memory OpenTelemetry exporters, for one native-loop turn on SQLite with instrumented stores:
 * the turn and model-call spans with their attributes, a span per store method, the metrics, the
 * provider's token usage in the stored snapshot — and no memory content in any attribute.
 */
import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  Instrumentation,
  MemoryStore,
  RoutingPresets,
  RoutingSpecs,
  TelemetryStore
} from "@engram/core"
import { NativeRuntime, Promotion, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import {
  SqliteDatabase,
  SqliteEngram,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import { AggregationTemporality, MetricReader } from "@opentelemetry/sdk-metrics"
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** A metric reader the test pulls from. */
class PullReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE })
  }
  protected override onForceFlush() {
    return Promise.resolve()
  }
  protected override onShutdown() {
    return Promise.resolve()
  }
}

const SECRET = "My name is Doug and my locker code is 4471"

const script: ScriptedModel.Script = (request) =>
  ScriptedModel.pendingToolResults(request).length > 0
    ? [ScriptedModel.text("Noted."), finish(140, 6)]
    : [
      ScriptedModel.toolCall("memory_save", { kind: "profile", label: "name", content: "My name is Douglas" }),
      finish(120, 20)
    ]

const finish = (inputTokens: number, outputTokens: number) => ({
  type: "finish" as const,
  reason: "stop" as const,
  usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens, cachedInputTokens: 64 }
})

describe("OpenTelemetry export", () => {
  it.effect("one turn's spans and metrics reach the OTel exporters; usage lands in the snapshot; no content in attributes", () => {
    const spans = new InMemorySpanExporter()
    const reader = new PullReader()
    const otel = NodeSdk.layer(() => ({
      resource: { serviceName: "engram-test" },
      spanProcessor: new SimpleSpanProcessor(spans),
      metricReader: reader
    }))
    const stores = Layer.mergeAll(
      SqlitePromotionStore.layer,
      SqliteSessionStore.layer,
      SqliteTelemetryStore.layer
    ).pipe(
      Layer.provideMerge(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
      )
    )
    const environment = Layer.mergeAll(
      Layer.effect(ContextProjection.ContextProjection, ContextProjection.make({ budgetTokens: 4_000 })),
      ScriptedModel.layer(script),
      PromptObserver.layerTelemetry({ model: "scripted" }),
      RoutingSpecs.layerPresets
    ).pipe(
      // Everything above reads the instrumented stores.
      Layer.provideMerge(Instrumentation.layer),
      Layer.provideMerge(stores),
      Layer.provideMerge(IdGenerator.sequential("mem")),
      Layer.provideMerge(otel)
    )
    return Effect.gen(function*() {
      const [name] = yield* Effect.flatMap(
        MemoryStore.MemoryStore,
        (store) =>
          store.write([{ content: SECRET, kind: "profile", label: "name", scope: "global", sourceType: "operator" }])
      )
      // Eight long facts the query recalls: more than the 16,000-char budget holds, so some are shed.
      yield* Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        store.write(Array.from({ length: 8 }, (_, i) => ({
          content: `Locker rule ${i}:${" the code rotates weekly and is kept by the front desk".repeat(60)}`,
          kind: "fact" as const,
          scope: "global",
          sourceType: "operator" as const
        }))))
      yield* Promotion.promoteNew([name!], {
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      })
      const agent = yield* NativeRuntime.fromConfig({
        spec: "user-background",
        persona: "You are a companion.",
        background: RoutingPresets.userBackgroundSections
      }, { workingState: "goal: remember the locker" })
      // Effect's metrics are process-wide (other test files in this worker count too): what this
      // turn shed is what grew while it ran.
      const shedBySection = Effect.promise(() => reader.collect()).pipe(Effect.map((collected) =>
        new Map(
          collected.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
            .filter((m) => m.descriptor.name === "engram_projection_shed")
            .flatMap((m) => m.dataPoints as ReadonlyArray<{ attributes: Record<string, unknown>; value: number }>)
            .map((p) => [String(p.attributes["section"]), p.value] as const)
        )
      ))
      const shedBefore = yield* shedBySection
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-otel", input: "what is my locker code?" })
      const shedAfter = yield* shedBySection

      // Usage the provider reported is stored with each call's snapshot.
      const { snapshots } = yield* Effect.flatMap(TelemetryStore.TelemetryStore, (t) => t.listSnapshots("s-otel"))
      expect(snapshots.map((s) => s.usage)).toEqual([
        { inputTokens: 120, outputTokens: 20, totalTokens: 140, cachedInputTokens: 64 },
        { inputTokens: 140, outputTokens: 6, totalTokens: 146, cachedInputTokens: 64 }
      ])

      const finished = spans.getFinishedSpans()
      const named = (name: string) => finished.filter((s) => s.name === name)
      const [turn] = named("agent.turn")
      expect(turn).toBeDefined()
      expect(turn!.attributes).toMatchObject({
        sessionId: "s-otel",
        "engram.turn": 1,
        "engram.mode": "native",
        "engram.memories.prefix": 1,
        "engram.calls": 2
      })
      expect(turn!.attributes["engram.budget.used_chars"]).toBeGreaterThan(0)
      const calls = named("agent.model.call")
      expect(calls.map((c) => c.attributes["call"])).toEqual([0, 1])
      for (const call of calls) {
        expect(call.parentSpanContext?.spanId).toBe(turn!.spanContext().spanId)
        expect(call.attributes["engram.request.chars"]).toBeGreaterThan(0)
        expect(call.attributes["engram.tools"]).toBe(2)
      }
      expect(calls[0]!.attributes["engram.usage.inputTokens"]).toBe(120)
      expect(named("engram.projection")).toHaveLength(1)
      expect(named("agent.tool")).toHaveLength(1)
      // @effect/ai's tool span would carry memory_save's parameters; the redacting tracer drops them.
      expect(named("Toolkit.handle")[0]!.attributes).toEqual({ tool: "memory_save" })
      // A span per store method used, under the turn's trace.
      for (
        const name of [
          "engram.SessionStore.load",
          "engram.SessionStore.append",
          "engram.MemoryStore.search",
          "engram.TelemetryStore.appendSnapshot",
          "engram.TelemetryStore.recordUsage",
          "engram.TelemetryStore.appendInjection",
          "engram.PromotionStore.lookup"
        ]
      ) {
        const [span] = named(name)
        expect(span, name).toBeDefined()
        expect(span!.spanContext().traceId).toBe(turn!.spanContext().traceId)
      }
      expect(named("engram.SessionStore.load")[0]!.attributes).toMatchObject({
        "engram.service": "SessionStore",
        "engram.method": "load",
        "engram.result.count": 0
      })
      // No attribute of any span carries memory content or the operator's words.
      const values = finished.flatMap((s) => Object.values(s.attributes).map(String))
      for (const text of [SECRET, "Douglas", "locker"]) {
        expect(values.filter((v) => v.includes(text))).toEqual([])
      }

      const collected = yield* Effect.promise(() => reader.collect())
      const metrics = collected.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
      const metric = (name: string) => metrics.find((m) => m.descriptor.name === name)
      const points = (name: string) =>
        (metric(name)?.dataPoints ?? []) as ReadonlyArray<{ attributes: Record<string, unknown> }>
      expect(
        points("engram_store_latency_ms").some((p) =>
          p.attributes["service"] === "MemoryStore" && p.attributes["method"] === "search" &&
          p.attributes["outcome"] === "ok"
        )
      ).toBe(true)
      expect(points("engram_projection_chars").map((p) => p.attributes["section"])).toEqual(
        expect.arrayContaining(["working_state"])
      )
      // The model saved a second name while one is promoted: the gate held it.
      expect(points("engram_gate_conflicts").some((p) => p.attributes["spec"] === RoutingPresets.userBackground.key))
        .toBe(true)
      expect(turn!.attributes["engram.budget.shed"]).toBeGreaterThan(0)
      expect([...shedAfter].filter(([section, value]) => value > (shedBefore.get(section) ?? 0)).map(([s]) => s))
        .toEqual(["recalled_memory"])

      // A stored row that fails to decode is counted as skipped, per service and method (counted
      // as what grew: other files in this worker may skip rows of their own).
      const skippedBy = Effect.promise(() => reader.collect()).pipe(Effect.map((collected) =>
        new Map(
          collected.resourceMetrics.scopeMetrics.flatMap((s) => s.metrics)
            .filter((m) => m.descriptor.name === "engram_store_rows_skipped")
            .flatMap((m) => m.dataPoints as ReadonlyArray<{ attributes: Record<string, unknown>; value: number }>)
            .map((p) => [`${p.attributes["service"]}.${p.attributes["method"]}`, p.value] as const)
        )
      ))
      const skippedBefore = yield* skippedBy
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE engram_prompt_snapshots SET body = '{"not":"a snapshot"}' WHERE call = 1`
      expect((yield* Effect.flatMap(TelemetryStore.TelemetryStore, (t) => t.listSnapshots("s-otel"))).skipped).toBe(1)
      const skippedAfter = yield* skippedBy
      expect(
        [...skippedAfter].flatMap(([key, value]) => {
          const grew = value - (skippedBefore.get(key) ?? 0)
          return grew > 0 ? [[key, grew]] : []
        })
      ).toEqual([["TelemetryStore.listSnapshots", 1]])
    }).pipe(Effect.provide(environment))
  })
})
