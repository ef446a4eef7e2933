/**
 * `Replay.verifySession`: a stored session re-run against its prompt snapshots — equal bytes while
 * the stores are as they were, and the first differing byte (offset and context) once the memory
 * changed. Also the full-text capture setting of the telemetry observer: off by default, bounded
 * in bytes, redacted.
 */
import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, MemoryStore, TelemetryStore } from "@engram/core"
import { Inspect, NativeRuntime, PromptObserver, Replay } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { agent, memoryStores, seed } from "./agentFixtures.js"

const script: ScriptedModel.Script = (request) =>
  ScriptedModel.pendingToolResults(request).length > 0
    ? [ScriptedModel.text("Done.")]
    : ScriptedModel.lastUserText(request).startsWith("recall ")
    ? [ScriptedModel.toolCall("memory_recall", { query: ScriptedModel.lastUserText(request).slice(7) })]
    : [ScriptedModel.text("Sure.")]

const env = (options: PromptObserver.TelemetryOptions = {}) =>
  Layer.mergeAll(ContextProjection.layer, ScriptedModel.layer(script), PromptObserver.layerTelemetry(options))
    .pipe(Layer.provideMerge(memoryStores))

describe("Replay.firstDifference", () => {
  it("is undefined for equal texts and names the first differing UTF-8 byte otherwise", () => {
    expect(Replay.firstDifference("same ✓ text", "same ✓ text")).toBeUndefined()
    // "é" is two bytes: the difference is at byte 3 + 2, not at character 4.
    const d = Replay.firstDifference("café au lait", "café noir", 4)!
    expect(d.offset).toBe(6)
    expect(d.expected).toBe("fé au l")
    expect(d.actual).toBe("fé noir")
    expect(Replay.firstDifference("abc", "abcd")).toMatchObject({ offset: 3, expectedBytes: 3, actualBytes: 4 })
  })
})

describe("Replay.verifySession", () => {
  it.effect("matches every stored call byte for byte, then reports where a changed memory makes a re-run differ", () =>
    Effect.gen(function*() {
      yield* seed([{ content: "The staging database is db-2", kind: "fact" }])
      yield* TestClock.adjust("1 hour")
      const live = yield* agent({ workingState: "goal: ship" })
      yield* NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input: "which staging database?" })
      yield* NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input: "recall staging database" })

      const same = yield* Replay.verifySession({ agent: live, sessionId: "s-1" })
      expect(same.map((c) => [c.turn, c.call, c.stored, c.matches])).toEqual([
        [1, 0, true, true],
        [2, 0, true, true],
        [2, 1, true, true]
      ])

      // The memory changed since: the re-run projects the new record too.
      yield* Effect.flatMap(
        MemoryStore.MemoryStore,
        (store) =>
          store.write([{
            content: "The staging database moved to db-7",
            kind: "fact",
            scope: "global",
            sourceType: "operator"
          }])
      )
      const changed = yield* Replay.verifySession({ agent: live, sessionId: "s-1" })
      expect(changed.every((c) => c.stored && !c.matches)).toBe(true)
      const first = changed[0]!.difference!
      expect(first.offset).toBeGreaterThan(0)
      // Where they part: the re-run has the new record's line where the stored call went on.
      expect(first.actual).toContain("- [mem-000002 · fact] The staging datab")
      expect(first.expected).not.toContain("mem-000002")
      expect(first.actualBytes).toBeGreaterThan(first.expectedBytes)
    }).pipe(Effect.provide(env())))
})

const redact = (text: string) => text.replace(/sk-[A-Za-z0-9]+/g, "sk-…")

describe("full-text capture", () => {
  it.effect("is off by default: a snapshot holds references only", () =>
    Effect.gen(function*() {
      const live = yield* agent()
      yield* NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input: "hello" })
      const { snapshots } = yield* Effect.flatMap(TelemetryStore.TelemetryStore, (t) => t.listSnapshots("s-1"))
      expect(snapshots.map((s) => s.fullText)).toEqual([null])
    }).pipe(Effect.provide(env())))

  it.effect("keeps the redacted request text, cut at the byte bound on a character boundary", () =>
    Effect.gen(function*() {
      const live = yield* agent({ workingState: "token sk-SECRET123 — café ☕ ".repeat(20) })
      yield* NativeRuntime.runTurn({ agent: live, sessionId: "s-1", input: "hello sk-OTHER999" })
      const { snapshots } = yield* Effect.flatMap(TelemetryStore.TelemetryStore, (t) => t.listSnapshots("s-1"))
      const full = snapshots[0]!.fullText!
      // The request as sent, rebuilt from the trajectory, redacted: the capture is its first bytes.
      const [call] = yield* Inspect.inspectSession("s-1")
      const whole = redact(PromptObserver.requestText(call!.request))
      const bytes = new TextEncoder().encode(full.text).length
      expect(full.truncated).toBe(true)
      expect(full.bytes).toBe(new TextEncoder().encode(whole).length)
      expect(whole.startsWith(full.text)).toBe(true)
      expect(bytes).toBeLessThanOrEqual(300)
      expect(bytes).toBeGreaterThan(296)
      expect(full.text).not.toContain("sk-SECRET123")
      expect(full.text).toContain("sk-…")
      expect(full.text).not.toContain("\uFFFD")
    }).pipe(Effect.provide(env({ fullText: { maxBytes: 300, redact } }))))
})
