import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { runTelemetryStoreConformance, TelemetryStoreConformance } from "@engram/conformance"
import { TelemetryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

// The same behaviour suite, against the reference layer and the SQLite layer.
runTelemetryStoreConformance("in-memory", TelemetryStore.layerMemory)
runTelemetryStoreConformance(
  "sqlite",
  SqliteTelemetryStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
)

const { injectionRow } = TelemetryStoreConformance

describe("SqliteTelemetryStore", () => {
  it.effect("skips, logs and counts a stored row that no longer decodes, and reads the rest", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const sql = yield* SqlClient.SqlClient
      for (let turn = 0; turn < 5; turn++) yield* store.appendInjection(injectionRow({ turn }))
      yield* sql`UPDATE engram_injection_log SET memory_ids = '[not json' WHERE turn = 1`
      yield* sql`UPDATE engram_injection_log SET mode = 'telepathy' WHERE turn = 2`
      yield* sql`UPDATE engram_injection_log SET at = 'yesterday' WHERE turn = 3`
      const log = yield* store.listInjections("s-1")
      expect(log.skipped).toBe(3)
      expect(log.rows.map((row) => row.turn)).toEqual([0, 4])
    }).pipe(
      Effect.provide(
        SqliteTelemetryStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
      )
    ))

  it.effect("stores the log as plain columns a person can query, indexed by session", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const sql = yield* SqlClient.SqlClient
      yield* store.appendInjection(injectionRow({ turn: 7 }))
      const rows = yield* sql`SELECT session_id, turn, mode, at, memory_ids, section_labels FROM engram_injection_log`
      expect(rows).toEqual([{
        session_id: "s-1",
        turn: 7,
        mode: "native",
        at: Date.UTC(2025, 2, 14, 9, 26, 53, 589),
        memory_ids: "[\"mem-1\",\"mem-2\"]",
        section_labels: "[\"working_state\",\"always_on_memory\",\"recalled_memory\"]"
      }])
      const plan = yield* sql<{ detail: string }>`EXPLAIN QUERY PLAN
        SELECT * FROM engram_injection_log WHERE session_id = 's-1' ORDER BY id`
      expect(plan.map((p) => p.detail).join(" ")).toMatch(/USING (COVERING )?INDEX engram_injection_log_session/)
      const migrated = yield* sql<{ name: string }>`SELECT name FROM engram_telemetry_migrations`
      expect(migrated.map((m) => m.name)).toEqual(["injection_log", "prompt_snapshots"])
    }).pipe(Effect.provide(
      SqliteTelemetryStore.layer.pipe(
        Layer.provideMerge(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
        )
      )
    )))

  it.effect("keeps the log across reopening the file", () => {
    const dir = mkdtempSync(Path.join(tmpdir(), "engram-telemetry-"))
    const open = SqliteTelemetryStore.layer.pipe(
      Layer.provideMerge(SqliteDatabase.layer({ filename: Path.join(dir, "engram.db") }))
    )
    const withStore = <A, E>(f: (store: TelemetryStore.Service) => Effect.Effect<A, E>) =>
      Effect.provide(Effect.flatMap(TelemetryStore.TelemetryStore, f), open)
    return Effect.gen(function*() {
      yield* withStore((s) => s.appendInjection(injectionRow({ turn: 0 })))
      yield* withStore((s) => s.appendInjection(injectionRow({ turn: 1 })))
      const log = yield* withStore((s) => s.listInjections("s-1"))
      expect(log.rows.map((row) => row.turn)).toEqual([0, 1])
    }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  })
})
