import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, PromotionStore } from "@engram/core"
import { Eval } from "@engram/harness"
import { SqliteMemoryStore, SqlitePromotionStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

const sqliteStores = (filename: string) =>
  SqlitePromotionStore.layerSqlite.pipe(Layer.provideMerge(SqliteMemoryStore.layer({ filename })))

const withTempDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(Path.join(tmpdir(), "engram-eval-test-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

describe("the routing eval on SQLite", () => {
  it.live("passes every hard family, each new session reopening the database", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const report = yield* Eval.run(sqliteStores(Path.join(dir, "eval.db")))
        const failures = report.families.flatMap((f) => f.cases).filter((c) => !c.passed)
        expect(failures).toEqual([])
        expect(report.passed).toBe(true)
        expect(report.families.map((f) => [f.name, f.hard, f.passed])).toEqual([
          ["identity-paraphrase", true, true],
          ["identity-opt-out", true, true],
          ["save-gate", true, true],
          ["route-cases", true, true],
          ["vocabulary-isolation", true, true]
        ])
        const identity = report.families[0]!.cases.map((c) => c.name)
        for (const question of ["what's my name?", "who am I?", "how should you address me?"]) {
          expect(identity).toContain(`session 2: "${question}" → the prompt holds the name`)
        }
        expect(Eval.identityQuestions.length).toBeGreaterThanOrEqual(8)
        const routeCases = report.families[3]!.cases.map((c) => c.name)
        for (const reason of ["spec-declined", "undeclared-section", "authored-wins", "review-required", "locked", "earned-inert"]) {
          expect(routeCases.filter((name) => name.startsWith(`user-background: ${reason}`))).toHaveLength(1)
          expect(routeCases.filter((name) => name.startsWith(`project: ${reason}`))).toHaveLength(1)
        }
        const table = Eval.renderTable(report)
        expect(table.split("\n")[0]).toMatch(/^family\s+case\s+result$/)
        expect(table).toContain(`eval passed: ${report.families.flatMap((f) => f.cases).length} cases, 0 failed`)
      })
    ))

  it.live("refuses a store that already holds memories, and leaves it as it was", () =>
    withTempDir((dir) =>
      Effect.gen(function*() {
        const stores = sqliteStores(Path.join(dir, "used.db"))
        const count = Effect.provide(
          Effect.map(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.list({ includeSuperseded: true })), (p) => p.records.length),
          stores
        )
        yield* Effect.provide(
          Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write([{ content: "Someone's real memory", kind: "note" }])),
          stores
        )
        const result = yield* Effect.either(Eval.run(stores))
        expect(Either.isLeft(result) && result.left).toBeInstanceOf(Eval.EvalStoreNotEmpty)
        expect(yield* count).toBe(1)
      })
    ))

  it.live("fails when the store forgets between sessions", () =>
    Effect.gen(function*() {
      // Rebuilt for every session, so nothing saved in session 1 is there in session 2.
      const forgetful = Layer.merge(MemoryStore.layerMemory, PromotionStore.layerMemory)
      const report = yield* Eval.run(forgetful)
      expect(report.passed).toBe(false)
      const identity = report.families.find((f) => f.name === "identity-paraphrase")!
      expect(identity.passed).toBe(false)
      expect(identity.cases.find((c) => c.name.includes(`"who am I?"`))).toMatchObject({
        passed: false,
        detail: "the prompt does not mention Doug"
      })
      expect(Eval.renderTable(report)).toContain("eval FAILED")
    }))
})
