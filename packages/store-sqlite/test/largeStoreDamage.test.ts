/**
 * Damage is found at open whatever the size (issue 26, item 7): a store is checked page by page
 * unless it is exactly as a clean close by Engram left it, so damage from outside (a changed file)
 * or after a crash (a log beside it) is refused before any write. The rule holds for every size
 * (decision 0094): a small store Engram vouches for skips the page check too.
 */
import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

let dir: string
let original: string

const digest = (file: string) => createHash("sha256").update(NodeFs.readFileSync(file)).digest("hex")

/** Zeroes 16 pages in the middle of the file: what a bad copy or a disk leaves. */
const damageMiddle = (file: string) => {
  const size = NodeFs.statSync(file).size
  const fd = NodeFs.openSync(file, "r+")
  NodeFs.writeSync(fd, Buffer.alloc(16 * 4096), 0, 16 * 4096, Math.floor(size / 4096 / 2) * 4096)
  NodeFs.closeSync(fd)
}

const copyStore = (name: string): string => {
  const file = NodePath.join(dir, name)
  NodeFs.copyFileSync(original, file)
  return file
}

const openMessage = (file: string): Promise<string> =>
  Effect.runPromise(
    Effect.scoped(SqliteDatabase.make({ filename: file })).pipe(
      Effect.as("opened"),
      Effect.catchAll((error) => Effect.succeed(error.message))
    )
  )

const writeOne = (file: string): Promise<string> =>
  Effect.runPromise(
    Effect.flatMap(MemoryStore.MemoryStore, (store) => store.write([{ content: "one more", kind: "note" }])).pipe(
      Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file })))),
      Effect.as("written"),
      Effect.catchAll((error) => Effect.succeed(error.message))
    )
  )

beforeAll(async () => {
  dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-large-"))
  original = NodePath.join(dir, "original.db")
  await Effect.runPromise(
    Effect.flatMap(MemoryStore.MemoryStore, (store) =>
      store.write(
        Array.from({ length: 12_000 }, (_, i) => ({
          content: `record ${i} about the staging database, the lisbon office and the release train ${
            "filler ".repeat(60)
          }`,
          kind: "note" as const
        }))
      )).pipe(
        Effect.provide(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: original })))
        )
      )
  )
}, 120_000)

afterAll(() => NodeFs.rmSync(dir, { recursive: true, force: true }))

describe("a store of several megabytes", () => {
  it("a clean close records the file; the next open vouches for it, and any change undoes that", async () => {
    expect(NodeFs.statSync(original).size).toBeGreaterThan(8 * 1024 * 1024)
    expect(SqliteDatabase.isKnownSound(original)).toBe(true)
    expect(await openMessage(original)).toBe("opened")
    expect(SqliteDatabase.isKnownSound(original)).toBe(true)
    // A copy is a different file (another inode, new times): Engram cannot vouch for it.
    const copy = copyStore("copy.db")
    NodeFs.copyFileSync(SqliteDatabase.verifiedStateFile(original), SqliteDatabase.verifiedStateFile(copy))
    expect(SqliteDatabase.isKnownSound(copy)).toBe(false)
    expect(await openMessage(copy)).toBe("opened")
    expect(SqliteDatabase.isKnownSound(copy)).toBe(true)
  })

  it("damage made outside Engram is refused at open, and the store takes no write", async () => {
    const file = copyStore("damaged.db")
    expect(await openMessage(file)).toBe("opened")
    expect(SqliteDatabase.isKnownSound(file)).toBe(true)
    damageMiddle(file)
    expect(SqliteDatabase.isKnownSound(file)).toBe(false)
    const before = digest(file)
    expect(await openMessage(file)).toMatch(/the file is damaged: /)
    expect(await writeOne(file)).toMatch(/the file is damaged: /)
    expect(digest(file)).toBe(before)
    expect(SqliteDatabase.isKnownSound(file)).toBe(false)
  })

  it("after a crash (a log beside the file) every page is checked, even when the record still matches", async () => {
    const file = copyStore("crashed.db")
    damageMiddle(file)
    // The record forged to match the damaged file: only the log beside it tells the open to look.
    const stat = NodeFs.statSync(file)
    NodeFs.writeFileSync(
      SqliteDatabase.verifiedStateFile(file),
      JSON.stringify({ size: stat.size, ino: stat.ino, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs })
    )
    expect(SqliteDatabase.isKnownSound(file)).toBe(true)
    NodeFs.writeFileSync(`${file}-wal`, Buffer.alloc(4096, 7))
    expect(SqliteDatabase.isKnownSound(file)).toBe(false)
    expect(await writeOne(file)).toMatch(/the file is damaged: /)
  })
})

describe("a small store", () => {
  // The open reads the record, not the pages: a damaged small file whose record was forged to match
  // opens, which shows that a store of any size Engram vouches for skips the page check (decision
  // 0094); with no record, or a log beside it, the same file is refused.
  it("is vouched for like a large one, and checked whole when it cannot be", async () => {
    const file = NodePath.join(dir, "small.db")
    await Effect.runPromise(
      Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        store.write(
          Array.from(
            { length: 400 },
            (_, i) => ({ content: `small record ${i} ${"filler ".repeat(40)}`, kind: "note" as const })
          )
        )).pipe(
          Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file }))))
        )
    )
    expect(NodeFs.statSync(file).size).toBeLessThan(1024 * 1024)
    expect(SqliteDatabase.isKnownSound(file)).toBe(true)
    damageMiddle(file)
    expect(await openMessage(file)).toMatch(/the file is damaged: /)
    const stat = NodeFs.statSync(file)
    NodeFs.writeFileSync(
      SqliteDatabase.verifiedStateFile(file),
      JSON.stringify({ size: stat.size, ino: stat.ino, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs })
    )
    expect(SqliteDatabase.isKnownSound(file)).toBe(true)
    expect(await openMessage(file)).toBe("opened")
    NodeFs.writeFileSync(`${file}-wal`, Buffer.alloc(4096, 7))
    expect(await openMessage(file)).toMatch(/the file is damaged: /)
  })
})
