import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { runSessionStoreConformance, SessionStoreConformance } from "@engram/conformance"
import { ProjectionLayout, SessionStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteSessionStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"

// The same behaviour suite, against the reference layer and the SQLite layer.
runSessionStoreConformance("in-memory", SessionStore.layerMemory)
runSessionStoreConformance(
  "sqlite",
  SqliteSessionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
)

const { assistant, extractionRun, interrupt, operator, tool } = SessionStoreConformance

describe("SqliteSessionStore", () => {
  it.effect("skips, logs and counts a stored message that no longer decodes, and reads the rest", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.append("s-1", [operator("one"), assistant("two"), tool([]), operator("four")])
      yield* sql`UPDATE engram_session_messages SET message = '{not json' WHERE session_id = 's-1' AND seq = 1`
      yield* sql`UPDATE engram_session_messages SET message = '{"_tag":"Bogus","at":"x"}' WHERE seq = 2`
      const history = yield* store.load("s-1")
      expect(history.skipped).toBe(2)
      expect(history.messages.map((m) => (m._tag === "OperatorMessage" ? m.text : m._tag))).toEqual(["one", "four"])
      // a later append still numbers after the bad rows, which stay stored for audit
      yield* store.append("s-1", [operator("five")])
      expect((yield* store.load("s-1")).messages.map((m) => (m._tag === "OperatorMessage" ? m.text : "")))
        .toEqual(["one", "four", "five"])
      const [count] = yield* sql<{ n: number }>`SELECT COUNT(*) AS n FROM engram_session_messages`
      expect(count!.n).toBe(5)
    }).pipe(
      Effect.provide(SqliteSessionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))))
    ))

  it.effect("a stored extraction run that no longer decodes degrades that run only; later ones number after it", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.recordExtraction("s-1", extractionRun(1, 8, "extracted", 300))
      yield* store.recordExtraction("s-1", extractionRun(9, 12, "extracted", 100))
      yield* sql`UPDATE engram_session_extractions SET run = '{"turns":"many"}' WHERE seq = 1`
      yield* store.recordExtraction("s-1", extractionRun(13, 13, "failed", 40))
      const read = yield* store.loadExtractions("s-1")
      expect(read.skipped).toBe(1)
      expect(read.runs.map((run) => [run.turns.first, run.outcome])).toEqual([[1, "extracted"], [13, "failed"]])
      expect(SessionStore.summarizeExtractions(read.runs)).toMatchObject({ through: 8, tokens: 340, failures: 1 })
      const seqs = yield* sql<{ seq: number }>`SELECT seq FROM engram_session_extractions ORDER BY seq`
      expect(seqs.map((row) => row.seq)).toEqual([0, 1, 2])
    }).pipe(
      Effect.provide(SqliteSessionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))))
    ))

  it.effect("a stored interrupt that no longer decodes reads as none", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.putInterrupt("s-1", interrupt(1))
      yield* sql`UPDATE engram_session_interrupts SET interrupt = '{"turn":"many"}'`
      expect(yield* store.getInterrupt("s-1")).toEqual(Option.none())
      yield* store.putInterrupt("s-1", interrupt(2))
      expect(Option.map(yield* store.getInterrupt("s-1"), (i) => i.turn)).toEqual(Option.some(2))
    }).pipe(
      Effect.provide(SqliteSessionStore.layer.pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))))
    ))

  it.effect("shares one database with the other stores, each with its own migrations table", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const tables = (yield* sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`)
        .map((t) => t.name)
      for (const table of ["engram_session_messages", "engram_session_interrupts", "engram_session_migrations"]) {
        expect(tables).toContain(table)
      }
      expect(tables).toContain("engram_memory_migrations")
      expect(tables).toContain("engram_promotion_migrations")
      expect((yield* sql<{ name: string }>`SELECT name FROM engram_session_migrations`).map((m) => m.name))
        .toEqual(["sessions", "extraction_runs", "extraction_claims"])
    }).pipe(Effect.provide(
      SqliteSessionStore.layer.pipe(
        Layer.provideMerge(SqlitePromotionStore.layer),
        Layer.provideMerge(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
        )
      )
    )))

  it.effect("keeps sessions and interrupts across reopening the file; never stores projected context", () => {
    const dir = mkdtempSync(Path.join(tmpdir(), "engram-session-"))
    const open = SqliteSessionStore.layer.pipe(
      Layer.provideMerge(SqliteDatabase.layer({ filename: Path.join(dir, "engram.db") }))
    )
    const withStore = <A, E>(f: (store: SessionStore.Service) => Effect.Effect<A, E>) =>
      Effect.provide(Effect.flatMap(SessionStore.SessionStore, f), open)
    return Effect.gen(function*() {
      yield* withStore((s) =>
        Effect.zipRight(s.append("s-1", [operator("hi"), assistant("hello")]), s.putInterrupt("s-1", interrupt(4)))
      )
      yield* withStore((s) => s.append("s-1", [operator("again")]))
      const [history, pending] = yield* withStore((s) => Effect.zip(s.load("s-1"), s.getInterrupt("s-1")))
      expect(history.messages.map((m) => (m._tag === "ToolMessage" ? "" : m.text))).toEqual(["hi", "hello", "again"])
      expect(Option.map(pending, (i) => i.turn)).toEqual(Option.some(4))
      for (const message of history.messages) {
        expect(ProjectionLayout.containsProjection(JSON.stringify(message))).toBe(false)
      }
    }).pipe(Effect.ensuring(Effect.sync(() => rmSync(dir, { recursive: true, force: true }))))
  })
})
