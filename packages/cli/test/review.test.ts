/**
 * `engram memory review <proposal> confirmed` carries out an extracted supersede proposal through
 * the one approval path (`Extraction.review`): the holder is superseded, the successor confirmed
 * and placed where the holder was, the proposal expired — and the composed Background shows only
 * the new value.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, RoutingPresets } from "@engram/core"
import { Extraction, Promotion } from "@engram/runtime"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore } from "@engram/store-sqlite"
import { Effect, Layer } from "effect"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { engram, engramJson, tempDir } from "./utilities.js"

/** The name Doug, promoted; and the pending proposal an extraction run writes when told "Douglas". */
const seed = (db: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const [holder] = yield* store.write([{
        id: "m-doug",
        content: "The user's name is Doug",
        kind: "profile",
        label: "name",
        scope: "global",
        sourceType: "operator"
      }])
      yield* Promotion.promoteNew([holder!], {
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      })
      yield* store.write([{
        id: "m-proposal",
        content: "The user's name is Douglas",
        kind: "profile",
        label: "name",
        tags: ["from-session:s-1", "from-turns:2", Extraction.proposalTag("m-doug")],
        scope: "global",
        sourceType: "extracted",
        deliveryPolicy: "on_demand"
      }])
    }).pipe(
      Effect.provide(
        SqlitePromotionStore.layer.pipe(
          Layer.provideMerge(
            SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db })))
          )
        )
      )
    )
  )

interface Shown {
  readonly record: { readonly id: string; readonly reviewState: string; readonly supersedes?: string }
  readonly approvedProposal?: string
}

describe("engram memory review", () => {
  it("confirming a supersede proposal supersedes the holder, and the next composition shows only the new value", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "engram.db")
      await seed(db)
      const agent = Path.join(dir, "agent.json")
      writeFileSync(
        agent,
        JSON.stringify({
          spec: "user-background",
          scope: "global",
          db: "engram.db",
          background: RoutingPresets.userBackgroundSections
        })
      )
      const before = await engram("compose", "--agent", agent)
      expect([before.stdout.includes("Doug"), before.stdout.includes("Douglas")]).toEqual([true, false])

      const approved = await engramJson("--db", db, "memory", "review", "m-proposal", "confirmed") as Shown
      expect(approved.approvedProposal).toBe("m-proposal")
      expect(approved.record).toMatchObject({ reviewState: "confirmed", supersedes: "m-doug" })
      expect(approved.record.id).not.toBe("m-proposal")

      const composed = await engram("compose", "--agent", agent)
      expect(composed.stdout).toContain("The user's name is Douglas")
      expect(composed.stdout).not.toMatch(/The user's name is Doug(?!las)/)

      // The proposal's work is done: a second approval is refused, and says why.
      const again = await engram("--db", db, "memory", "review", "m-proposal", "confirmed")
      expect(again.code).not.toBe(0)
      expect(again.stderr).toContain("m-proposal was already approved, or has expired")

      // A plain review still only sets the state.
      const human = await engram("--db", db, "memory", "review", approved.record.id, "pending")
      expect(human.stdout).toContain(`${approved.record.id} is now pending`)
    } finally {
      cleanup()
    }
  })
})
