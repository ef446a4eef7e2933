/**
 * The prior-session digest on every backend, through `ContextProjection` (what runtimes call):
 * it reads only the summaries of the request's scopes, counts no stopword as overlap, and lets
 * only each session's newest summary speak for it. The store is the only thing that changes.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  type MemoryRecord,
  MemoryStore,
  PromotionStore,
  TelemetryStore
} from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { describePg } from "../packages/store-pg/test/pgGate.js"

const summaries: ReadonlyArray<MemoryRecord.MemoryWriteInput> = [
  ContextProjection.summaryInput("s-a1", "Planned the Kubernetes upgrade", { scope: "project:a" }),
  ContextProjection.summaryInput("s-a1", "Cooked a risotto", { scope: "project:a" }),
  ContextProjection.summaryInput("s-a2", "Reviewed the Kubernetes dashboards", { scope: "project:a" }),
  ContextProjection.summaryInput("s-a3", "Went over the garden", { scope: "project:a" }),
  ContextProjection.summaryInput("s-b1", "Kubernetes in project b", { scope: "project:b" }),
  { ...ContextProjection.summaryInput("s-x", "Kubernetes, session scoped"), scope: "session:s-x" },
  { content: "Kubernetes went down once", kind: "episode", scope: "project:a", sourceType: "operator" }
]

const digestOf = (digest: "newest" | "relevant", query: string, scopes: ReadonlyArray<string> = ["project:a"]) =>
  Effect.gen(function*() {
    const projection = yield* Effect.provide(
      ContextProjection.make({ ...ContextProjection.defaultSettings, digest }),
      Layer.merge(TelemetryStore.layerMemory, PromotionStore.layerMemory)
    )
    const p = yield* projection.project({ sessionId: "s-now", turn: 1, query, scopes, mode: "native", record: false })
    return p.injection.priorSessionIds
  })

const suite = (name: string, stores: () => Layer.Layer<MemoryStore.MemoryStore>) =>
  describe(`prior-session digest: ${name}`, () => {
    it.effect("honours the request's scopes, ignores stopwords, uses each session's newest summary only", () =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        for (const input of summaries) {
          yield* store.write([input])
          yield* TestClock.adjust("1 second")
        }
        // newest: project:a's sessions only, newest summary first; no other project, no session scope.
        expect(yield* digestOf("newest", "kubernetes")).toEqual(["s-a3", "s-a2", "s-a1"])
        // relevant: s-a1's newest summary (the risotto) does not match, so its older one is not used.
        expect(yield* digestOf("relevant", "kubernetes")).toEqual(["s-a2"])
        // "the" is shared with three summaries, but it is no overlap.
        expect(yield* digestOf("relevant", "what is the status")).toEqual([])
      }).pipe(Effect.provide(Layer.merge(stores(), IdGenerator.sequential("mem")))))

    it.effect("finds summaries behind a thousand newer episodes, and scope-only summaries of other sessions", () =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* store.write([ContextProjection.summaryInput("s-old", "Planned the migration", { scope: "project:a" })])
        yield* TestClock.adjust("1 second")
        // A session's own scope makes its records its summaries, tag or no tag; the current one's never count.
        yield* store.write([{
          content: "Sorted the invoices",
          kind: "episode",
          scope: "session:s-y",
          sourceType: "operator"
        }])
        yield* store.write([{
          content: "This very session",
          kind: "episode",
          scope: "session:s-now",
          sourceType: "operator"
        }])
        yield* TestClock.adjust("1 second")
        // Newer episodes, some of them saying "session" without being a summary.
        yield* store.write(Array.from({ length: 1_100 }, (_, i) => ({
          content: i % 25 === 0 ? `turn ${i}: the session went well` : `turn ${i}: nothing much`,
          kind: "episode" as const,
          scope: "project:a",
          sourceType: "conversation" as const
        })))
        expect(yield* digestOf("newest", "anything", ["project:a", "session:s-y", "session:s-now"])).toEqual([
          "s-y",
          "s-old"
        ])
        expect(yield* digestOf("relevant", "the invoices", ["project:a", "session:s-y", "session:s-now"])).toEqual([
          "s-y"
        ])
      }).pipe(Effect.provide(Layer.merge(stores(), IdGenerator.sequential("mem")))))
  })

suite("in-memory", () => MemoryStore.layerMemory)
suite(
  "SQLite",
  () =>
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))).pipe(
      Layer.orDie
    )
)
describePg("prior-session digest: PostgreSQL", (url) => {
  suite("PostgreSQL", () =>
    PgEngram.layerStores().pipe(
      Layer.provide(PgDatabase.layerTemporarySchema({ url, maxConnections: 2 })),
      Layer.orDie
    ))
})
