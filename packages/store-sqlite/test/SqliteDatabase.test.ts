import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { SqliteDatabase } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll } from "vitest"

const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-sqlite-client-"))
afterAll(() => NodeFs.rmSync(directory, { recursive: true, force: true }))

const pragma = (name: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<Record<string, unknown>>(`PRAGMA ${name}`)).pipe(
    Effect.map((rows) => Object.values(rows[0] ?? {})[0])
  )

describe("SqliteDatabase.layer", () => {
  it.effect("opens a file in WAL mode, creating its missing directories", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(directory, "nested", "deeper", "engram.db")
      const settings = yield* Effect.all([pragma("journal_mode"), pragma("busy_timeout"), pragma("foreign_keys")]).pipe(
        Effect.provide(SqliteDatabase.layer({ filename }))
      )
      expect(settings).toEqual(["wal", SqliteDatabase.BUSY_TIMEOUT_MS, 1])
      expect(NodeFs.existsSync(filename)).toBe(true)
    }))

  it.effect("opens a private in-memory database for :memory:", () =>
    Effect.gen(function*() {
      const run = Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE IF NOT EXISTS t (x INTEGER)`
        yield* sql`INSERT INTO t VALUES (1)`
        return [yield* pragma("journal_mode"), (yield* sql<{ n: number }>`SELECT count(*) AS n FROM t`)[0]!.n]
      })
      // Each build is its own empty database.
      expect(yield* Effect.provide(run, SqliteDatabase.layer({ filename: ":memory:" }))).toEqual(["memory", 1])
      expect(yield* Effect.provide(run, SqliteDatabase.layer({ filename: ":memory:" }))).toEqual(["memory", 1])
    }))

  it.effect("fails with SqliteOpenError when the directory cannot be created", () =>
    Effect.gen(function*() {
      const blocker = NodePath.join(directory, "a-file")
      NodeFs.writeFileSync(blocker, "not a directory")
      const filename = NodePath.join(blocker, "engram.db")
      const error = yield* Effect.flip(Effect.provide(pragma("journal_mode"), SqliteDatabase.layer({ filename })))
      expect(error._tag).toBe("SqliteOpenError")
      expect(error.message).toContain(filename)
      expect(error.message).toContain("cannot be created")
    }))

  it.effect("fails with SqliteOpenError when the file is not an SQLite database", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(directory, "notes.txt")
      NodeFs.writeFileSync(
        filename,
        "These are plain notes, long enough to fill the header of a database page. ".repeat(20)
      )
      const error = yield* Effect.flip(Effect.provide(pragma("journal_mode"), SqliteDatabase.layer({ filename })))
      expect(error._tag).toBe("SqliteOpenError")
      expect(error.message).toMatch(/the file is damaged: it is not an SQLite database/)
      // Nothing was written over the file.
      expect(NodeFs.readFileSync(filename, "utf8")).toMatch(/^These are plain notes/)
    }))
})
