import { describe, expect, it } from "@effect/vitest"
import { InjectionLog, MemoryRecord, ProjectionLayout, TelemetryStore } from "@engram/core"
import { DateTime, Effect, Either, Schema } from "effect"
import * as fc from "fast-check"

const at = DateTime.unsafeMake("2025-03-01T12:00:00.000Z")
const doug = MemoryRecord.fromWriteInput(
  { content: "My name is Doug", kind: "profile", label: "name", sourceType: "operator" },
  { id: "m-1", now: at }
)
const input: ProjectionLayout.ProjectionInput = {
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
      const native = ProjectionLayout.composeProjectedContext(input, {
        mode: "native",
        budget: ProjectionLayout.tokens(16_000)
      })
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
      const incognito = ProjectionLayout.composeProjectedContext(input, {
        mode: "incognito",
        budget: ProjectionLayout.tokens(16_000)
      })
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
      const projection = ProjectionLayout.composeProjectedContext(input, { budget: ProjectionLayout.tokens(16_000) })
      const error = yield* Effect.flip(
        store.appendInjection(InjectionLog.fromProjection(projection, { sessionId: "s-1", turn: -1, at }))
      )
      expect(error._tag).toBe("InvalidTelemetryRow")
      expect((yield* store.listInjections("s-1")).rows).toEqual([])
    }).pipe(Effect.provide(TelemetryStore.layerMemory)))

  it("round-trips a row through plain JSON", () => {
    const row = InjectionLog.fromProjection(
      ProjectionLayout.composeProjectedContext(input, { budget: ProjectionLayout.tokens(16_000) }),
      {
        sessionId: "s-1",
        turn: 0,
        at
      }
    )
    const decoded = InjectionLog.decodeStoredInjectionRow(JSON.parse(JSON.stringify(encode(row))))
    expect(decoded._tag).toBe("Right")
    if (decoded._tag === "Right") expect(encode(decoded.right)).toEqual(encode(row))
  })

  // Every backend stores what `encodeInjectionRow` returns; its hand-built encoding must be the
  // schema's, and what the schema refuses must be refused (with the schema's message).
  it("encodes a row as the schema does, and refuses what the schema refuses", () => {
    const oneOf = <A>(valid: fc.Arbitrary<A>, ...invalid: ReadonlyArray<unknown>) =>
      fc.oneof({ arbitrary: valid, weight: 4 }, fc.constantFrom(...invalid)) as fc.Arbitrary<unknown>
    const row = fc.record({
      sessionId: oneOf(fc.stringMatching(/^[A-Za-z0-9._\u00e9\u4e2d-]{1,12}$/), "", "a b", "x".repeat(201), 7),
      turn: oneOf(fc.nat(), -1, 1.5, Number.NaN, 2 ** 53, "3"),
      memoryIds: oneOf(
        fc.array(oneOf(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,20}$/), "", "a b", "-x", 3), { maxLength: 6 }),
        "m-1"
      ),
      sectionLabels: fc.array(oneOf(fc.constantFrom(...ProjectionLayout.SectionLabel.literals), "nope"), {
        maxLength: 4
      }),
      mode: oneOf(fc.constantFrom(...ProjectionLayout.ProjectionMode.literals), "bogus"),
      at: oneOf(
        fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }).map((d) => DateTime.unsafeMake(d)),
        DateTime.unsafeMakeZoned(at, { timeZone: "Europe/London" }),
        new Date(0),
        "2025-03-01T12:00:00.000Z"
      )
    }).map((fields) => new InjectionLog.InjectionLogRow(fields as never, { disableValidation: true }))
    const bySchema = Schema.encodeEither(InjectionLog.InjectionLogRow)
    let encoded = 0
    fc.assert(
      fc.property(row, (r) => {
        const expected = bySchema(r)
        const actual = Effect.runSync(Effect.either(InjectionLog.encodeInjectionRow(r)))
        if (Either.isRight(expected)) {
          encoded++
          expect(actual).toEqual(Either.right(expected.right))
        } else {
          expect(Either.isLeft(actual)).toBe(true)
        }
      }),
      { numRuns: 500 }
    )
    // Both sides of the property were exercised.
    expect(encoded).toBeGreaterThan(20)
    expect(encoded).toBeLessThan(480)
  })
})
