import * as SqlClient from "@effect/sql/SqlClient"
import { MemoryStore, SearchTokenizer, Sha256 } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { tempDir } from "../../packages/cli/test/utilities.js"
import { engram } from "./spawn.js"

const RECORDS = 1_500

const dirs: Array<() => void> = []
afterEach(async () => {
  for (const cleanup of dirs.splice(0)) cleanup()
})

/** A store file of `RECORDS` searchable records, closed and checkpointed (no WAL left beside it). */
const makeStore = async (): Promise<string> => {
  const { dir, cleanup } = tempDir()
  dirs.push(cleanup)
  const file = NodePath.join(dir, "engram.db")
  await Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write(
        Array.from({ length: RECORDS }, (_, i) => ({
          id: `r-${i}`,
          content: `record ${i} about the staging database and lisbon weather ${"filler ".repeat(20)}`,
          kind: "note" as const
        }))
      )
    }).pipe(
      Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file }))))
    )
  )
  const db = new Database(file)
  db.pragma("wal_checkpoint(TRUNCATE)")
  db.pragma("journal_mode = DELETE")
  db.close()
  return file
}

/** Opening the file as the store does; resolves with the open error's message, or "opened". */
const openMessage = (file: string, options: SqliteDatabase.ClientOptions = {}): Promise<string> =>
  Effect.runPromise(
    Effect.scoped(SqliteDatabase.make({ filename: file, ...options })).pipe(
      Effect.as("opened"),
      Effect.catchAll((error) => Effect.succeed(error.message))
    )
  )

const digest = (file: string): string => Sha256.hex(NodeFs.readFileSync(file))

/** Every command a user would run on a damaged file: each must fail, say so, and change nothing. */
const expectRefusedEverywhere = async (file: string, reason: RegExp) => {
  const before = digest(file)
  for (
    const args of [
      ["memory", "list"],
      ["memory", "search", "staging"],
      ["memory", "add", "a new fact", "--kind", "fact"]
    ]
  ) {
    const run = await engram("--db", file, ...args)
    expect(run.code, `engram ${args.join(" ")}: ${run.stdout}`).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toMatch(reason)
  }
  expect(digest(file)).toBe(before)
  expect(NodeFs.existsSync(`${file}-wal`)).toBe(false)
}

