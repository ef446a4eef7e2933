import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { runTelemetryStoreConformance, TelemetryStoreConformance } from "@engram/conformance"
import { TelemetryStore } from "@engram/core"
import { PgDatabase, PgTelemetryStore } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describePg } from "./pgGate.js"
import { dropSchema } from "./utilities.js"

const { injectionRow, snapshotFixture } = TelemetryStoreConformance

describePg("PostgreSQL telemetry store", (url) => {
  // Every build is an empty schema of its own, dropped on release.
  const fresh = PgTelemetryStore.layer.pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_tele", maxConnections: 2 }))
  )

  runTelemetryStoreConformance("postgres", fresh)

  it.effect("skips, logs and counts a stored row that no longer decodes, and reads the rest", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const sql = yield* SqlClient.SqlClient
      for (let turn = 0; turn < 5; turn++) yield* store.appendInjection(injectionRow({ turn }))
      yield* sql`UPDATE engram_injection_log SET memory_ids = '{"not":"a list"}' WHERE turn = 1`
      yield* sql`UPDATE engram_injection_log SET mode = 'telepathy' WHERE turn = 2`
      yield* sql`UPDATE engram_injection_log SET at = 99999999999999999 WHERE turn = 3`
      const log = yield* store.listInjections("s-1")
      expect(log.skipped).toBe(3)
      expect(log.rows.map((row) => row.turn)).toEqual([0, 4])
    }).pipe(Effect.provide(fresh)))

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
        at: String(Date.UTC(2025, 2, 14, 9, 26, 53, 589)),
        memory_ids: ["mem-1", "mem-2"],
        section_labels: ["working_state", "always_on_memory", "recalled_memory"]
      }])
      // "Which turns delivered mem-2?" is one indexed-column query away.
      const delivering = yield* sql<{ turn: number }>`SELECT turn FROM engram_injection_log WHERE memory_ids ? 'mem-2'`
      expect(delivering.map((r) => r.turn)).toEqual([7])
      const plan = yield* sql.withTransaction(
        Effect.zipRight(
          sql`SET LOCAL enable_seqscan = off`,
          sql<{ "QUERY PLAN": string }>`EXPLAIN SELECT * FROM engram_injection_log WHERE session_id = 's-1' ORDER BY id`
        )
      )
      expect(plan.map((p) => p["QUERY PLAN"]).join(" ")).toContain("engram_injection_log_session_idx")
    }).pipe(Effect.provide(fresh)))

  it.effect("commits an injection row alone without waiting for the disk, and inside a caller's transaction as the caller does", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const sql = yield* SqlClient.SqlClient
      // A trigger notes the commit setting each inserted row's transaction runs with.
      yield* sql`CREATE TABLE commit_seen (turn int, setting text)`
      yield* sql.unsafe(`CREATE FUNCTION note_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO commit_seen VALUES (NEW.turn, current_setting('synchronous_commit')); RETURN NEW; END $$`)
      yield* sql`CREATE TRIGGER note_commit BEFORE INSERT ON engram_injection_log
        FOR EACH ROW EXECUTE FUNCTION note_commit()`
      yield* store.appendInjection(injectionRow({ turn: 1 }))
      // The setting lasted for the row's own transaction: the pooled connection is as it was.
      const after = yield* sql<{ setting: string }>`SELECT current_setting('synchronous_commit') AS setting`
      expect(after[0]!.setting).toBe("on")
      // In the caller's transaction the row is a plain insert: the caller's writes stay synchronous.
      const inside = yield* sql.withTransaction(
        Effect.zipRight(
          store.appendInjection(injectionRow({ turn: 2 })),
          sql<{ setting: string }>`SELECT current_setting('synchronous_commit') AS setting`
        )
      )
      expect(inside[0]!.setting).toBe("on")
      const seen = yield* sql<{ turn: number; setting: string }>`SELECT turn, setting FROM commit_seen ORDER BY turn`
      expect(seen).toEqual([{ turn: 1, setting: "off" }, { turn: 2, setting: "on" }])
      expect((yield* store.listInjections("s-1")).rows.map((row) => row.turn)).toEqual([1, 2])
    }).pipe(Effect.provide(fresh)))

  it.effect("refuses a snapshot whose session id PostgreSQL cannot store, naming why, and stores nothing", () =>
    Effect.gen(function*() {
      const store = yield* TelemetryStore.TelemetryStore
      const { entries, snapshot } = snapshotFixture({ sessionId: "s-\uD800" })
      const error = yield* Effect.flip(store.appendSnapshot(snapshot, entries))
      expect(error._tag).toBe("InvalidTelemetryRow")
      expect(error.message).toContain("unpaired surrogate")
      expect((yield* store.readTrajectory("s-\uD800")).messages).toEqual([])
    }).pipe(Effect.provide(fresh)))

  it.effect("keeps the log across reopening", () =>
    Effect.gen(function*() {
      const schema = PgDatabase.temporarySchemaName("engram_tele")
      yield* Effect.addFinalizer(() => dropSchema(url, schema))
      const open = PgTelemetryStore.layer.pipe(Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 1 })))
      const withStore = <A, E>(f: (store: TelemetryStore.Service) => Effect.Effect<A, E>) =>
        Effect.provide(Effect.flatMap(TelemetryStore.TelemetryStore, f), open)
      yield* withStore((s) => s.appendInjection(injectionRow({ turn: 0 })))
      yield* withStore((s) => s.appendInjection(injectionRow({ turn: 1 })))
      expect((yield* withStore((s) => s.listInjections("s-1"))).rows.map((row) => row.turn)).toEqual([0, 1])
    }).pipe(Effect.scoped))
}, { concurrent: true })
