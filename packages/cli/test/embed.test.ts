/**
 * `engram embed` on a SQLite file written without an embedder: it backfills every deliverable
 * record with a progress line, a store opened with the same embedder then finds a memory sharing
 * no word with the query, and another embedder is refused until `--reembed`. With `--embedder
 * local`, the offline sentence encoder finds a memory by meaning.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { inject } from "@effect/vitest"
import { Embeddings, MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Path from "node:path"
import { childEnv, engram, engramJson, expectRefused, runProcess, tempDir } from "./utilities.js"

describe("engram embed", { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "engram.db")

  const searchWith = (embeddings: Embeddings.Service, query: string) =>
    Effect.runPromise(Effect.either(
      Effect.flatMap(MemoryStore.MemoryStore, (store) => store.search(query, { deliverable: true })).pipe(
        Effect.map((result) => result.hits.map((hit) => hit.record.content)),
        Effect.provide(
          SqliteEngram.layerStoresWithVectors().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db }))).pipe(
            Layer.provide(Layer.succeed(Embeddings.Embeddings, embeddings))
          )
        )
      )
    ))

  it("backfills the records a store holds without vectors", async () => {
    for (const content of ["Doug runs PostgreSQL 16 for the billing service", "The office moved to Lisbon"]) {
      const added = await engram("memory", "add", content, "--kind", "fact", "--db", db)
      expect(added.code).toBe(0)
    }
    const run = await engram("embed", "--embedder", "test", "--db", db)
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("2 record(s) embedded with engram-test-trigram-v1 (256 dimensions)")
    expect(run.stdout).toContain("2 of 2 deliverable record(s) have a vector")
    expect(run.stderr).toContain("embedding memories")
    const again = await engramJson("embed", "--embedder", "test", "--db", db)
    expect(again).toMatchObject({ embedded: 0, deliverable: 2, covered: 2 })
  })

  it("a store opened with the same embedder finds a memory sharing no word with the query", async () => {
    const found = await searchWith(Embeddings.makeTest(), "postgres setup")
    expect(Either.getOrThrow(found)[0]).toBe("Doug runs PostgreSQL 16 for the billing service")
  })

  it("memory search --embedder test finds by sub-word overlap what the lexical search misses", async () => {
    const hits = (run: unknown) =>
      (run as { readonly hits: ReadonlyArray<{ readonly record: { readonly content: string } }> }).hits
        .map((hit) => hit.record.content)
    // "postgres" is no whole word of "PostgreSQL": keywords alone find nothing, as before.
    expect(hits(await engramJson("memory", "search", "postgres", "--db", db))).toEqual([])
    expect(hits(await engramJson("memory", "search", "postgres", "--db", db, "--embedder", "test"))).toEqual([
      "Doug runs PostgreSQL 16 for the billing service"
    ])
    const human = await engram("memory", "search", "postgres", "--db", db, "--embedder", "test")
    expect(human.code).toBe(0)
    expect(human.stdout).toContain("Doug runs PostgreSQL 16")
    // The embedder must be the one that made the vectors: another one cannot open the store.
    expectRefused(
      await engram("memory", "search", "postgres", "--db", db, "--embedder", "test", "--embedder-dimensions", "128"),
      "use the embedder that made them",
      2
    )
  })

  it("another embedder is refused until --reembed replaces every vector", async () => {
    const refused = await engram("embed", "--embedder", "test", "--dimensions", "128", "--db", db)
    expectRefused(refused, "engram embed --reembed")
    const opened = await searchWith(Embeddings.makeTest({ dimensions: 128 }), "postgres")
    expect(Either.isLeft(opened) && opened.left._tag).toBe("EmbedderMismatch")
    const reembedded = await engramJson("embed", "--embedder", "test", "--dimensions", "128", "--reembed", "--db", db)
    expect(reembedded).toMatchObject({ reembedded: true, embedded: 2, deliverable: 2, covered: 2, dimensions: 128 })
    const old = await searchWith(Embeddings.makeTest(), "postgres")
    expect(Either.isLeft(old) && old.left._tag).toBe("EmbedderMismatch")
  })
})

// The bundle leaves @engram/embedder-local to be loaded from beside it, as an install would; in
// the workspace that package is TypeScript, so the bundle runs with tsx and the source condition.
const engramLocal = (...args: ReadonlyArray<string>) =>
  runProcess(process.execPath, ["--conditions=engram-source", "--import", "tsx", inject("engramBin"), ...args], {
    env: childEnv({}, ["ENGRAM_DB", "ENGRAM_PG_URL"]),
    timeout: 180_000
  })

describe("engram embed --embedder local", { timeout: 240_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "local.db")

  it("embeds offline, and memory search finds by meaning what shares no word with the question", async () => {
    for (const content of ["Doug runs PostgreSQL 16 for the billing service", "The office moved to Lisbon in May"]) {
      expect((await engram("memory", "add", content, "--kind", "fact", "--db", db)).code).toBe(0)
    }
    const run = await engramLocal("embed", "--embedder", "local", "--db", db)
    expect(run.stderr).not.toContain("needs the package")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(
      "2 record(s) embedded with energetic-ai/universal-sentence-encoder-lite-en@0.2.0+chunks-4000x4 (512 dimensions)"
    )
    const question = "who looks after our database server?"
    const keywords = await engram("memory", "search", question, "--db", db, "--json")
    expect((JSON.parse(keywords.stdout) as { hits: ReadonlyArray<unknown> }).hits).toEqual([])
    const found = await engramLocal("memory", "search", question, "--db", db, "--embedder", "local", "--json")
    expect(found.code).toBe(0)
    const hits = (JSON.parse(found.stdout) as { hits: ReadonlyArray<{ record: { content: string } }> }).hits
    expect(hits[0]?.record.content).toBe("Doug runs PostgreSQL 16 for the billing service")
  })

  it("the demo runs with it: every memory it saves has a vector", async () => {
    const demoDb = Path.join(tmp.dir, "demo.db")
    const demo = await engramLocal("demo", "--db", demoDb, "--embedder", "local")
    expect(demo.code).toBe(0)
    const filled = await engramLocal("embed", "--embedder", "local", "--db", demoDb, "--json")
    const report = JSON.parse(filled.stdout) as { embedded: number; deliverable: number; covered: number }
    expect(report.embedded).toBe(0)
    expect(report.covered).toBe(report.deliverable)
    expect(report.deliverable).toBeGreaterThan(0)
  })

  it("takes no model name or other dimensions", async () => {
    expectRefused(
      await engram("memory", "search", "database", "--db", db, "--embedder", "local", "--embedder-dimensions", "128"),
      "--embedder local has one model at 512 dimensions"
    )
  })
})
