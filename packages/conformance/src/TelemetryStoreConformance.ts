/**
 * The `TelemetryStore` conformance kit: one suite every telemetry-store backend runs from its own
 * vitest file, so the in-memory, SQLite and PostgreSQL stores keep the same injection log.
 *
 * Covered: rows read back field for field (millisecond timestamps, every mode, empty lists); one
 * row per append in append order, a resumed turn's second row included; sessions kept apart;
 * invalid rows — an incognito or subagent row naming memories, a negative turn — refused with a
 * typed error and never stored; the row `TelemetryStore.fromProjection` builds; and the listing
 * of every session with rows, in one order on every backend.
 *
 * Every test builds the layer afresh, so a backend on a shared server must hand each build its
 * own empty store.
 *
 * @example
 * ```ts
 * import { runTelemetryStoreConformance } from "@engram/conformance"
 * import { TelemetryStore } from "@engram/core"
 *
 * runTelemetryStoreConformance("in-memory", TelemetryStore.layerMemory)
 * ```
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import { ProjectedContext, TelemetryStore } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"

const T0 = Date.UTC(2025, 2, 14, 9, 26, 53, 589)

/**
 * An injection row (validated only when appended).
 *
 * @since 0.1.0
 * @category fixtures
 */
export const injectionRow = (
  fields: Partial<ConstructorParameters<typeof TelemetryStore.InjectionLogRow>[0]> = {}
): TelemetryStore.InjectionLogRow =>
  new TelemetryStore.InjectionLogRow({
    sessionId: "s-1",
    turn: 0,
    memoryIds: ["mem-1", "mem-2"],
    sectionLabels: ["working_state", "always_on_memory", "recalled_memory"],
    mode: "native",
    at: DateTime.unsafeMake(T0),
    ...fields
  }, { disableValidation: true })

const encode = Schema.encodeSync(TelemetryStore.InjectionLogRow)
const plain = (rows: ReadonlyArray<TelemetryStore.InjectionLogRow>) => rows.map((row) => encode(row))
const store = TelemetryStore.TelemetryStore

/**
 * Registers the telemetry-store conformance suite for one backend. Call it at the top level of a
 * vitest file. `RExtra` is whatever else the layer provides (a SQL client, say).
 *
 * @since 0.1.0
 * @category conformance
 */
export const runTelemetryStoreConformance = <RExtra = never, E = never>(
  name: string,
  layer: Layer.Layer<TelemetryStore.TelemetryStore | RExtra, E>
): void => {
  const provide = <A, E2>(self: Effect.Effect<A, E2, TelemetryStore.TelemetryStore>) =>
    Effect.provide(self, layer) as Effect.Effect<A, E2 | E>

  describe(`TelemetryStore conformance: ${name}`, () => {
    it.effect("reads rows back field for field, one per append, in append order", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const rows = [
          injectionRow({ turn: 0 }),
          injectionRow({
            turn: 1,
            memoryIds: [],
            sectionLabels: [],
            mode: "external",
            at: DateTime.unsafeMake(T0 + 1)
          }),
          injectionRow({ turn: 2, memoryIds: [], sectionLabels: ["working_state", "skills_index"], mode: "incognito" }),
          injectionRow({ turn: 2, memoryIds: ["mem-9"], sectionLabels: ["recalled_memory"], mode: "autonomous" }),
          injectionRow({ turn: 1_000_000, mode: "subagent", memoryIds: [], sectionLabels: [] })
        ]
        for (const row of rows) yield* s.appendInjection(row)
        const log = yield* s.listInjections("s-1")
        expect(log.skipped).toBe(0)
        expect(plain(log.rows)).toEqual(plain(rows))
        expect(DateTime.toEpochMillis(log.rows[1]!.at)).toBe(T0 + 1)
      })))

    it.effect("an unknown session has no rows; sessions never see each other's rows", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        expect(yield* s.listInjections("nobody")).toEqual({ rows: [], skipped: 0 })
        for (let i = 0; i < 30; i++) {
          yield* s.appendInjection(injectionRow({ sessionId: i % 3 === 0 ? "a" : "b", turn: i }))
        }
        expect((yield* s.listInjections("a")).rows.map((row) => row.turn)).toEqual([0, 3, 6, 9, 12, 15, 18, 21, 24, 27])
        expect((yield* s.listInjections("b")).rows).toHaveLength(20)
      })))

    it.effect("lists every session with a row, once, in code-unit order", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        expect(yield* s.listSessions()).toEqual([])
        // "～" (U+FF5E) sorts after "😀" by UTF-16 code units, before it by UTF-8 bytes.
        for (const sessionId of ["～wave", "😀smile", "b", "A", "b", "～wave"]) {
          yield* s.appendInjection(injectionRow({ sessionId }))
        }
        yield* Effect.flip(s.appendInjection(injectionRow({ sessionId: "refused", turn: -1 })))
        expect(yield* s.listSessions()).toEqual(["A", "b", "😀smile", "～wave"])
      })))

    it.effect("refuses a memory-free mode's row that names memories, and stores nothing", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        for (const mode of ["incognito", "subagent"] as const) {
          const error = yield* Effect.flip(s.appendInjection(injectionRow({ mode, memoryIds: ["mem-1"] })))
          expect(error).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)
          expect(error.message).toContain(`an injection row of a ${mode} projection must not name memories`)
        }
        const negative = yield* Effect.flip(s.appendInjection(injectionRow({ turn: -1 })))
        expect(negative).toBeInstanceOf(TelemetryStore.InvalidTelemetryRow)
        expect((yield* s.listInjections("s-1")).rows).toEqual([])
      })))

    it.effect("stores the row fromProjection builds: the delivered memories and sections", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const projection = ProjectedContext.composeProjectedContext({
          now: DateTime.unsafeMake(T0),
          workingState: "step 1"
        }, { mode: "native" })
        const row = TelemetryStore.fromProjection(projection, {
          sessionId: "s-7",
          turn: 4,
          at: DateTime.unsafeMake(T0)
        })
        yield* s.appendInjection(row)
        const [read] = (yield* s.listInjections("s-7")).rows
        expect(read).toMatchObject({ sessionId: "s-7", turn: 4, memoryIds: [], sectionLabels: ["working_state"] })
      })))
  })
}
