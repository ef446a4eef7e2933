/**
 * The search totals row (decision 0125): the record count and search-length sum BM25 reads, kept
 * by every write path in its own transaction, counted by the migration that adds it, checked by
 * `engram doctor` and repaired by its re-index, and what a search actually reads.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram, SqliteMemoryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll } from "vitest"

const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-sqlite-totals-"))
afterAll(() => NodeFs.rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshFile = () => NodePath.join(directory, `store-${++files}.db`)

const storeOn = (filename: string) =>
  Layer.merge(
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
    IdGenerator.sequential("mem")
  )

const raw = <A extends object = Record<string, unknown>>(statement: string, ...params: Array<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement, params))

/** The row, and the totals counted from the records. */
const totals = Effect.gen(function*() {
  const [held] = yield* raw<{ records: number; search_length: number }>(
    "SELECT records, search_length FROM engram_memory_totals"
  )
  const [counted] = yield* raw<{ records: number; search_length: number }>(
    "SELECT count(*) AS records, coalesce(sum(search_length), 0) AS search_length FROM engram_memories"
  )
  return { held, counted }
})

const expectKept = Effect.gen(function*() {
  const { counted, held } = yield* totals
  expect(held).toEqual(counted)
  expect(yield* SqliteMemoryStore.checkSearchIndex).toEqual([])
  return counted!
})

describe("search totals", () => {
  it.effect("every write path keeps the row equal to the records: write, supersede, restore, forget", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      expect(yield* expectKept).toEqual({ records: 0, search_length: 0 })
      const written = yield* store.write([
        { content: "Doug likes green tea in the morning", kind: "fact" },
        { content: "The project ships on Fridays", kind: "fact", scope: "project:p1" },
        { content: "Standing rule: answer briefly", kind: "standing", scope: "project:p1" }
      ])
      const afterWrite = yield* expectKept
      expect(afterWrite.records).toBe(3)
      expect(afterWrite.search_length).toBeGreaterThan(10)
      yield* store.supersede(written[0]!.id, { content: "Doug likes black coffee now", kind: "fact" })
      expect((yield* expectKept).records).toBe(4)
      const restored = written[1]!
      yield* store.forget({ ids: [restored.id] }, { by: "test" })
      expect((yield* expectKept).records).toBe(3)
      yield* store.restore([restored])
      expect((yield* expectKept).records).toBe(4)
      yield* store.forget({ scope: "project:p1" }, { by: "test" })
      expect((yield* expectKept).records).toBe(2)
    }).pipe(Effect.provide(storeOn(":memory:"))))

  it.effect("a failed write leaves the row as it was", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([{ id: "taken", content: "first", kind: "note" }])
      const before = yield* expectKept
      // The second input repeats a stored id: the batch is refused as a whole.
      const failed = yield* Effect.either(
        store.write([{ content: "would be new", kind: "note" }, { id: "taken", content: "again", kind: "note" }])
      )
      expect(failed._tag).toBe("Left")
      expect(yield* expectKept).toEqual(before)
    }).pipe(Effect.provide(storeOn(":memory:"))))

  it.effect("the migration counts a store written before it; doctor finds a drifted row and the re-index repairs it", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* store.write([
          { content: "alpha beta gamma", kind: "note" },
          { content: "beta delta", kind: "note" }
        ])
        // As a store before migration 0006 left it (so without 0010's world-time columns, 0011's
        // corroboration columns and 0013's write order too).
        yield* raw("DROP TABLE engram_memory_totals")
        yield* raw("DROP INDEX engram_memories_always")
        yield* raw("DROP INDEX engram_memories_review")
        yield* raw("DROP INDEX engram_memories_search")
        yield* raw("DROP INDEX engram_memories_write_order")
        yield* raw("DROP TABLE engram_memory_write_order")
        yield* raw("ALTER TABLE engram_memories DROP COLUMN write_turn")
        yield* raw("ALTER TABLE engram_memories DROP COLUMN valid_from")
        yield* raw("ALTER TABLE engram_memories DROP COLUMN valid_to")
        yield* raw("ALTER TABLE engram_memories DROP COLUMN corroborations")
        yield* raw("ALTER TABLE engram_memories DROP COLUMN corroboration_sessions")
        yield* raw("ALTER TABLE engram_memories DROP COLUMN corroborated_at")
        yield* raw("DELETE FROM engram_memory_migrations WHERE migration_id >= 6")
      }).pipe(Effect.provide(storeOn(file)))
      yield* Effect.gen(function*() {
        expect((yield* expectKept).records).toBe(2)
        yield* raw("UPDATE engram_memory_totals SET records = 7")
        const problems = yield* SqliteMemoryStore.checkSearchIndex
        expect(problems).toEqual([expect.stringMatching(/search totals say 7 records .* the records 2 /)])
        yield* SqliteMemoryStore.rebuildSearchIndex
        expect((yield* expectKept).records).toBe(2)
      }).pipe(Effect.provide(storeOn(file)))
    }))

  it.effect("a search reads the row: BM25's average length is the row's", () =>
    Effect.gen(function*() {
      const file = freshFile()
      const score = Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const { hits } = yield* store.search("gamma")
        return hits[0]!.score
      })
      const sound = yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        yield* store.write([
          { content: "alpha beta gamma", kind: "note" },
          { content: "beta delta epsilon zeta eta theta", kind: "note" },
          { content: "iota kappa", kind: "note" }
        ])
        return yield* score
      }).pipe(Effect.provide(storeOn(file)))
      // A new store (its cache empty) on a row claiming much longer records scores differently.
      const drifted = yield* Effect.gen(function*() {
        yield* raw("UPDATE engram_memory_totals SET search_length = search_length * 50")
        return yield* score
      }).pipe(Effect.provide(storeOn(file)))
      expect(drifted).not.toBe(sound)
    }))
})
