import { describe, expect, it } from "@effect/vitest"
import { Background, MemoryRecord, MemoryStore, PromotionStore, Routing, RoutingPresets } from "@engram/core"
import { Promotion } from "@engram/runtime"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as fc from "effect/FastCheck"
import * as HashMap from "effect/HashMap"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"
import * as MetricState from "effect/MetricState"
import * as Option from "effect/Option"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { companionBackground, stores } from "./utilities.js"

const options = { background: companionBackground, spec: RoutingPresets.userBackground }

const write = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write(inputs))

const counted = (spec: string, outcome: string) =>
  Effect.map(
    Metric.value(Metric.tagged(Metric.tagged(Promotion.promoted, "spec", spec), "outcome", outcome)),
    (state: MetricState.MetricState.Counter<number>) => state.count
  )

describe("Promotion.promoteNew", () => {
  it.effect("commits one row per record: routed, declined by the spec, or placed in an undeclared section", () =>
    Effect.gen(function*() {
      const records = yield* write([
        { content: "My name is Doug", kind: "profile", label: "name", scope: "project:alpha" },
        { content: "It rained", kind: "episode" },
        { content: "Answer briefly", kind: "standing", label: "length" }
      ])
      const onlyAbout = Background.unsafeMake({ sections: [{ id: "about_user", title: "About", promotion: "auto" }] })
      const result = yield* Promotion.promoteNew(records, {
        background: onlyAbout,
        spec: RoutingPresets.userBackground
      })
      expect(result.alreadyPromoted).toEqual([])
      expect(
        result.committed.map((row) => [row.recordId, row.scope, Promotion.outcomeOf(row), row.placementKey, row.tier])
      )
        .toEqual([
          ["mem-000001", "project:alpha", "routed", JSON.stringify(["about_user", "name"]), "auto"],
          ["mem-000002", "global", "spec-declined", null, null],
          ["mem-000003", "global", "undeclared-section", JSON.stringify(["preferences", "response_length"]), null]
        ])
      const stored = yield* Effect.flatMap(
        PromotionStore.PromotionStore,
        (s) => s.getByRecords(records.map((r) => r.id))
      )
      expect(stored.rows).toEqual(result.committed)
      expect(stored.rows.every((row) => row.specKey === "user-background" && row.specVersion === "4")).toBe(true)
    }).pipe(Effect.provide(stores)))

  it.effect("commits once: records already promoted under the spec are left alone, repeats in the input count once", () =>
    Effect.gen(function*() {
      const [a, b] = yield* write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "Lives in Oslo", kind: "profile" }
      ])
      yield* Promotion.promoteNew([a!], options)
      const again = yield* Promotion.promoteNew([a!, b!, b!, a!], options)
      expect(again.committed.map((row) => row.recordId)).toEqual([b!.id])
      expect(again.alreadyPromoted).toEqual([a!.id])
      const third = yield* Promotion.promoteNew([a!, b!], options)
      expect(third).toEqual({ committed: [], alreadyPromoted: [a!.id, b!.id] })
      // Another spec promotes the same records separately.
      const project = yield* Promotion.promoteNew([a!, b!], {
        background: RoutingPresets.projectSections,
        spec: RoutingPresets.project
      })
      expect(project.committed.map((row) => [row.recordId, row.specKey, row.placement])).toEqual([
        [a!.id, "project", null],
        [b!.id, "project", null]
      ])
    }).pipe(Effect.provide(stores)))

  it.effect("counts each committed row by spec and outcome in agent.memory.promote", () =>
    Effect.gen(function*() {
      const before = yield* counted("user-background", "routed")
      const declinedBefore = yield* counted("user-background", "spec-declined")
      const records = yield* write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "It rained", kind: "episode" },
        { content: "It snowed", kind: "episode" }
      ])
      yield* Promotion.promoteNew(records, options)
      yield* Promotion.promoteNew(records, options)
      expect((yield* counted("user-background", "routed")) - before).toBe(1)
      expect((yield* counted("user-background", "spec-declined")) - declinedBefore).toBe(2)
    }).pipe(Effect.provide(stores)))

  it.effect("logs each committed row at debug level", () =>
    Effect.gen(function*() {
      const lines: Array<unknown> = []
      const records = yield* write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "It rained", kind: "episode" }
      ])
      yield* Promotion.promoteCreated(records, options).pipe(
        Effect.provide(Logger.replace(
          Logger.defaultLogger,
          Logger.make(({ annotations }) => {
            lines.push(HashMap.get(annotations, "memoryId").pipe(Option.getOrUndefined))
          })
        )),
        Logger.withMinimumLogLevel(LogLevel.Debug)
      )
      expect(lines).toEqual(records.map((record) => record.id))
    }).pipe(Effect.provide(stores)))

  it.effect("fails with InvalidPlacement when the spec returns a malformed placement, committing nothing", () =>
    Effect.gen(function*() {
      const broken: Routing.MemoryRoutingSpec = {
        ...RoutingPresets.userBackground,
        key: "broken",
        route: (record) => (record.kind === "episode" ? Routing.background("about_user", "") : null)
      }
      const records = yield* write([
        { content: "My name is Doug", kind: "profile" },
        { content: "It rained", kind: "episode" }
      ])
      const result = yield* Effect.either(
        Promotion.promoteNew(records, { background: companionBackground, spec: broken })
      )
      expect(Either.isLeft(result) && result.left).toBeInstanceOf(Routing.InvalidPlacement)
      expect(Either.isLeft(result) && result.left.message).toContain(
        `routing spec "broken" produced an invalid placement`
      )
      expect((yield* Effect.flatMap(PromotionStore.PromotionStore, (s) => s.listByScope("global"))).rows).toEqual([])
    }).pipe(Effect.provide(stores)))

  it.effect("promoting nothing commits nothing", () =>
    Effect.gen(function*() {
      expect(yield* Promotion.promoteNew([], options)).toEqual({ committed: [], alreadyPromoted: [] })
    }).pipe(Effect.provide(stores)))
})

