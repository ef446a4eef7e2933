import { describe, expect, it } from "@effect/vitest"
import { runVectorConformance } from "@engram/conformance"
import { Embeddings, MemoryQuery, MemoryRecord, MemoryStore, SearchTokenizer } from "@engram/core"
import { SqliteDatabase, SqliteEngram, SqliteVectorIndex } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import * as SqliteVec from "sqlite-vec"
import { afterAll } from "vitest"

runVectorConformance(
  "sqlite",
  SqliteEngram.layerStoresWithVectors().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))),
  {
    vectorIndex: SqliteVectorIndex.make
  }
)

const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-sqlite-vectors-"))
afterAll(() => NodeFs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const freshFile = () => NodePath.join(dir, `store-${files++}.db`)

const DOUG = "project:doug"
const corpus = [
  { id: "pg", content: "Doug runs PostgreSQL 16 for the billing service", kind: "fact" as const, scope: DOUG },
  { id: "deploys", content: "Redeployments happen every Tuesday after standup", kind: "fact" as const, scope: DOUG },
  { id: "tea", content: "Doug prefers green tea over coffee", kind: "profile" as const, scope: DOUG },
  { id: "ana", content: "Ana administers PostgreSQL clusters", kind: "fact" as const, scope: "project:ana" }
]
const embedder = Embeddings.makeTest()
const withEmbedder = Layer.succeed(Embeddings.Embeddings, embedder)
/** Vector ranking alone (a search's own fusion tuning): what the index returns, in its order. */
const vectorOnly = { fusion: { lexicalWeight: 0, minSimilarity: -1 } } as const

const lexical = (file: string, readonly = false) =>
  SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file, readonly })))
const hybrid = (file: string, readonly = false) =>
  SqliteEngram.layerStoresWithVectors().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file, readonly })))
    .pipe(
      Layer.provide(withEmbedder)
    )

const ids = (result: MemoryStore.SearchResult) => result.hits.map((hit) => hit.record.id)
const tables = (file: string) => {
  const db = new Database(file, { readonly: true })
  try {
    return (db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY name")
      .all() as Array<
        { name: string }
      >).map((row) => row.name)
  } finally {
    db.close()
  }
}

/** Warnings logged while `self` runs. */
const warningsOf = <A, E>(self: Effect.Effect<A, E>) =>
  Effect.gen(function*() {
    const warnings: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      if (logLevel._tag === "Warning") warnings.push(String(message))
    })
    const value = yield* self.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, logger)))
    return { value, warnings }
  })

const write = (layer: Layer.Layer<MemoryStore.MemoryStore, unknown>) =>
  Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write(corpus)).pipe(Effect.provide(layer))

const search = (query: string, options: MemoryQuery.SearchOptions = {}) =>
  Effect.flatMap(MemoryStore.MemoryStore, (s) => s.search(query, options))

