/**
 * The states a process killed at the wrong moment leaves an SQLite store in, built exactly (with
 * SQLite's own files, no hand-written bytes), and what opening each one does: every state SQLite
 * recovers from opens with every committed record; real damage is refused, and no message advises
 * restoring a file SQLite can open.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll } from "vitest"

const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-crash-states-"))
afterAll(() => NodeFs.rmSync(directory, { recursive: true, force: true }))

let made = 0
const freshPath = (name: string): string => {
  const dir = NodePath.join(directory, `${made++}-${name}`)
  NodeFs.mkdirSync(dir)
  return NodePath.join(dir, "engram.db")
}

const records = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({
    id: `${prefix}-${i}`,
    content: `${prefix} record ${i} about the staging database ${"and more words ".repeat(8)}`,
    kind: "note" as const
  }))

const writeRecords = (filename: string, prefix: string, count: number) =>
  Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write(records(prefix, count))).pipe(
    Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename })))),
    Effect.asVoid
  )

/** The page count page 1 records, and the main file's size. */
const header = (filename: string) => {
  const bytes = NodeFs.readFileSync(filename)
  return { pages: bytes.readUInt32BE(28), pageSize: bytes.readUInt16BE(16), size: bytes.length }
}

/** What plain SQLite says of the file: opens it and runs `integrity_check` ("ok" when sound). */
const sqliteVerdict = (filename: string): string => {
  try {
    const db = new Database(filename)
    try {
      return String(db.pragma("integrity_check", { simple: true }))
    } finally {
      db.close()
    }
  } catch (cause) {
    return `unopenable: ${String(cause)}`
  }
}

/** Opens the file as the stores do; the open error's message, or the ids the store holds. */
const openStore = (filename: string, options: SqliteDatabase.ClientOptions = {}) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    const page = yield* store.list({ limit: 10_000 })
    return { ids: page.records.map((record) => record.id).sort(), message: undefined }
  }).pipe(
    Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename, ...options })))),
    Effect.catchTag("SqliteOpenError", (error) => Effect.succeed({ ids: [], message: error.message }))
  )

const ids = (prefix: string, count: number) => records(prefix, count).map((record) => record.id)

/**
 * A kill during a checkpoint: SQLite copies the write-ahead log's pages into the main file in page
 * order, page 1 (with the new page count) first, so until the copy ends the main file is shorter
 * than its header says, and the log still holds every missing page. Built by checkpointing a copy
 * and cutting the main file back to its size before the checkpoint.
 */
const killedDuringCheckpoint = (filename: string) =>
  Effect.gen(function*() {
    yield* writeRecords(filename, "old", 40)
    // A second connection stays open, so the store's own close does not checkpoint the new records.
    const holder = new Database(filename)
    holder.pragma("wal_autocheckpoint = 0")
    // Reading joins the write-ahead log (holding its shared lock), which is what keeps it.
    holder.prepare("SELECT count(*) FROM sqlite_schema").get()
    yield* writeRecords(filename, "new", 200)
    const sizeBefore = NodeFs.statSync(filename).size
    const log = NodeFs.readFileSync(`${filename}-wal`)
    holder.pragma("wal_checkpoint(PASSIVE)")
    const checkpointed = NodeFs.readFileSync(filename)
    holder.close()
    NodeFs.writeFileSync(filename, checkpointed.subarray(0, sizeBefore))
    NodeFs.writeFileSync(`${filename}-wal`, log)
    NodeFs.rmSync(`${filename}-shm`, { force: true })
    return { sizeBefore }
  })

/**
 * A kill during a rollback-journal commit (a store switched out of WAL mode by a tool): the journal
 * holds the original of every page the transaction changed, and the main file has page 1 (with the
 * grown page count) written but not yet the pages that grow it. Built from the journal as it stood
 * before COMMIT and the main file after, cut back to the size before the transaction.
 */
