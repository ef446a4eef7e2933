/**
 * Forget reaches the prompt telemetry, on the path that ships: a memory recalled into a native-loop
 * call (and saved by the model through memory_save) is forgotten with `MemoryStore.forget`; its
 * text is then gone from every stored snapshot and trajectory row — checked with SQL over the raw
 * tables — and `Inspect` reports the calls as redacted rather than tampered with. In-memory and
 * SQLite stores alike.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  SessionStore,
  TelemetryStore,
  Trajectory
} from "@engram/core"
import { Inspect, NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const SECRET = "The vault combination is 31-07-55"
const SAVED = "The backup vault sits in Zurich"

const script: ScriptedModel.Script = (request) =>
  ScriptedModel.pendingToolResults(request).length > 0
    ? [ScriptedModel.text("Saved.")]
    : [ScriptedModel.toolCall("memory_save", { kind: "fact", content: SAVED })]

const common = Layer.mergeAll(
  ContextProjection.layer,
  ScriptedModel.layer(script),
  PromptObserver.layerTelemetry({ fullText: { maxBytes: 100_000 } }),
  IdGenerator.sequential("mem")
)

const sqlite = common.pipe(
  Layer.provideMerge(
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
  )
)
const memory = common.pipe(
  Layer.provideMerge(
    MemoryStore.layerMemoryCascading.pipe(
      Layer.provideMerge(
        Layer.mergeAll(PromotionStore.layerMemory, SessionStore.layerMemory, TelemetryStore.layerMemory)
      )
    )
  )
)

/** A memory whose id is longer than a handle: the projection names it by a short hashed handle. */
const LONG_ID = "conversation-vault-2024-turn-0007"

const scenarioOf = (longId: boolean) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const [secret] = yield* memories.write([
      longId
        ? { id: LONG_ID, content: SECRET, kind: "episode", scope: "global", sourceType: "conversation" }
        : { content: SECRET, kind: "fact", scope: "global", sourceType: "operator" }
    ])
    const agent = yield* NativeRuntime.make({
      prefix: [{ name: "identity", source: "role", fragments: [{ source: "authored", text: "You keep the vault." }] }],
      memory: {
        scope: "global",
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      }
    })
    yield* NativeRuntime.runTurn({ agent, sessionId: "s-v", input: "what is the vault combination?" })
    const telemetry = yield* TelemetryStore.TelemetryStore
    const before = yield* Inspect.inspectSession("s-v")
    const handle = before[0]!.projection.handleOf(secret!.id)
    // A long id is named by a handle in the text; the projection maps it back.
    expect(handle === secret!.id).toBe(!longId)
    expect(before[0]!.projection.text).toContain(longId ? `- [${handle}] ${SECRET}` : `- [${handle} · fact]`)
    expect(before.map((c) => c.verified)).toEqual([true, true])
    const all = (t: Trajectory.StoredTrajectory) => [...t.messages, ...t.blobs].map((e) => e.body).join("\n")
    expect(all(yield* telemetry.readTrajectory("s-v"))).toContain(SECRET)
    const saved = (yield* memories.list({ scopes: ["global"] })).records.find((r) => r.content === SAVED)!

    const { tombstones } = yield* memories.forget({ ids: [secret!.id, saved.id] }, { by: "operator:test" })
    expect(tombstones).toHaveLength(2)

    const trajectory = yield* telemetry.readTrajectory("s-v")
    expect(trajectory.skipped).toBe(0)
    expect(all(trajectory)).not.toContain(SECRET)
    expect(all(trajectory)).not.toContain(SAVED)
    const { snapshots } = yield* telemetry.listSnapshots("s-v")
    for (const s of snapshots) {
      expect(s.fullText!.text).not.toContain(SECRET)
      expect(s.redacted).toContain(secret!.id)
    }
    // The second call saw the model's save (its tool call and result); that text is gone too.
    expect(snapshots[1]!.redacted).toEqual([secret!.id, saved.id].sort())
    const after = yield* Inspect.inspectSession("s-v")
    expect(after.map((c) => [c.verified, c.redacted.length > 0])).toEqual([[false, true], [false, true]])
    expect(after[0]!.projection.text).toContain(`- [${handle} · forgotten]`)
    return snapshots.length
  })
const scenario = scenarioOf(false)

describe("forget reaches prompt snapshots and the trajectory", () => {
  it.effect("SQLite: no row of either table holds the text after forget", () =>
    Effect.gen(function*() {
      expect(yield* scenario).toBe(2)
      const sql = yield* SqlClient.SqlClient
      for (const text of [SECRET, SAVED]) {
        const rows = yield* sql<{ n: number }>`SELECT
          (SELECT COUNT(*) FROM engram_trajectory WHERE instr(body, ${text}) > 0) +
          (SELECT COUNT(*) FROM engram_prompt_snapshots WHERE instr(body, ${text}) > 0) AS n`
        expect(rows[0]!.n).toBe(0)
      }
    }).pipe(Effect.provide(sqlite)))

  it.effect("in memory: the same", () => Effect.map(scenario, (n) => expect(n).toBe(2)).pipe(Effect.provide(memory)))

  it.effect("a line that names its memory by a short handle is redacted by the handle the projection maps (decision 0183)", () =>
    Effect.map(scenarioOf(true), (n) => expect(n).toBe(2)).pipe(Effect.provide(sqlite)))
})

describe("forget is one transaction with the telemetry on SQLite", () => {
  it.effect("when removing the text from telemetry fails, the record is not forgotten either", () =>
    Effect.gen(function*() {
      const memories = yield* MemoryStore.MemoryStore
      const [record] = yield* memories.write([{
        content: SECRET,
        kind: "fact",
        scope: "global",
        sourceType: "operator"
      }])
      // The memory store took this telemetry store when it was built (decision 0164): its
      // forgetMemories fails for the length of this call.
      const real = (yield* TelemetryStore.TelemetryStore) as {
        forgetMemories: TelemetryStore.Service["forgetMemories"]
      }
      const working = real.forgetMemories
      const failed = yield* Effect.acquireUseRelease(
        Effect.sync(() => {
          real.forgetMemories = () =>
            Effect.fail(
              new TelemetryStore.TelemetryStoreFailure({ operation: "forgetMemories", cause: new Error("disk full") })
            )
        }),
        () => Effect.flip(memories.forget({ ids: [record!.id] }, { by: "operator:test" })),
        () => Effect.sync(() => (real.forgetMemories = working))
      )
      expect(failed._tag).toBe("MemoryStoreFailure")
      // Rolled back: the record is still there and no tombstone was written.
      expect((yield* memories.get([record!.id])).records.map((r) => r.id)).toEqual([record!.id])
      expect(yield* memories.tombstones({ ids: [record!.id] })).toEqual([])
    }).pipe(Effect.provide(sqlite)))
})
