/**
 * The store options kit (decisions 0165, 0196): a persistent memory store opened with
 * `MemoryStore.StoreOptions` must use its `search` defaults for what a search leaves out (a
 * search still overriding them), keep the language its index was built in, open without a
 * language in the one it records, refuse another with a typed `SearchTokenizer.LanguageMismatch`
 * naming both, and adopt the language it is opened in when it records none (a store an older
 * version built).
 *
 * Every test builds `storage` afresh and opens the store over it several times, so `open` must
 * build the store over the storage in context (not a storage of its own).
 *
 * @example
 * ```ts
 * import { runStoreOptionsConformance } from "@engram/conformance"
 * import * as SqlClient from "@effect/sql/SqlClient"
 * import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
 * import * as Effect from "effect/Effect"
 *
 * runStoreOptionsConformance("sqlite", {
 *   storage: SqliteDatabase.layer({ filename: ":memory:" }),
 *   open: SqliteEngram.layerStores,
 *   forgetLanguage: (tokenizer) =>
 *     Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE engram_memory_meta SET value = ${tokenizer} ...`)
 * })
 * ```
 *
 * @since 0.1.0
 */
import { describe, expect, it } from "@effect/vitest"
import { type MemoryRecord, MemoryStore, MemoryStoreError, type SearchPlan, SearchTokenizer } from "@engram/core"
import * as Effect from "effect/Effect"
import type * as Layer from "effect/Layer"

/**
 * What {@link runStoreOptionsConformance} needs of a backend.
 *
 * @since 0.1.0
 * @category models
 */
export interface Backend<R, E1, E2> {
  /** Fresh, empty storage (a database), built once per test. */
  readonly storage: Layer.Layer<R, E1>
  /** The memory store over the storage in context, opened with `options`. */
  readonly open: (options?: MemoryStore.StoreOptions) => Layer.Layer<MemoryStore.MemoryStore, E2, R>
  /**
   * Makes the stored index look as an older version left it: no language recorded, and
   * `tokenizer` as the recorded tokenizer fingerprint.
   */
  readonly forgetLanguage: (tokenizer: string) => Effect.Effect<unknown, unknown, R>
}

// Records of different lengths: every ranking field changes their scores.
const records: ReadonlyArray<MemoryRecord.MemoryWriteInput> = [
  { id: "short", content: "The ferry leaves at noon", kind: "fact" },
  { id: "long", content: "The ferry to the island leaves from the north pier, past the harbour office", kind: "fact" },
  { id: "other", content: "Lunch is at the canteen on the second floor", kind: "fact" }
]
const tuned: SearchPlan.SearchTuning = { ranking: { k1: 2, b: 0 } }
const defaults = { ranking: { k1: 0.8, b: 0.75 } }

const scores = (result: MemoryStore.SearchResult) => result.hits.map((hit) => [hit.record.id, hit.score] as const)

/**
 * Registers the store options suite for one persistent backend. Call it at the top level of a
 * vitest file.
 *
 * @since 0.1.0
 * @category conformance
 */
export const runStoreOptionsConformance = <R, E1, E2>(name: string, backend: Backend<R, E1, E2>): void => {
  const opened = <A, E>(
    options: MemoryStore.StoreOptions | undefined,
    use: (store: MemoryStore.Service) => Effect.Effect<A, E>
  ) => Effect.provide(Effect.flatMap(MemoryStore.MemoryStore, use), backend.open(options))
  const openExit = (options: MemoryStore.StoreOptions | undefined) => Effect.exit(opened(options, () => Effect.void))
  const mismatchOf = (options: MemoryStore.StoreOptions | undefined) =>
    Effect.flip(opened(options, () => Effect.void)).pipe(
      Effect.map((error) => (error instanceof SearchTokenizer.LanguageMismatch ? error : undefined))
    )
  const test = (title: string, body: () => Effect.Effect<void, unknown, R>) =>
    it.effect(title, () => Effect.provide(body(), backend.storage), 20_000)

  describe(`MemoryStore options: ${name}`, () => {
    test("a store's search defaults rank every search that leaves them out; a search's own options win", () =>
      Effect.gen(function*() {
        yield* opened(undefined, (store) => store.write(records))
        const plain = yield* opened(undefined, (store) => store.search("ferry leaves"))
        const asked = yield* opened(undefined, (store) => store.search("ferry leaves", tuned))
        const byDefault = yield* opened({ search: tuned }, (store) => store.search("ferry leaves"))
        const overridden = yield* opened({ search: tuned }, (store) => store.search("ferry leaves", defaults))
        expect(scores(asked)).not.toEqual(scores(plain))
        expect(scores(byDefault)).toEqual(scores(asked))
        expect(scores(overridden)).toEqual(scores(plain))
      }))

    test("search defaults out of range fail the store's build, naming the field", () =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(opened({ search: { ranking: { k1: 50 } } }, () => Effect.void))
        expect(error).toBeInstanceOf(MemoryStoreError.InvalidStoreOptions)
        expect(String((error as Error).message)).toContain("k1")
      }))

    test("a store keeps its language: opened without one it stems in it; opened in another it fails, naming both", () =>
      Effect.gen(function*() {
        yield* opened(
          { language: "german" },
          (store) => store.write([{ id: "houses", content: "Die Häuser stehen am Fluss", kind: "fact" }])
        )
        // German stems "Häuser" and "Haus" alike; English would not.
        const found = yield* opened(undefined, (store) => store.search("Haus"))
        expect(found.hits.map((hit) => hit.record.id)).toEqual(["houses"])
        const mismatch = yield* mismatchOf({ language: "english" })
        expect(mismatch?.stored).toBe("german")
        expect(mismatch?.given).toBe("english")
        expect(mismatch?.message).toContain("german")
        expect(mismatch?.message).toContain("english")
        expect((yield* openExit({ language: "german" }))._tag).toBe("Success")
      }))

    test("a new store opened without a language is English, and says so when opened in another", () =>
      Effect.gen(function*() {
        yield* opened(undefined, (store) => store.write(records))
        const mismatch = yield* mismatchOf({ language: "german" })
        expect({ stored: mismatch?.stored, given: mismatch?.given }).toEqual({ stored: "english", given: "german" })
      }))

    test("an index an older version built, with no language recorded, adopts the language it is opened in", () =>
      Effect.gen(function*() {
        yield* opened(undefined, (store) => store.write([{ id: "houses", content: "Die Häuser", kind: "fact" }]))
        yield* backend.forgetLanguage("an older tokenizer")
        const found = yield* opened({ language: "german" }, (store) => store.search("Haus"))
        expect(found.hits.map((hit) => hit.record.id)).toEqual(["houses"])
        expect((yield* mismatchOf({ language: "english" }))?.stored).toBe("german")
      }))

    test("an index this version built, with no language recorded, keeps the language its fingerprint names", () =>
      Effect.gen(function*() {
        yield* opened({ language: "german" }, (store) => store.write(records))
        yield* backend.forgetLanguage(SearchTokenizer.fingerprintOf("german"))
        expect((yield* mismatchOf({ language: "english" }))?.stored).toBe("german")
        expect((yield* openExit(undefined))._tag).toBe("Success")
      }))
  })
}
