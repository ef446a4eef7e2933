/**
 * What the SQLite store adds to the conformance kit (see conformance.test.ts): persistence,
 * rollback across statement chunks, the supersede guard, bad rows in every read path, FTS5 query
 * safety and failures mapped at the service boundary.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryRecord, MemoryStore, ReindexProgress, SearchTokenizer } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as Metric from "effect/Metric"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll } from "vitest"

const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-sqlite-store-"))
afterAll(() => NodeFs.rmSync(directory, { recursive: true, force: true }))
let files = 0
const freshFile = () => NodePath.join(directory, `store-${++files}.db`)

const inMemory = Layer.merge(
  SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))),
  IdGenerator.sequential("mem")
)
const store = MemoryStore.MemoryStore
const ids = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) => records.map((r) => r.id)
const hitIds = (result: MemoryStore.SearchResult) => result.hits.map((h) => h.record.id).sort()

const raw = <A extends object = Record<string, unknown>>(statement: string, ...params: Array<unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe<A>(statement, params))

const corrupt = (id: string, assignment = "kind = 'bogus'") =>
  raw(`UPDATE engram_memories SET ${assignment} WHERE id = ?`, id)

describe("SqliteMemoryStore", () => {
  it.effect("declares keyword search", () =>
    Effect.gen(function*() {
      expect((yield* store).capabilities).toEqual({ search: "keyword" })
    }).pipe(Effect.provide(inMemory)))

  it.effect("keeps up to 64 MiB of pages in its connection's cache, so a search past 10,000 records reads its rows from memory", () =>
    Effect.gen(function*() {
      yield* store
      const [setting] = yield* raw<{ cache_size: number }>("PRAGMA cache_size")
      expect(setting?.cache_size).toBe(-65_536)
    }).pipe(
      Effect.provide(
        Layer.merge(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: freshFile() }))),
          IdGenerator.sequential("mem")
        )
      )
    ))

  it.effect("keeps records across layer rebuilds on a file, migrating once", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const layer = Layer.merge(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
        IdGenerator.sequential("mem")
      )
      yield* Effect.gen(function*() {
        const s = yield* store
        yield* s.write([
          { content: "Doug prefers dark roast coffee", kind: "profile", sourceType: "operator" },
          { content: "The release ships on Friday", kind: "fact" }
        ])
        yield* s.setReviewState("mem-000002", "rejected")
      }).pipe(Effect.provide(layer))

      const reopened = yield* Effect.gen(function*() {
        const s = yield* store
        return {
          listed: (yield* s.list()).records.map((r) => [r.id, r.reviewState]),
          found: hitIds(yield* s.search("COFFEE")),
          migrations: yield* raw<{ name: string }>("SELECT name FROM engram_memory_migrations")
        }
      }).pipe(Effect.provide(layer))
      expect(reopened.listed).toEqual([["mem-000002", "rejected"], ["mem-000001", "confirmed"]])
      expect(reopened.found).toEqual(["mem-000001"])
      expect(reopened.migrations).toEqual([
        { name: "memories" },
        { name: "memory_meta" },
        { name: "search_length" },
        { name: "conversation_position" },
        { name: "conversation_index" },
        { name: "search_totals" },
        { name: "listing_indexes" },
        { name: "world_time" },
        { name: "corroboration" },
        { name: "search_rows" },
        { name: "write_order" }
      ])
    }))

  it.effect("the write-order migration places the episodes already stored in the order they were written", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const layer = Layer.merge(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
        IdGenerator.sequential("mem")
      )
      const episode = (id: string, scope = "project:a") => ({
        id,
        content: `turn ${id}`,
        kind: "episode" as const,
        scope
      })
      yield* Effect.gen(function*() {
        const s = yield* store
        yield* s.write([episode("a0"), episode("b0", "project:b"), episode("a1")])
        yield* s.write([{ id: "n0", content: "a note", kind: "note", scope: "project:a" }, episode("a2")])
        yield* s.write([{ ...episode("p0"), position: { thread: "t", turn: 0 } }, episode("a3")])
        // As a store before migration 0013 left it.
        yield* raw("DROP INDEX engram_memories_write_order")
        yield* raw("DROP INDEX engram_memories_search")
        yield* raw(`CREATE INDEX engram_memories_search ON engram_memories (seq, scope, search_length, thread, turn,
          review_state, invalidated_at, expires_at, valid_from, valid_to, kind, delivery_policy, created_at, supersedes,
          superseded_by)`)
        yield* raw("ALTER TABLE engram_memories DROP COLUMN write_turn")
        yield* raw("DROP TABLE engram_memory_write_order")
        yield* raw("DELETE FROM engram_memory_migrations WHERE migration_id = 13")
      }).pipe(Effect.provide(layer))
      const read = yield* Effect.gen(function*() {
        const s = yield* store
        yield* s.write([episode("a4")])
        return yield* s.neighbours({ positions: [], around: ["a2"], window: 5 })
      }).pipe(Effect.provide(layer))
      expect(ids(read.records)).toEqual(["a0", "a1", "a2", "a3", "a4"])
      expect(read.places.map((p) => [p.id, p.thread, p.turn])).toEqual([
        ["a2", "", 2],
        ["a0", "", 0],
        ["a1", "", 1],
        ["a2", "", 2],
        ["a3", "", 3],
        ["a4", "", 4]
      ])
      expect(read.records.every((r) => r.position === undefined)).toBe(true)
    }))

  it.effect("rebuilds the search index once when it was written by another tokenizer version", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const layer = Layer.merge(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
        IdGenerator.sequential("mem")
      )
      yield* Effect.gen(function*() {
        yield* (yield* store).write([{ content: "Café crème at the Straße corner", kind: "note" }])
        // What an older tokenizer might have left: other tokens, another fingerprint.
        yield* raw("INSERT INTO engram_memories_fts (engram_memories_fts) VALUES ('delete-all')")
        yield* raw("INSERT INTO engram_memories_fts (rowid, tokens) SELECT seq, 'stale' FROM engram_memories")
        yield* raw("UPDATE engram_memory_meta SET value = 'an-older-tokenizer' WHERE key = 'tokenizer'")
      }).pipe(Effect.provide(layer))

      const reopened = yield* Effect.gen(function*() {
        const s = yield* store
        return {
          current: hitIds(yield* s.search("cafe strasse")),
          stale: hitIds(yield* s.search("stale")),
          fingerprint: yield* raw<{ value: string }>("SELECT value FROM engram_memory_meta WHERE key = 'tokenizer'")
        }
      }).pipe(Effect.provide(layer))
      expect(reopened.current).toEqual(["mem-000001"])
      expect(reopened.stale).toEqual([])
      expect(reopened.fingerprint).toEqual([{ value: SearchTokenizer.fingerprint }])
    }))

  it.effect("re-indexes a store written by the unstemmed tokenizer before its first search, reporting progress", () =>
    Effect.gen(function*() {
      const filename = freshFile()
      const layer = Layer.merge(
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
        IdGenerator.sequential("mem")
      )
      yield* Effect.gen(function*() {
        yield* (yield* store).write([
          { content: "Deploys happen on Tuesdays after 10:00", kind: "note" },
          { content: "Lunch is at noon", kind: "note" }
        ])
        // What the tokenizer before stemming left: exact word forms, lengths not yet stored.
        yield* raw("INSERT INTO engram_memories_fts (engram_memories_fts) VALUES ('delete-all')")
        yield* raw(
          "INSERT INTO engram_memories_fts (rowid, tokens) SELECT seq, lower(replace(content, ':', ' ')) FROM engram_memories"
        )
        yield* raw("UPDATE engram_memories SET search_length = 0")
        yield* raw("UPDATE engram_memory_meta SET value = '4a3c1e0f8b2d6a71' WHERE key = 'tokenizer'")
      }).pipe(Effect.provide(layer))

      const reported: Array<{ done: number; total: number }> = []
      const observer: ReindexProgress.Observer = (progress) => Effect.sync(() => void reported.push(progress))
      const found = yield* Effect.gen(function*() {
        return {
          hits: hitIds(yield* (yield* store).search("deploy tuesday")),
          lengths: yield* raw<{ n: number }>("SELECT min(search_length) AS n FROM engram_memories")
        }
      }).pipe(Effect.provide(layer), Effect.provideService(ReindexProgress.ReindexProgress, observer))
      expect(found.hits).toEqual(["mem-000001"])
      expect(reported).toEqual([{ done: 0, total: 2 }, { done: 2, total: 2 }])
      expect(found.lengths).toEqual([{ n: 4 }])
    }))

  describe("atomic writes", () => {
    it.effect("a batch spanning several insert statements stores nothing when its last id is taken", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([{ id: "taken", content: "first writer wins", kind: "note" }])
        const batch = Array.from({ length: 1_201 }, (_, i) => ({
          id: i === 1_200 ? "taken" : `batch-${i}`,
          content: `batch record number ${i} about zebras`,
          kind: "note" as const
        }))
        const error = yield* Effect.flip(s.write(batch))
        expect(error._tag).toBe("DuplicateMemoryId")
        expect(error._tag === "DuplicateMemoryId" && error.id).toBe("taken")
        expect(ids((yield* s.list({ limit: 10_000 })).records)).toEqual(["taken"])
        expect((yield* s.search("zebras")).hits).toEqual([])
        // The index holds no orphan entries either: a later write of the same ids succeeds.
        yield* s.write(batch.slice(0, 3))
        expect(hitIds(yield* s.search("zebras"))).toEqual(["batch-0", "batch-1", "batch-2"])
      }).pipe(Effect.provide(inMemory)))

    it.effect("restore is create-only: a stored id fails the batch and restores nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        const [kept] = yield* s.write([{ id: "kept", content: "kept record", kind: "note" }])
        const copy = new MemoryRecord.MemoryRecord({ ...kept!, id: "copy" })
        const error = yield* Effect.flip(s.restore([copy, kept!]))
        expect(error._tag === "DuplicateMemoryId" && error.id).toBe("kept")
        expect(ids((yield* s.list()).records)).toEqual(["kept"])
      }).pipe(Effect.provide(inMemory)))
  })

  it.effect("supersede rolls the successor back when the original is invalidated under it", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* s.write([{ id: "old", content: "The office is on the third floor", kind: "fact" }])
      // Another writer invalidates the original between the successor's insert and the update.
      yield* raw(`CREATE TRIGGER concurrent_writer AFTER INSERT ON engram_memories WHEN new.supersedes = 'old'
        BEGIN UPDATE engram_memories SET invalidated_at = 1, invalidation_reason = 'manual' WHERE id = 'old'; END`)
      const error = yield* Effect.flip(s.supersede("old", { id: "new", content: "The office moved", kind: "fact" }))
      expect(error._tag).toBe("MemoryConflict")
      const all = yield* s.list({ includeSuperseded: true })
      expect(all.records.map((r) => [r.id, r.invalidationReason])).toEqual([["old", undefined]])
      expect((yield* s.search("moved")).hits).toEqual([])
    }).pipe(Effect.provide(inMemory)))

  describe("bad rows", () => {
    const skippedCounter = Metric.tagged(MemoryStore.rowsSkipped, "backend", "sqlite")
    const counted = Effect.map(Metric.value(skippedCounter), (state) => state.count)

    // Written r5 first, so that r1 — the last input — lists first (decision 0173).
    const fiveNotes = Effect.flatMap(
      store,
      (s) =>
        s.write(
          ["r5", "r4", "r3", "r2", "r1"].map((id) => ({
            id,
            content: "same words in every note",
            kind: "note" as const
          }))
        )
    )

    it.effect("a row with a text timestamp is skipped, logged with its id and counted in the metric", () =>
      Effect.gen(function*() {
        const s = yield* store
        const warnings: Array<{ message: unknown; annotations: Record<string, unknown> }> = []
        const capture = Logger.make(({ annotations, logLevel, message }) => {
          if (logLevel._tag === "Warning") {
            warnings.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
          }
        })
        yield* fiveNotes
        yield* corrupt("r3", "created_at = 'yesterday'")
        const before = yield* counted
        const page = yield* s.list().pipe(Effect.provide(Logger.replace(Logger.defaultLogger, capture)))
        expect(ids(page.records)).toEqual(["r1", "r2", "r4", "r5"])
        expect(page.skipped).toBe(1)
        expect((yield* counted) - before).toBe(1)
        expect(warnings).toHaveLength(1)
        expect(warnings[0]!.annotations).toMatchObject({ operation: "list", memoryId: "r3" })
        expect(String(warnings[0]!.annotations.reason)).toContain("created_at")
      }).pipe(Effect.provide(inMemory)))

    it.effect("a page is the next stored rows: bad rows in it leave it short and are never read twice", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* fiveNotes
        yield* corrupt("r2")
        yield* corrupt("r3", "tags = 'not json'")
        const first = yield* s.list({ limit: 2 })
        expect([ids(first.records), first.skipped]).toEqual([["r1"], 1])
        expect(first.nextCursor).toBeDefined()
        const second = yield* s.list({ limit: 2, cursor: first.nextCursor! })
        expect([ids(second.records), second.skipped]).toEqual([["r4"], 1])
        const third = yield* s.list({ limit: 2, cursor: second.nextCursor! })
        expect([ids(third.records), third.skipped, third.nextCursor]).toEqual([["r5"], 0, undefined])
      }).pipe(Effect.provide(inMemory)))

    it.effect("search fills its limit past bad rows", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* fiveNotes
        yield* corrupt("r2")
        yield* corrupt("r3", "scope = 'nowhere'")
        const result = yield* s.search("words", { limit: 2 })
        expect(result.hits).toHaveLength(2)
        expect(result.skipped).toBe(2)
        expect(result.hits.every((h) => h.score > 0)).toBe(true)
      }).pipe(Effect.provide(inMemory)))

    it.effect("a tie of hundreds of equal scores answers the newest first, past bad rows, as the in-memory store does", () =>
      Effect.gen(function*() {
        const s = yield* store
        // 300 records of one length share one score for "tied"; written in one batch, each is 1 ms
        // newer than the one before, so the ranking order among them is newest first.
        const inputs = Array.from({ length: 300 }, (_, i) => ({ content: `tied word n${i}`, kind: "note" as const }))
        const written = yield* s.write(inputs)
        const newest = [...written].reverse()
        expect((yield* s.search("tied", { limit: 5 })).hits.map((h) => h.record.id)).toEqual(
          ids(newest.slice(0, 5))
        )
        // More bad rows among the newest than the spare rows the statement reads past its limit.
        for (const record of newest.slice(0, 7)) yield* corrupt(record.id)
        const past = yield* s.search("tied", { limit: 5 })
        expect(past.hits.map((h) => h.record.id)).toEqual(ids(newest.slice(7, 12)))
        expect(past.skipped).toBe(7)
        const reference = yield* Effect.provide(
          Effect.flatMap(
            store,
            (memory) => Effect.flatMap(memory.write(inputs), () => memory.search("tied", { limit: 5 }))
          ),
          Layer.merge(MemoryStore.layerMemory, IdGenerator.sequential("mem"))
        )
        expect(reference.hits.map((h) => h.record.content)).toEqual(newest.slice(0, 5).map((r) => r.content))
      }).pipe(Effect.provide(inMemory)))

    it.effect("a tie read past its capped rows asks again: a conversation turn of the same score does not jump the tie", () =>
      Effect.gen(function*() {
        const s = yield* store
        // The oldest record sits in a conversation (its score is final only in core, so the
        // statement returns it whatever the cap) and ties with 300 newer records.
        yield* s.write([{ content: "tied word pos", kind: "note", position: { thread: "t1", turn: 1 } }])
        const written = yield* s.write(
          Array.from({ length: 300 }, (_, i) => ({ content: `tied word n${i}`, kind: "note" as const }))
        )
        const newest = [...written].reverse()
        // Five bad rows: the first read's nine capped rows hold four good ones, the turn a fifth.
        for (const record of newest.slice(0, 5)) yield* corrupt(record.id)
        const result = yield* s.search("tied", { limit: 5 })
        expect(result.hits.map((h) => h.record.id)).toEqual(ids(newest.slice(5, 10)))
      }).pipe(Effect.provide(inMemory)))

    it.effect("a lifecycle operation on a bad row fails with MemoryStoreFailure naming the row and changes nothing", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* fiveNotes
        yield* corrupt("r4")
        const error = yield* Effect.flip(s.setReviewState("r4", "confirmed"))
        expect(error._tag).toBe("MemoryStoreFailure")
        expect(error.message).toContain(`"r4"`)
        expect(error.message).toContain("kind")
        const [row] = yield* raw<{ review_state: string }>("SELECT review_state FROM engram_memories WHERE id = 'r4'")
        expect(row!.review_state).toBe("pending")
      }).pipe(Effect.provide(inMemory)))
  })

  describe("search", () => {
    it.effect("treats FTS5 syntax in a query as plain words", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([
          { id: "near", content: "Meet near the station, not at the office", kind: "note" },
          { id: "star", content: "Star ratings: five out of five", kind: "note" },
          { id: "quote", content: "He said \"ship it\" and left", kind: "note" }
        ])
        const queries: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
          [`NEAR(meet station)`, ["near"]],
          [`"ship`, ["quote"]],
          [`ship" OR "five`, ["quote", "star"]],
          [`NOT office`, ["near"]],
          [`star*`, ["star"]],
          [`-five +ratings`, ["star"]],
          [`content:station`, ["near"]],
          [`^meet`, ["near"]],
          [`AND`, ["quote"]],
          [`OR`, []]
        ]
        for (const [query, expected] of queries) {
          expect([query, hitIds(yield* s.search(query))]).toEqual([query, expected])
        }
      }).pipe(Effect.provide(inMemory)))

    it.effect("tells voiced kana apart and matches half-width kana and Hangul", () =>
      Effect.gen(function*() {
        const s = yield* store
        yield* s.write([
          { id: "glass", content: "ガラス の 窓", kind: "note" },
          { id: "crow", content: "カラス が鳴く", kind: "note" },
          { id: "korean", content: "한국어 검색 테스트", kind: "note" }
        ])
        expect(hitIds(yield* s.search("ガラス"))).toEqual(["glass"])
        expect(hitIds(yield* s.search("ｶﾗｽ"))).toEqual(["crow"])
        expect(hitIds(yield* s.search("검색"))).toEqual(["korean"])
      }).pipe(Effect.provide(inMemory)))
  })

  it.effect("get returns records in the order asked, repeats included, and honours scopes", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* s.write([
        { id: "g", content: "global note", kind: "note" },
        { id: "p", content: "project note", kind: "note", scope: "project:alpha" }
      ])
      expect(ids((yield* s.get(["p", "missing", "g", "p"])).records)).toEqual(["p", "g", "p"])
      expect(ids((yield* s.get(["p", "g"], { scopes: ["global"] })).records)).toEqual(["g"])
    }).pipe(Effect.provide(inMemory)))

  it.effect("a failing database surfaces as MemoryStoreFailure naming the operation", () =>
    Effect.gen(function*() {
      const s = yield* store
      yield* raw("DROP TABLE engram_memories")
      const listError = yield* Effect.flip(s.list())
      expect(listError._tag).toBe("MemoryStoreFailure")
      expect(listError.message).toMatch(/^memory store list failed: .*no such table/)
      const writeError = yield* Effect.flip(s.write([{ content: "x", kind: "note" }]))
      expect(writeError.message).toMatch(/^memory store write failed/)
    }).pipe(Effect.provide(inMemory)))

  it.effect("shares its database with other stores: a second build on the same client migrates nothing", () =>
    Effect.gen(function*() {
      const twice = Layer.merge(SqliteEngram.layerStores(), SqliteEngram.layerStores())
      const layer = Layer.provideMerge(
        twice,
        SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
      )
      const rows = yield* raw<{ migration_id: number }>("SELECT migration_id FROM engram_memory_migrations").pipe(
        Effect.provide(layer)
      )
      expect(rows).toEqual([
        { migration_id: 1 },
        { migration_id: 2 },
        { migration_id: 3 },
        { migration_id: 4 },
        {
          migration_id: 5
        },
        { migration_id: 6 },
        { migration_id: 7 },
        { migration_id: 10 },
        { migration_id: 11 },
        { migration_id: 12 },
        { migration_id: 13 }
      ])
    }))
})