const killedDuringJournalCommit = (filename: string) =>
  Effect.gen(function*() {
    yield* writeRecords(filename, "old", 40)
    const db = new Database(filename)
    db.pragma("journal_mode = DELETE")
    const sizeBefore = NodeFs.statSync(filename).size
    // Without sync the journal header counts every record written to it so far.
    db.pragma("synchronous = OFF")
    db.exec("BEGIN")
    db.exec("CREATE TABLE grow (x TEXT)")
    const insert = db.prepare("INSERT INTO grow VALUES (?)")
    for (let i = 0; i < 400; i++) insert.run("x".repeat(400))
    db.exec("UPDATE engram_memories SET content = 'rewritten' WHERE id = 'old-1'")
    const journal = NodeFs.readFileSync(`${filename}-journal`)
    db.exec("COMMIT")
    db.close()
    const committed = NodeFs.readFileSync(filename)
    NodeFs.writeFileSync(filename, committed.subarray(0, sizeBefore))
    NodeFs.writeFileSync(`${filename}-journal`, journal)
  })

describe("opening after a crash", () => {
  it.effect("a main file shorter than its header, completed by the write-ahead log, opens with every record", () =>
    Effect.gen(function*() {
      const filename = freshPath("checkpoint")
      const { sizeBefore } = yield* killedDuringCheckpoint(filename)
      const { pageSize, pages, size } = header(filename)
      // The state the reports describe: the header alone says "truncated".
      expect(size).toBe(sizeBefore)
      expect(pages * pageSize).toBeGreaterThan(size)
      expect(SqliteDatabase.headerProblem(NodeFs.readFileSync(filename).subarray(0, 100), size)).toMatch(/truncated/)
      const opened = yield* openStore(filename)
      expect(opened.message).toBeUndefined()
      expect(opened.ids).toEqual([...ids("old", 40), ...ids("new", 200)].sort())
      // Opening finished SQLite's recovery: the main file is whole again.
      expect(header(filename).size).toBeGreaterThanOrEqual(pages * pageSize)
      expect(sqliteVerdict(filename)).toBe("ok")
    }))

  it.effect("the same state opens read-only (SQLite's own check decides, nothing is written)", () =>
    Effect.gen(function*() {
      const filename = freshPath("checkpoint-readonly")
      const { sizeBefore } = yield* killedDuringCheckpoint(filename)
      const opened = yield* openStore(filename, { create: false, readonly: true })
      expect(opened.message).toBeUndefined()
      expect(opened.ids).toHaveLength(240)
      expect(NodeFs.statSync(filename).size).toBe(sizeBefore)
    }))

  it.effect("a hot rollback journal is rolled back: the store opens as it was before the transaction", () =>
    Effect.gen(function*() {
      const filename = freshPath("journal")
      yield* killedDuringJournalCommit(filename)
      const { pageSize, pages, size } = header(filename)
      expect(pages * pageSize).toBeGreaterThan(size)
      const opened = yield* openStore(filename)
      expect(opened.message).toBeUndefined()
      expect(opened.ids).toEqual(ids("old", 40).sort())
      expect(NodeFs.existsSync(`${filename}-journal`)).toBe(false)
      expect(sqliteVerdict(filename)).toBe("ok")
      const db = new Database(filename, { readonly: true })
      expect(db.prepare("SELECT content FROM engram_memories WHERE id = 'old-1'").pluck().get()).not.toBe("rewritten")
      db.close()
    }))

  it.effect("a hot journal opened read-only is refused with what to do, never advising a backup", () =>
    Effect.gen(function*() {
      const filename = freshPath("journal-readonly")
      yield* killedDuringJournalCommit(filename)
      const opened = yield* openStore(filename, { create: false, readonly: true })
      expect(opened.message).toMatch(/rollback journal/)
      expect(opened.message).toMatch(/write access/)
      expect(opened.message).not.toMatch(/backup|damaged/)
      expect(NodeFs.existsSync(`${filename}-journal`)).toBe(true)
    }))

  it.effect("a write-ahead log that does not complete a truncated file is still refused as damage", () =>
    Effect.gen(function*() {
      const filename = freshPath("short-log")
      const { sizeBefore } = yield* killedDuringCheckpoint(filename)
      // Cut the main file below what it held before the checkpoint: pages the log never had are gone.
      NodeFs.truncateSync(filename, Math.floor(sizeBefore / 2 / 4096) * 4096)
      const copy = `${filename}.copy`
      NodeFs.copyFileSync(filename, copy)
      NodeFs.copyFileSync(`${filename}-wal`, `${copy}-wal`)
      expect(sqliteVerdict(copy)).not.toBe("ok")
      const opened = yield* openStore(filename)
      expect(opened.message).toMatch(/is damaged/)
      expect(opened.ids).toEqual([])
    }))

  it.effect("a log that holds none of the missing pages is refused and left unreplayed, so it stays refused", () =>
    Effect.gen(function*() {
      const filename = freshPath("unrelated-log")
      yield* writeRecords(filename, "old", 240)
      // A log of one small change: it records the database's full size but holds no page past the cut.
      const holder = new Database(filename)
      holder.pragma("wal_autocheckpoint = 0")
      holder.exec("UPDATE engram_memories SET review_state = 'confirmed' WHERE id = 'old-0'")
      const log = NodeFs.readFileSync(`${filename}-wal`)
      const reader = new Database(filename, { readonly: true })
      reader.prepare("SELECT count(*) FROM sqlite_schema").get()
      holder.close()
      reader.close()
      const { pageSize, size } = header(filename)
      NodeFs.truncateSync(filename, size - 2 * pageSize)
      NodeFs.writeFileSync(`${filename}-wal`, log)
      const main = NodeFs.readFileSync(filename)
      for (const attempt of [1, 2]) {
        const opened = yield* openStore(filename)
        expect(opened.message, `open ${attempt}`).toMatch(/is damaged: .*read with its write-ahead log/)
      }
      // A checkpoint would have extended the file with zeroed pages, hiding the damage from the header.
      expect(NodeFs.readFileSync(filename).equals(main)).toBe(true)
      expect(NodeFs.readFileSync(`${filename}-wal`).equals(log)).toBe(true)
    }))

  it.effect("a truncated file with no journal beside it is refused before SQLite reads it", () =>
    Effect.gen(function*() {
      const filename = freshPath("truncated")
      yield* killedDuringCheckpoint(filename)
      NodeFs.rmSync(`${filename}-wal`)
      const before = NodeFs.readFileSync(filename)
      const opened = yield* openStore(filename)
      expect(opened.message).toMatch(/is damaged: it is truncated/)
      expect(NodeFs.readFileSync(filename).equals(before)).toBe(true)
      expect(NodeFs.existsSync(`${filename}-wal`)).toBe(false)
    }))

  it.effect("an empty main file beside a write-ahead log is refused, keeping the log (SQLite would delete it)", () =>
    Effect.gen(function*() {
      const filename = freshPath("empty-with-log")
      yield* killedDuringCheckpoint(filename)
      const log = NodeFs.readFileSync(`${filename}-wal`)
      NodeFs.writeFileSync(filename, "")
      const opened = yield* openStore(filename)
      expect(opened.message).toMatch(/write-ahead log/)
      expect(opened.message).not.toMatch(/remove it/)
      expect(NodeFs.readFileSync(`${filename}-wal`).equals(log)).toBe(true)
    }))
})