describe("Promotion.promoteCreated", () => {
  // The promotion store, counting its reads.
  const countingReads = Effect.map(PromotionStore.PromotionStore, (store) => {
    let reads = 0
    const service: PromotionStore.Service = {
      ...store,
      getByRecords: (ids, readOptions) => Effect.suspend(() => (reads++, store.getByRecords(ids, readOptions)))
    }
    return { service, reads: () => reads }
  })

  it.effect("commits the rows of records just created without reading the store first", () =>
    Effect.gen(function*() {
      const records = yield* write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "It rained", kind: "episode" }
      ])
      const counting = yield* countingReads
      const result = yield* Effect.provideService(
        Promotion.promoteCreated(records, options),
        PromotionStore.PromotionStore,
        counting.service
      )
      expect(counting.reads()).toBe(0)
      expect(result).toEqual(
        yield* Effect.map(
          Effect.flatMap(PromotionStore.PromotionStore, (s) => s.getByRecords(records.map((r) => r.id))),
          (stored) => ({ committed: stored.rows, alreadyPromoted: [] })
        )
      )
    }).pipe(Effect.provide(stores)))

  it.effect("a record that has a row after all: falls back to promoteNew's read, and answers as promoteNew does", () =>
    Effect.gen(function*() {
      const [a, b] = yield* write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "Lives in Oslo", kind: "profile" }
      ])
      yield* Promotion.promoteNew([a!], options)
      const counting = yield* countingReads
      const result = yield* Effect.provideService(
        Promotion.promoteCreated([a!, b!], options),
        PromotionStore.PromotionStore,
        counting.service
      )
      expect(counting.reads()).toBe(1)
      expect(result.committed.map((row) => row.recordId)).toEqual([b!.id])
      expect(result.alreadyPromoted).toEqual([a!.id])
    }).pipe(Effect.provide(stores)))
})

describe("Promotion.rowFor", () => {
  const recordArb = fc.record({
    kind: fc.constantFrom(...MemoryRecord.MemoryKind.literals),
    label: fc.option(fc.string({ maxLength: 20 }).filter((l) => l.trim() !== "" && !/[\p{Cc}\u2028\u2029]/u.test(l)), {
      nil: undefined
    }),
    content: fc.string({ minLength: 1, maxLength: 40 }).filter((c) => c.trim() !== ""),
    tags: fc.array(fc.constantFrom("preference", "Conventions", "travel"), { maxLength: 2 }),
    scope: fc.constantFrom("global", "project:alpha", "session:s1")
  }).map(({ label, ...fields }) =>
    new MemoryRecord.MemoryRecord({
      id: "m-1",
      sourceType: "conversation",
      deliveryPolicy: "retrieved",
      reviewState: "pending",
      createdAt: DateTime.unsafeMake(0),
      ...fields,
      ...(label !== undefined ? { label } : {})
    })
  )
  const declaredArb = fc.constantFrom(
    RoutingPresets.userBackgroundSections,
    RoutingPresets.projectSections,
    Background.mergeBackground(RoutingPresets.userBackgroundSections, RoutingPresets.projectSections),
    Background.empty
  )

  it.prop(
    "builds a row the promotion store accepts, in the record's scope, for every record, preset and declaration",
    [recordArb, declaredArb, fc.constantFrom(RoutingPresets.userBackground, RoutingPresets.project)],
    ([record, declared, spec]) => {
      const row = Either.getOrThrowWith(
        Promotion.rowFor(record, Routing.routingContext(declared), spec, DateTime.unsafeMake(5)),
        (error) => error
      )
      expect(PromotionStore.rowProblem(row)).toBeUndefined()
      expect(row.scope).toBe(record.scope)
      expect(row.specKey).toBe(spec.key)
      expect(Promotion.outcomeOf(row)).toBe(
        ((e) => (e._tag === "Routed" ? "routed" : e.reason))(
          Either.getOrThrowWith(Routing.evaluateRoute(record, Routing.routingContext(declared), spec), (error) => error)
        )
      )
    }
  )
})

describe("instrumentation lives in the runtime, not in routing", () => {
  it("the routing modules log, trace and count nothing; the promotion step does", () => {
    const source = (path: string) => readFileSync(fileURLToPath(new URL(path, import.meta.url)), "utf8")
    const effects = /Effect\.(log|withSpan|annotateCurrentSpan)|Metric\.|console\./
    for (const module of ["Routing.ts", "RoutingPresets.ts", "MemoryOverlay.ts", "internal/memoryOverlay.ts"]) {
      expect([module, effects.test(source(`../../core/src/${module}`))]).toEqual([module, false])
    }
    const promotion = source("../src/Promotion.ts")
    expect(promotion).toContain(`Metric.counter("agent.memory.promote"`)
    expect(promotion).toContain(`Effect.withSpan("agent.memory.promote"`)
  })
})
