/**
 * A full disk is a typed failure on the SQLite store, and loses nothing that was acknowledged.
 * `PRAGMA max_page_count` caps the file, so SQLite answers `SQLITE_FULL` exactly as it does on a
 * full disk; a deferred foreign key makes `COMMIT` itself fail, which `@effect/sql` alone turns
 * into a defect.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { ErrorClass, MemoryStore } from "@engram/core"
import { SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll } from "vitest"

const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-sqlite-full-"))
afterAll(() => NodeFs.rmSync(directory, { recursive: true, force: true }))

const pageCount = Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ page_count: number }>`PRAGMA page_count`).pipe(
  Effect.map((rows) => Number(rows[0]!.page_count))
)
const capPages = (pages: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`PRAGMA max_page_count = ${pages}`))

const input = (i: number) => ({
  content: `record ${i} ${"x".repeat(3_000)}`,
  kind: "note" as const,
  scope: "global" as const
})

describe("SQLite storage full", () => {
  it.effect("a write that finds the file full fails StorageFull; every acknowledged write is kept", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(directory, "full.db")
      const acknowledged: Array<string> = []
      const failure = yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* capPages((yield* pageCount) + 8)
        for (let i = 0; i < 200; i++) {
          const exit = yield* Effect.exit(store.write([input(i)]))
          if (Exit.isFailure(exit)) return exit
          acknowledged.push(exit.value[0]!.id)
        }
        return undefined
      }).pipe(Effect.provide(SqliteEngram.layer({ filename })))

      expect(failure).toBeDefined()
      // A typed failure (not a defect), of the StorageFull class, saying what to do.
      expect(Exit.isFailure(failure!) && failure.cause._tag).toBe("Fail")
      const error = Exit.isFailure(failure!) && failure.cause._tag === "Fail" ? failure.cause.error : undefined
      expect(error?._tag).toBe("MemoryStoreFailure")
      expect(error!.message).toContain("storage is full")
      expect(ErrorClass.classify(error!)).toBe("StorageFull")
      expect(acknowledged.length).toBeGreaterThan(0)

      // Reopened without the cap: every acknowledged write is there, and writing works again.
      const stored = yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* store.write([input(999)])
        return (yield* store.get(acknowledged)).records.map((record) => record.id)
      }).pipe(Effect.provide(SqliteEngram.layer({ filename })))
      expect([...stored].sort()).toEqual([...acknowledged].sort())
    }))

  it.effect("the same store recovers once space is freed, without reopening", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(directory, "recover.db")
      yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* capPages((yield* pageCount) + 4)
        let refused = 0
        for (let i = 0; i < 100 && refused === 0; i++) {
          const exit = yield* Effect.exit(store.write([input(i)]))
          if (Exit.isFailure(exit)) {
            expect(exit.cause._tag === "Fail" && ErrorClass.classify(exit.cause.error)).toBe("StorageFull")
            refused++
          }
        }
        expect(refused).toBe(1)
        yield* capPages(1_000_000)
        const [written] = yield* store.write([input(2)])
        expect((yield* store.get([written!.id])).records).toHaveLength(1)
      }).pipe(Effect.provide(SqliteEngram.layer({ filename })))
    }))

  it.effect("a COMMIT that fails is a typed store failure, rolled back, and the next write succeeds", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(directory, "commit.db")
      yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const sql = yield* SqlClient.SqlClient
        // A deferred foreign key is checked at COMMIT: the insert succeeds, the COMMIT fails.
        yield* sql.unsafe(`CREATE TABLE commit_gate (id INTEGER PRIMARY KEY)`)
        yield* sql.unsafe(
          `CREATE TABLE commit_probe (gate INTEGER REFERENCES commit_gate(id) DEFERRABLE INITIALLY DEFERRED)`
        )
        yield* sql.unsafe(
          `CREATE TRIGGER fail_at_commit AFTER INSERT ON engram_memories
           WHEN NEW.content LIKE 'doomed%' BEGIN INSERT INTO commit_probe VALUES (42); END`
        )
        const exit = yield* Effect.exit(store.write([{ ...input(0), content: "doomed write" }]))
        expect(Exit.isFailure(exit) && exit.cause._tag).toBe("Fail")
        const error = Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined
        expect(error?._tag).toBe("MemoryStoreFailure")
        expect(ErrorClass.classify(error!)).toBe("Unavailable")
        // Rolled back: the doomed record is not stored, and the connection takes the next write.
        const [kept] = yield* store.write([input(1)])
        const listed = yield* store.list({ scopes: ["global"] })
        expect(listed.records.map((record) => record.id)).toEqual([kept!.id])
      }).pipe(Effect.provide(SqliteEngram.layer({ filename })))
    }))
})
