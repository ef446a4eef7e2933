import { describe, expect, it } from "@effect/vitest"
import { runTelemetryStoreConformance, TelemetryStoreConformance } from "@engram/conformance"
import { TelemetryRetention, TelemetryStore } from "@engram/core"
import { Effect, Layer, Schedule, TestClock } from "effect"

runTelemetryStoreConformance("in-memory", TelemetryStore.layerMemory)

describe("TelemetryStore retention", () => {
  it.effect("TelemetryRetention.layer sweeps at start and on its schedule, by age and count", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const append = (sessionId: string, at: number) => {
        const { entries, snapshot } = TelemetryStoreConformance.snapshotFixture({ sessionId, at })
        return store.appendSnapshot(snapshot, entries)
      }
      // TestClock starts at 0: "a" is stamped at 0, "b" at 15 minutes. Sweeps run every 10 minutes.
      yield* append("a", 0)
      yield* append("b", 15 * 60_000)
      yield* Effect.scoped(Effect.gen(function*() {
        yield* Layer.buildWithScope(
          TelemetryRetention.layer({ maxAge: "1 hour", maxSessions: 5 }, Schedule.spaced("10 minutes")),
          yield* Effect.scope
        ).pipe(Effect.provideService(TelemetryStore.TelemetryStore, store))
        yield* TestClock.adjust("30 minutes")
        expect((yield* store.listSnapshots("a")).snapshots).toHaveLength(1)
        yield* TestClock.adjust("41 minutes") // the sweep at 70 min: "a" is over an hour old, "b" is not.
        expect((yield* store.listSnapshots("a")).snapshots).toHaveLength(0)
        expect((yield* store.listSnapshots("b")).snapshots).toHaveLength(1)
        yield* TestClock.adjust("10 minutes")
        expect((yield* store.listSnapshots("b")).snapshots).toHaveLength(0)
      }))
    }).pipe(Effect.provide(TelemetryStore.layerMemory)))

  it.effect("sweep keeps only the newest sessions when maxSessions is set", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      for (const [i, sessionId] of ["s-1", "s-2", "s-3"].entries()) {
        const { entries, snapshot } = TelemetryStoreConformance.snapshotFixture({ sessionId, at: i })
        yield* store.appendSnapshot(snapshot, entries)
      }
      const result = yield* TelemetryRetention.sweep({ maxSessions: 2 })
      expect(result.sessions).toEqual(["s-1"])
    }).pipe(Effect.provide(TelemetryStore.layerMemory)))
})
