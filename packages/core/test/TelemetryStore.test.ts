import { describe, expect, it } from "@effect/vitest"
import { InjectionLog, MemoryRecord, ProjectedContext, TelemetryStore } from "@engram/core"
import { DateTime, Effect, Schema } from "effect"

const at = DateTime.unsafeMake("2025-03-01T12:00:00.000Z")
const doug = MemoryRecord.fromWriteInput(
  { content: "My name is Doug", kind: "profile", label: "name", sourceType: "operator" },
  { id: "m-1", now: at }
)
const input: ProjectedContext.ProjectionInput = {
  now: at,
  workingState: "step 1",
  alwaysOn: [doug],
  skills: [{ name: "search", description: "find" }]
}
const encode = Schema.encodeSync(InjectionLog.InjectionLogRow)

describe("TelemetryStore (memory layer)", () => {
  it.effect("appends injection rows and lists them by session, in append order", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const native = ProjectedContext.composeProjectedContext(input, { mode: "native" })
      const first = InjectionLog.fromProjection(native, { sessionId: "s-1", turn: 1, at })
      const resumed = InjectionLog.fromProjection(native, { sessionId: "s-1", turn: 1, at })
      const other = InjectionLog.fromProjection(native, { sessionId: "s-2", turn: 1, at })
      yield* store.appendInjection(first)
      yield* store.appendInjection(other)
      yield* store.appendInjection(resumed)
      const log = yield* store.listInjections("s-1")
      expect(log.skipped).toBe(0)
      expect(log.rows.map((row) => encode(row))).toEqual([encode(first), encode(resumed)])
      expect(log.rows[0]).toMatchObject({
        sessionId: "s-1",
        turn: 1,
        memoryIds: ["m-1"],
        sectionLabels: ["working_state", "always_on_memory", "skills_index"],
        mode: "native"
      })
      expect(yield* store.listInjections("unknown")).toEqual({ rows: [], skipped: 0 })
    }).pipe(Effect.provide(TelemetryStore.layerMemory)))

  it.effect("an incognito turn's row names no memory, and a row that would is refused", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const incognito = ProjectedContext.composeProjectedContext(input, { mode: "incognito" })
      const row = InjectionLog.fromProjection(incognito, { sessionId: "s-1", turn: 2, at })
      expect(row.memoryIds).toEqual([])
      yield* store.appendInjection(row)
      const forged = new InjectionLog.InjectionLogRow({ ...row, memoryIds: ["m-1"] }, { disableValidation: true })
      const error = yield* Effect.flip(store.appendInjection(forged))
      expect(error._tag).toBe("InvalidTelemetryRow")
      expect(error.message).toContain("incognito projection must not name memories")
      const log = yield* store.listInjections("s-1")
      expect(log.rows.flatMap((r) => r.memoryIds)).toEqual([])
      expect(log.rows).toHaveLength(1)
    }).pipe(Effect.provide(TelemetryStore.layerMemory)))

  it.effect("refuses a row with an invalid turn", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const projection = ProjectedContext.composeProjectedContext(input)
      const error = yield* Effect.flip(
        store.appendInjection(InjectionLog.fromProjection(projection, { sessionId: "s-1", turn: -1, at }))
      )
      expect(error._tag).toBe("InvalidTelemetryRow")
      expect((yield* store.listInjections("s-1")).rows).toEqual([])
    }).pipe(Effect.provide(TelemetryStore.layerMemory)))

  it("round-trips a row through plain JSON", () => {
    const row = InjectionLog.fromProjection(ProjectedContext.composeProjectedContext(input), {
      sessionId: "s-1",
      turn: 0,
      at
    })
    const decoded = InjectionLog.decodeStoredInjectionRow(JSON.parse(JSON.stringify(encode(row))))
    expect(decoded._tag).toBe("Right")
    if (decoded._tag === "Right") expect(encode(decoded.right)).toEqual(encode(row))
  })
})