describe("the vec0 layout (decision 0088)", () => {
  it.effect("a store written with the first layout (a BLOB table) migrates on open, vectors kept", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* write(lexical(file))
      // The layout decision 0053 shipped: its migration, its table, its trigger and its vectors.
      const db = new Database(file)
      db.exec(`CREATE TABLE engram_memory_vector_migrations (migration_id integer PRIMARY KEY NOT NULL,
        created_at datetime NOT NULL DEFAULT current_timestamp, name VARCHAR(255) NOT NULL)`)
      db.exec("INSERT INTO engram_memory_vector_migrations (migration_id, name) VALUES (1, 'memory_vectors')")
      db.exec("CREATE TABLE engram_memory_vectors (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL)")
      db.exec("CREATE TABLE engram_memory_vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
      db.exec(
        "CREATE TRIGGER engram_memory_vectors_forget AFTER DELETE ON engram_memories " +
          "BEGIN DELETE FROM engram_memory_vectors WHERE seq = old.seq; END"
      )
      db.prepare("INSERT INTO engram_memory_vector_meta (key, value) VALUES ('embedder', ?)").run(
        JSON.stringify(embedder.identity)
      )
      const vectors = yield* embedder.embed(
        corpus.map((input) => SearchTokenizer.searchableText({ ...input, tags: [] }))
      )
      const insert = db.prepare(
        "INSERT INTO engram_memory_vectors (seq, embedding) SELECT seq, ? FROM engram_memories WHERE id = ?"
      )
      corpus.forEach((input, i) => insert.run(Buffer.from(vectors[i]!.buffer), input.id))
      db.close()

      const { embedded, found, foundAgain } = yield* Effect.gen(function*() {
        const index = yield* SqliteVectorIndex.make
        const found = ids(yield* search("postgres setup", { scopes: [DOUG], limit: 2, ...vectorOnly }))
        const s = yield* MemoryStore.MemoryStore
        yield* s.forget({ ids: ["pg"] }, { by: "test" })
        const foundAgain = ids(yield* search("postgres setup", { scopes: [DOUG], limit: 2, ...vectorOnly }))
        return { embedded: (yield* index.coverage).embedded, found, foundAgain }
      }).pipe(Effect.provide(hybrid(file)))
      // No re-embedding happened: the embedder has no say in the migration, only the stored blobs.
      expect(found[0]).toBe("pg")
      expect(foundAgain).not.toContain("pg")
      expect(embedded).toBe(corpus.length - 1)
      expect(tables(file)).not.toContain("engram_memory_vectors")
      expect(tables(file)).toContain("engram_memory_vec")
    }))

  it.effect("an upsert replaces a record's vector: the old one is gone, the new one found", () =>
    Effect.gen(function*() {
      const { after, before, embedded } = yield* Effect.gen(function*() {
        const s = yield* MemoryStore.MemoryStore
        yield* s.write(corpus)
        const index = yield* SqliteVectorIndex.make
        const [tea] = yield* embedder.embed(["green tea drinker"])
        const nearest = index.search(embedder.identity, tea!, { scopes: [DOUG] }, 4)
        const before = yield* nearest
        yield* index.upsert(embedder.identity, [{ id: MemoryRecord.MemoryId.make("pg"), vector: tea! }])
        return { before, after: yield* nearest, embedded: (yield* index.coverage).embedded }
      }).pipe(Effect.provide(hybrid(freshFile())))
      expect(before[0]?.id).toBe("tea")
      expect(after).toHaveLength(3)
      expect(after[0]).toEqual({ id: "pg", score: 1 })
      // One vector a record: the replaced one went.
      expect(after.filter((match) => match.id === "pg")).toHaveLength(1)
      expect(embedded).toBe(corpus.length)
    }))

  it.effect("scopes that share a partition bucket stay apart in a scoped search", () =>
    Effect.gen(function*() {
      // One more scope than there are buckets: the last shares the first one's bucket, and the
      // same text in each makes every vector equally near.
      const scopes = Array.from({ length: 17 }, (_, i) => `project:s${String(i).padStart(2, "0")}`)
      const found = yield* Effect.gen(function*() {
        const s = yield* MemoryStore.MemoryStore
        yield* s.write(scopes.map((scope, i) => ({
          id: `m${i}`,
          content: "Doug runs PostgreSQL 16 for the billing service",
          kind: "fact" as const,
          scope
        })))
        // The index itself: the store re-checks its hits' filters, which would hide a leak.
        const index = yield* SqliteVectorIndex.make
        const [query] = yield* embedder.embed(["postgres setup"])
        const near = (scopes: ReadonlyArray<string>) =>
          Effect.map(index.search(embedder.identity, query!, { scopes }, 5), (matches) => matches.map((m) => m.id))
        return {
          last: yield* near([scopes[16]!]),
          sharing: yield* near([scopes[0]!, scopes[16]!]),
          apart: yield* near([scopes[1]!, scopes[16]!])
        }
      }).pipe(Effect.provide(hybrid(freshFile())))
      expect(found.last).toEqual(["m16"])
      expect(found.sharing).toEqual(["m0", "m16"])
      expect(found.apart).toEqual(["m1", "m16"])
    }))

  it.effect("a store opened without an embedder keeps the index in step (reviews, forgets)", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* write(hybrid(file))
      yield* Effect.gen(function*() {
        const s = yield* MemoryStore.MemoryStore
        yield* s.setReviewState("pg", "rejected")
        yield* s.forget({ ids: ["deploys"] }, { by: "test" })
      }).pipe(Effect.provide(lexical(file)))
      const found = yield* search("postgres setup redeploying", {
        scopes: [DOUG],
        deliverable: true,
        limit: 3,
        ...vectorOnly
      }).pipe(Effect.provide(hybrid(file)))
      expect(ids(found)).toEqual(["tea"])
    }))
})

describe("a read-only file with an embedder in context", () => {
  it.effect("with no vector index yet: opens, writes nothing, searches lexically with a note", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* write(lexical(file))
      const before = tables(file)
      const bytes = NodeFs.readFileSync(file)
      const { value, warnings } = yield* warningsOf(
        search("postgresql").pipe(Effect.provide(hybrid(file, true)))
      )
      expect(ids(value).sort()).toEqual(["ana", "pg"])
      expect(warnings.some((warning) => warning.includes("read-only") && warning.includes("lexically"))).toBe(true)
      expect(tables(file)).toEqual(before)
      expect(NodeFs.readFileSync(file).equals(bytes)).toBe(true)
    }))

  it.effect("with the index: searches hybrid, finding a memory that shares no word with the query", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* write(hybrid(file))
      const bytes = NodeFs.readFileSync(file)
      const found = yield* search("postgres setup", { scopes: [DOUG], limit: 1 }).pipe(
        Effect.provide(hybrid(file, true))
      )
      expect(ids(found)).toEqual(["pg"])
      expect(NodeFs.readFileSync(file).equals(bytes)).toBe(true)
    }))

  it.effect("the vector index still refuses another embedder, with a typed error", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* write(hybrid(file))
      const other = Layer.succeed(Embeddings.Embeddings, Embeddings.makeTest({ dimensions: 128 }))
      const opened = yield* Effect.flip(
        search("postgres").pipe(
          Effect.provide(
            SqliteEngram.layerStoresWithVectors().pipe(
              Layer.provideMerge(SqliteDatabase.layer({ filename: file, readonly: true }))
            ).pipe(Layer.provide(other))
          )
        )
      )
      expect(opened._tag).toBe("EmbedderMismatch")
    }))
})

// sqlite-vec is what the index runs on: its KNN must see the vectors the memory store wrote.
describe("sqlite-vec", () => {
  it("ships a loadable binary for this platform", () => {
    expect(NodeFs.existsSync(SqliteVec.getLoadablePath())).toBe(true)
  })
})

describe("vectors are chosen by the layer (decision 0161 (c))", () => {
  it.effect("the lexical layer ignores an Embeddings service in context; the vectors layer searches hybrid", () =>
    Effect.gen(function*() {
      const file = freshFile()
      yield* write(hybrid(file))
      const lexicalHits = yield* search("postgres setup", { scopes: [DOUG], limit: 1 }).pipe(
        Effect.provide(lexical(file).pipe(Layer.provide(withEmbedder)))
      )
      expect(ids(lexicalHits)).toEqual([])
      const hybridHits = yield* search("postgres setup", { scopes: [DOUG], limit: 1 }).pipe(
        Effect.provide(hybrid(file))
      )
      expect(ids(hybridHits)).toEqual(["pg"])
    }))
})