describe("creating a store", () => {
  const creations = (filename: string) =>
    NodeFs.readdirSync(NodePath.dirname(filename)).filter((name) => name.includes(".creating-")).sort()

  it.effect("a new store appears whole, in WAL mode, with nothing left beside it", () =>
    Effect.gen(function*() {
      const filename = NodePath.join(freshPath("new"), "..", "deeper", "engram.db")
      const opened = yield* openStore(filename)
      expect(opened.message).toBeUndefined()
      const { pageSize, pages, size } = header(filename)
      expect(pages * pageSize).toBeLessThanOrEqual(size)
      expect(NodeFs.readFileSync(filename).readUInt8(18)).toBe(2)
      expect(creations(filename)).toEqual([])
    }))

  it.effect("a writer's open removes what a creation killed over a minute ago left; a reader's removes nothing", () =>
    Effect.gen(function*() {
      const filename = freshPath("leftovers")
      yield* writeRecords(filename, "old", 1)
      const stale = `${filename}.creating-101-aaaa`
      const fresh = `${filename}.creating-102-bbbb`
      for (const path of [stale, `${stale}-journal`, fresh]) NodeFs.writeFileSync(path, "")
      const longAgo = new Date(Date.now() - 2 * 60_000)
      NodeFs.utimesSync(stale, longAgo, longAgo)
      NodeFs.utimesSync(`${stale}-journal`, longAgo, longAgo)
      expect((yield* openStore(filename, { create: false })).message).toBeUndefined()
      expect(creations(filename)).toHaveLength(3)
      expect((yield* openStore(filename)).message).toBeUndefined()
      expect(creations(filename)).toEqual([NodePath.basename(fresh)])
    }))
})
