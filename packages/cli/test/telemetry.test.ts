import { describe, expect, it } from "@effect/vitest"
import { TelemetryStoreConformance } from "@engram/conformance"
import { TelemetryStore } from "@engram/core"
import { SqliteDatabase, SqliteTelemetryStore } from "@engram/store-sqlite"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { engram, engramJson, tempDir } from "./utilities.js"

const DAY = 86_400_000

const seed = (db: string, sessions: ReadonlyArray<readonly [string, number]>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      for (const [sessionId, at] of sessions) {
        const { entries, snapshot } = TelemetryStoreConformance.snapshotFixture({ sessionId, at })
        yield* store.appendSnapshot(snapshot, entries)
      }
    }).pipe(Effect.provide(SqliteTelemetryStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db })))))
  )

const count = (db: string, sessionId: string) =>
  Effect.runPromise(
    Effect.flatMap(TelemetryStore.TelemetryStore, (s) => s.listSnapshots(sessionId)).pipe(
      Effect.provide(SqliteTelemetryStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db }))))
    )
  ).then((list) => list.snapshots.length)

describe("engram telemetry prune", () => {
  it("removes whole sessions older than --older-than and past --keep-sessions", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "engram.db")
      const now = Date.now()
      await seed(db, [["ancient", now - 40 * DAY], ["recent", now - DAY], ["fresh", now]])
      const byAge = await engramJson(
        "--db",
        db,
        "telemetry",
        "prune",
        "--older-than",
        "30d"
      ) as TelemetryStore.PruneResult
      expect(byAge.sessions).toEqual(["ancient"])
      expect(byAge.snapshots).toBe(1)
      expect(await count(db, "ancient")).toBe(0)
      expect(await count(db, "recent")).toBe(1)

      const human = await engram("--db", db, "telemetry", "prune", "--keep-sessions", "1")
      expect(human.code).toBe(0)
      expect(human.stdout).toContain("removed 1 session (1 snapshots, 3 trajectory entries): recent")
      expect(await count(db, "fresh")).toBe(1)
    } finally {
      cleanup()
    }
  })

  it("refuses a prune that names no bound, and a malformed age", async () => {
    const none = await engram("telemetry", "prune")
    expect(none.code).not.toBe(0)
    expect(none.stderr).toContain("say what to prune")
    const bad = await engram("telemetry", "prune", "--older-than", "thirty days")
    expect(bad.code).not.toBe(0)
    expect(bad.stderr).toContain("must be a whole number and a unit")
  })
})
