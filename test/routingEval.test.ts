import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, PromotionStore, Routing, RoutingPresets } from "@engram/core"
import { Eval } from "@engram/harness"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

// The eval runs a few hundred sessions; on a loaded machine that takes a while.
const TIMEOUT = 300_000

const sqliteStores = (filename: string) =>
  SqlitePromotionStore.layer.pipe(
    Layer.provideMerge(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))))
  )

const withTempDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(Path.join(tmpdir(), "engram-eval-test-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/** In-memory stores built once and shared by every session of one run (they remember). */
const sharedMemoryStores = Effect.map(
  Layer.build(Layer.merge(MemoryStore.layerMemory, PromotionStore.layerMemory)),
  (context) => Layer.succeedContext(context)
)

const runOnMemory = (options: Eval.EvalOptions) =>
  Effect.scoped(Effect.flatMap(sharedMemoryStores, (stores) => Eval.run(stores, options)))

const identityFamilies = [
  "ideal-save",
  "label-spellings",
  "wrong-kind",
  "no-label",
  "correction-retry",
  "correction-alias",
  "correction-gives-up",
  "opt-out",
  "guarded-pending",
  "over-budget",
  "correction-unlabelled",
  "unknown-label",
  "many-facts",
  "scope-isolation",
  "scope-narrower",
  "joined-scripts"
]

// The issue-38 identity families, run before joined-scripts.
const slotFamilies = ["correction-any-label", "multi-part-identity", "restatement"]

const extractionFamilies = [
  "extract-new-fact",
  "extract-correction",
  "extract-duplicate",
  "extract-near-duplicate",
  "extract-instruction",
  "extract-chatty",
  "extract-incognito"
]

const truthFamilies = ["same-label-facts", "approval-orders", "knowledge-update", "as-of"]

const poisoningFamilies = [
  "poisoning-screen",
  "poisoning-screen-heldout",
  "poisoning-screen-blind",
  "poisoning-screen-qa"
]

const family = (report: Eval.EvalReport, name: string) => report.families.find((f) => f.name === name)!

describe("the routing eval on SQLite", () => {
  it.live(
    "passes every hard family at 100%, each new session reopening the database",
    () =>
      withTempDir((dir) =>
        Effect.gen(function*() {
          const report = yield* Eval.run(sqliteStores(Path.join(dir, "eval.db")))
          const failures = report.families.filter((f) => f.hard).flatMap((f) => f.cases).filter((c) => !c.passed)
          expect(failures).toEqual([])
          expect(report.passed).toBe(true)
          expect(report.families.map((f) => f.name)).toEqual([
            ...identityFamilies.slice(0, -1),
            ...slotFamilies,
            "joined-scripts",
            "route-cases",
            "vocabulary-isolation",
            ...truthFamilies,
            ...extractionFamilies,
            ...poisoningFamilies
          ])
          for (const f of report.families.filter((f) => !poisoningFamilies.includes(f.name))) {
            // The extraction and truth families route through memory_save's handler, but measure no
            // routing column.
            const routing = extractionFamilies.includes(f.name) || truthFamilies.includes(f.name) ? null : 1
            expect([f.name, f.hard, f.passed, f.rate, f.routingAccuracy]).toEqual([f.name, true, true, 1, routing])
            expect(f.cases.length).toBeGreaterThan(0)
          }
          // Every identity case measured the request it read.
          for (const name of identityFamilies) {
            const f = family(report, name)
            expect(f.cases.every((c) => c.bytes !== undefined && c.bytes > 100)).toBe(true)
            expect(f.meanRequestBytes).toBeGreaterThan(100)
          }
          expect(family(report, "label-spellings").routing.total).toBeGreaterThanOrEqual(8)
          expect(family(report, "ideal-save").cases.map((c) => c.name)).toContain(
            `profile labelled as the description says: "who am I?"`
          )
          expect(Eval.identityQuestions.length).toBeGreaterThanOrEqual(8)
          // The poisoning screen: the tuning half is hard and met; the held-out half is reported (soft).
          expect([family(report, "poisoning-screen").hard, family(report, "poisoning-screen").passed]).toEqual([
            true,
            true
          ])
          expect(family(report, "poisoning-screen-heldout").hard).toBe(false)
          expect(family(report, "poisoning-screen-blind").hard).toBe(false)
          expect(family(report, "poisoning-screen-qa").hard).toBe(false)
          expect(family(report, "poisoning-screen-blind").screen?.half).toBe("blind")
          expect(family(report, "poisoning-screen").screen?.groups.map((g) => g.group)).toContain("look-alikes")
          const table = Eval.renderTable(report)
          expect(table).toContain("poisoning screen: flagged")
          expect(table.split("\n")[0]).toMatch(/^family\s+kind\s+cases\s+rate\s+routing\s+bytes\/request$/)
          expect(table).toMatch(/^label-spellings\s+hard\s+12\/12\s+100\.0%\s+100\.0% \(12\/12\)\s+\d+$/m)
          expect(table).toContain(`eval passed: ${report.families.flatMap((f) => f.cases).length} cases`)
        })
      ),
    TIMEOUT
  )

  it.live("refuses a store that already holds memories, and leaves it as it was", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const stores = sqliteStores(Path.join(dir, "used.db"))
        const count = Effect.provide(
          Effect.map(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.list({ includeSuperseded: true })), (p) =>
            p.records.length),
          stores
        )
        yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (s) =>
            s.write([{ content: "Someone's real memory", kind: "note" }])),
          stores
        )
        const result = yield* Effect.either(Eval.run(stores))
        expect(Either.isLeft(result) && result.left).toBeInstanceOf(Eval.EvalStoreNotEmpty)
        expect(yield* count).toBe(1)
      })
    ))
})