describe("damaged SQLite stores", () => {
  it("a truncated file is refused by list, search and add, and left as it was", async () => {
    const file = await makeStore()
    NodeFs.truncateSync(file, Math.floor(NodeFs.statSync(file).size / 2))
    await expectRefusedEverywhere(file, /is damaged: it is truncated/)
  }, 240_000)

  it("a file with garbled pages is refused on open, left as it was, and doctor says to restore it", async () => {
    const file = await makeStore()
    const bytes = NodeFs.readFileSync(file)
    // Garble ten pages in the middle, leaving the header and schema page intact.
    const pageSize = bytes.readUInt16BE(16)
    const start = pageSize * Math.floor(bytes.length / pageSize / 2)
    for (let i = start; i < start + pageSize * 10 && i < bytes.length; i++) bytes[i] = (i * 7919) & 0xff
    NodeFs.writeFileSync(file, bytes)
    const before = digest(file)
    expect(await openMessage(file)).toMatch(/is damaged: .*engram doctor/)
    expect(await openMessage(file, { create: false })).toMatch(/is damaged/)
    expect(digest(file)).toBe(before)
    const doctor = await engram("--db", file, "doctor")
    expect(doctor.code).toBe(2)
    expect(doctor.stdout).toMatch(/file integrity: \d+ problem/)
    expect(doctor.stdout).toMatch(/restore it from a backup/)
  }, 120_000)

  it("a file that is not a database is refused, naming why", async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = NodePath.join(dir, "notes.txt")
    NodeFs.writeFileSync(file, "these are my notes, not a database\n".repeat(200))
    expect(await openMessage(file)).toMatch(/not an SQLite database/)
    expect(NodeFs.readFileSync(file, "utf8")).toBe("these are my notes, not a database\n".repeat(200))
  })

  it("a 0-byte file is not silently a new store", async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = NodePath.join(dir, "engram.db")
    NodeFs.writeFileSync(file, "")
    expect(await openMessage(file)).toMatch(/empty \(0 bytes\)/)
    expect(await openMessage(file, { create: false })).toMatch(/empty \(0 bytes\)/)
    const add = await engram("--db", file, "memory", "add", "a new fact", "--kind", "fact")
    expect(add.code).toBe(2)
    expect(add.stderr).toMatch(/empty \(0 bytes\)/)
    expect(NodeFs.statSync(file).size).toBe(0)
  }, 120_000)

  it("read commands refuse a path that does not exist and create nothing", async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = NodePath.join(dir, "typo", "engram.db")
    for (const args of [["memory", "list"], ["doctor"]]) {
      const run = await engram("--db", file, ...args)
      expect(run.code, run.stderr).not.toBe(0)
      expect(run.stderr).toMatch(/no such file|no store at/)
      expect(run.stdout).not.toMatch(/no memories match/)
    }
    expect(await openMessage(file, { create: false })).toMatch(/no such file/)
    expect(NodeFs.readdirSync(dir)).toEqual([])
  }, 120_000)

  it("a damaged search index fails search clearly; doctor finds it and --repair rebuilds it", async () => {
    const file = await makeStore()
    const db = new Database(file)
    // Take 100 records out of the index (with their exact tokens, so its structure stays valid):
    // the records and the file's b-trees are sound, and a search would silently miss them.
    const rows = db.prepare("SELECT seq, content FROM engram_memories WHERE seq % 15 = 0").all() as Array<
      { seq: number; content: string }
    >
    const remove = db.prepare(
      "INSERT INTO engram_memories_fts (engram_memories_fts, rowid, tokens) VALUES ('delete', ?, ?)"
    )
    for (const row of rows) {
      remove.run(
        row.seq,
        SearchTokenizer.tokenize(SearchTokenizer.searchableText({ content: row.content, tags: [] })).join(" ")
      )
    }
    db.close()
    expect(rows).toHaveLength(RECORDS / 15)
    const search = await engram("--db", file, "memory", "search", "staging")
    expect(search.code).toBe(2)
    expect(search.stderr).toMatch(/search index is damaged.*engram doctor --repair/)
    expect(search.stdout).toBe("")

    const doctor = await engram("--db", file, "doctor")
    expect(doctor.code).toBe(2)
    expect(doctor.stdout).toMatch(/search index: damaged/)
    expect(doctor.stdout).toMatch(/engram doctor --repair/)

    const repair = await engram("--db", file, "doctor", "--repair")
    expect(repair.code, repair.stderr).toBe(0)
    expect(repair.stdout).toMatch(new RegExp(`rebuilt the search index from ${RECORDS} records`))
    expect(repair.stdout).toMatch(/the store is sound/)

    const hits = await engram("--db", file, "memory", "search", "staging", "--limit", "10000", "--json")
    expect(hits.code, hits.stderr).toBe(0)
    expect((JSON.parse(hits.stdout) as { hits: Array<unknown> }).hits).toHaveLength(RECORDS)
  }, 240_000)
})

describe("read-only stores", () => {
  it("a store opened read-only lists and searches; a write fails and changes nothing", async () => {
    const file = await makeStore()
    const before = digest(file)
    const readOnly = SqliteEngram.layerStores().pipe(
      Layer.provideMerge(SqliteDatabase.layer({ filename: file, create: false, readonly: true }))
    )
    const outcome = await Effect.runPromise(
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const page = yield* store.list({ limit: 5 })
        const found = yield* store.search("lisbon", { limit: 3 })
        const write = yield* Effect.either(store.write([{ content: "nope", kind: "note" }]))
        const sql = yield* SqlClient.SqlClient
        const [mode] = yield* sql<{ query_only: number }>`PRAGMA query_only`
        return { listed: page.records.length, found: found.hits.length, write, mode }
      }).pipe(Effect.provide(readOnly))
    )
    expect(outcome.listed).toBe(5)
    expect(outcome.found).toBe(3)
    expect(outcome.write._tag).toBe("Left")
    expect(String(outcome.write._tag === "Left" && outcome.write.left.message)).toMatch(/readonly/)
    expect(digest(file)).toBe(before)
  })
})

describe("terminal hygiene", () => {
  it("memory list and search print stored escape sequences as visible escapes, never raw", async () => {
    const { dir, cleanup } = tempDir()
    dirs.push(cleanup)
    const file = NodePath.join(dir, "engram.db")
    await Effect.runPromise(
      Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        store.write([{
          id: "esc-1",
          content: "colour \u001b[31mred\u001b[0m and \u001b]0;title\u0007 and \u202Edesrever",
          kind: "note",
          label: "plain"
        }])).pipe(
          Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file }))))
        )
    )
    for (const args of [["memory", "list"], ["memory", "search", "colour"]]) {
      const run = await engram("--db", file, ...args)
      expect(run.code, run.stderr).toBe(0)
      expect(run.stdout).toContain("esc-1")
      expect(run.stdout).not.toMatch(/[\u001b\u0007\u202E]/)
      expect(run.stdout).toContain("\\u{1B}[31mred")
    }
  }, 120_000)
})