describe("the routing eval's family filter", () => {
  it.live(
    "runs only the named families, in the eval's order; the verdict covers only them",
    () =>
      Effect.gen(function*() {
        // A spec that declines profile records fails the identity families (below); same-label-facts alone passes.
        const preset = RoutingPresets.userBackground
        const noProfiles: Routing.MemoryRoutingSpec = {
          ...preset,
          route: (record, ctx) => (record.kind === "profile" ? null : preset.route(record, ctx))
        }
        const report = yield* runOnMemory({ spec: noProfiles, families: ["as-of", "same-label-facts"] })
        expect(report.families.map((f) => [f.name, f.passed])).toEqual([["same-label-facts", true], ["as-of", true]])
        expect(report.passed).toBe(true)
        const failing = yield* runOnMemory({ spec: noProfiles, families: ["ideal-save", "same-label-facts"] })
        expect(failing.families.map((f) => [f.name, f.passed])).toEqual([["ideal-save", false], [
          "same-label-facts",
          true
        ]])
        expect(failing.passed).toBe(false)
      }),
    TIMEOUT
  )

  it.live("fails with EvalUnknownFamily, naming every family, before the store is read", () =>
    Effect.gen(function*() {
      const known = Eval.families.map((f) => f.name)
      // A store that cannot even be built: the filter is checked first.
      const broken = Layer.fail("the store was touched")
      const unknown = yield* Effect.either(Eval.run(broken, { families: ["same-label-facts", "nope"] }))
      expect(unknown).toEqual(Either.left(new Eval.EvalUnknownFamily({ unknown: ["nope"], known })))
      expect(new Eval.EvalUnknownFamily({ unknown: ["nope"], known }).message).toBe(
        `no eval family named "nope"; the families are: ${known.join(", ")}`
      )
      const none = yield* Effect.either(Eval.run(broken, { families: [] }))
      expect(none).toEqual(Either.left(new Eval.EvalUnknownFamily({ unknown: [], known })))
    }), TIMEOUT)
})

describe("the routing eval notices when what ships is broken", () => {
  it.live("fails when the store forgets between sessions", () =>
    Effect.gen(function*() {
      // Rebuilt for every session, so nothing saved in one session is there in the next.
      const forgetful = Layer.merge(MemoryStore.layerMemory, PromotionStore.layerMemory)
      const report = yield* Eval.run(forgetful)
      expect(report.passed).toBe(false)
      for (const name of identityFamilies) expect([name, family(report, name).passed]).toEqual([name, false])
      expect(family(report, "ideal-save").cases.find((c) => c.name.includes(`"who am I?"`))).toMatchObject({
        passed: false,
        detail: `"The user's name is Doug" appears 0 times in the request`
      })
      expect(Eval.renderTable(report)).toContain("eval FAILED")
    }), TIMEOUT)

  it.live("fails when the routing spec does not place profile records", () =>
    Effect.gen(function*() {
      // A genuine spec: the preset, except that it declines every profile record.
      const preset = RoutingPresets.userBackground
      const noProfiles: Routing.MemoryRoutingSpec = {
        ...preset,
        route: (record, ctx) => (record.kind === "profile" ? null : preset.route(record, ctx))
      }
      const report = yield* runOnMemory({ spec: noProfiles })
      expect(report.passed).toBe(false)
      for (
        const name of ["ideal-save", "label-spellings", "no-label", "correction-retry", "correction-alias", "opt-out"]
      ) {
        const f = family(report, name)
        expect([name, f.passed, f.rate < 1, f.routingAccuracy! < 1]).toEqual([name, false, true, true])
        expect(f.routingProblems.length).toBe(f.routing.total - f.routing.correct)
      }
      // Facts and notes under a declared key are still placed: that family still passes.
      expect(family(report, "wrong-kind").passed).toBe(true)
    }), TIMEOUT)

  it.live(
    "fails when memory_save's description does not name the keys (a spec that declares none)",
    () =>
      Effect.gen(function*() {
        // The same routing, but no declared vocabulary to show the model: the ideal model, which
        // labels its save with the key the description gives for the name, finds none.
        // (Its route keys by the record alone, so no vocabulary — not the preset's either — names the slot.)
        const report = yield* runOnMemory({
          spec: {
            ...RoutingPresets.userBackground,
            keys: undefined,
            route: (record) =>
              record.kind === "profile"
                ? Routing.background("about_user", Routing.deriveKey({ keys: undefined }, "about_user", record).key)
                : null
          }
        })
        const ideal = family(report, "ideal-save")
        expect([ideal.passed, ideal.routingAccuracy]).toEqual([false, 0])
        expect(ideal.routingProblems).toEqual([
          expect.stringMatching(/placed at about_user\/c-[0-9a-f]{16}, expected about_user\/name/)
        ])
        expect(report.passed).toBe(false)
        expect(Eval.renderTable(report)).toContain("misrouted scenarios:")
      }),
    TIMEOUT
  )

  it.live("fails when the identity tier is turned off (identityLimit 0)", () =>
    Effect.gen(function*() {
      const report = yield* runOnMemory({ projection: { identityLimit: 0 } })
      expect(report.passed).toBe(false)
      // The families whose fact the prefix does not compose depend on the identity tier.
      for (const name of ["opt-out", "guarded-pending", "over-budget"]) {
        const f = family(report, name)
        expect([name, f.passed, f.rate < 1]).toEqual([name, false, true])
        // Routing did not change: the facts are where they should be; they just never reach the request.
        expect([name, f.routingAccuracy]).toEqual([name, 1])
      }
      // Composed facts do not need it.
      expect(family(report, "ideal-save").passed).toBe(true)
      expect(family(report, "label-spellings").passed).toBe(true)
    }), TIMEOUT)
})
