/**
 * The SQLite memory store: `MemoryStore` over `@effect/sql-sqlite-node`, with FTS5 search over
 * the shared tokenizer's tokens.
 *
 * It agrees with the in-memory reference store on every behaviour the conformance kit pins:
 * creation and lifecycle rules come from `@engram/core`, filters are the SQL form of
 * `MemoryQuery.matchesFilters`, and search matches whole tokens of `SearchTokenizer.tokenize`
 * (FTS5 only stores and ranks them; scores are `-bm25`). Reads decode row by row: a stored row that
 * fails to decode is skipped, logged, counted on the result's `skipped` and in
 * `MemoryStore.rowsSkipped`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { SqliteDatabase, SqliteMemoryStore } from "@engram/store-sqlite"
 *
 * // the store over a database of its own (the default file ./.engram/engram.db, or ":memory:" in tests),
 * // indexing in German, with a search default of its own (a search's options still override it)
 * const StoreLive = SqliteMemoryStore.layer({ language: "german", search: { ranking: { neighbourWindow: 2 } } }).pipe(
 *   Layer.provideMerge(SqliteDatabase.layer({ filename: "./data/engram.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type { Embeddings, MemoryStoreError, PromotionStore, SearchTokenizer, TelemetryStore } from "@engram/core"
import { MemoryStoreLayers } from "@engram/store-sql"
import type * as Effect from "effect/Effect"
import * as Integrity from "./internal/integrity.js"
import * as Reindex from "./internal/reindex.js"
import * as internal from "./internal/sqliteMemoryStore.js"

/**
 * Why building the store can fail: the database, its migrations, a language other than the one
 * its index was built in (`LanguageMismatch`, naming both), search defaults out of range
 * (`InvalidStoreOptions`), and — for a store that keeps vectors — the vector index
 * (`MemoryStoreFailure`) or an embedder other than the one the stored vectors came from
 * (`EmbedderMismatch`: run `engram embed --reembed`).
 *
 * @since 0.1.0
 * @category errors
 */
export type MakeError =
  | SqlError
  | Migrator.MigrationError
  | MemoryStoreError.MemoryStoreFailure
  | MemoryStoreError.InvalidStoreOptions
  | Embeddings.EmbedderMismatch
  | SearchTokenizer.LanguageMismatch

/**
 * What the store is built on: the `SqlClient` (the `SqliteClient` under it, which sqlite-vec is
 * loaded into), and the promotion and telemetry stores its `forget`
 * reaches in the same transaction (`MemoryForget.Cascade`, decision 0164) — `SqliteEngram` and
 * `PgEngram` provide them on the same database.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements =
  | SqlClient.SqlClient
  | SqliteClient.SqliteClient
  | PromotionStore.PromotionStore
  | TelemetryStore.TelemetryStore

/**
 * The store's constructors, derived from its one `make` (`MemoryStoreLayers.fromMake`).
 *
 * @since 0.1.0
 * @category models
 */
export type Constructors = MemoryStoreLayers.Constructors<MakeError, Requirements>

const constructors: Constructors = MemoryStoreLayers.fromMake(internal.make)

/**
 * Migrates the memory tables (in the `engram_memory_migrations` table) and builds the store over
 * the ambient SQL client, in `options.language` and with `options.search` as its search defaults
 * (`MemoryStore.StoreOptions`). It searches by keyword: the store that keeps vectors is
 * {@link makeWithVectors}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Constructors["make"] = constructors.make

/**
 * {@link make} keeping a vector per record (sqlite-vec) over the `Embeddings` service it requires
 * and searching hybrid (`VectorIndex.withVectors`). A store whose vectors came from another
 * embedder fails with `EmbedderMismatch`; a read-only file without a vector index searches by
 * keyword (and logs why).
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWithVectors: Constructors["makeWithVectors"] = constructors.makeWithVectors

/**
 * The memory store over an SQL client provided elsewhere (so several stores can share one
 * database and one connection), with its options ({@link make}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Constructors["layer"] = constructors.layer

/**
 * {@link layer} keeping vectors over the `Embeddings` service it requires ({@link makeWithVectors}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithVectors: Constructors["layerWithVectors"] = constructors.layerWithVectors

/**
 * What is wrong with the memory search index: FTS5's own structure check, and records the index
 * does not cover (or index rows without a record). Empty when sound. For `engram doctor`.
 *
 * @since 0.1.0
 * @category integrity
 */
export const checkSearchIndex: Effect.Effect<ReadonlyArray<string>, SqlError, SqlClient.SqlClient> =
  Integrity.checkSearchIndex

/**
 * Rebuilds the memory search index from the records in one transaction (the index is derived
 * data: nothing else is lost), in the language the store records. Returns how many records it
 * indexed. For `engram doctor --repair`.
 *
 * @since 0.1.0
 * @category integrity
 */
export const rebuildSearchIndex: Effect.Effect<
  number,
  SqlError | SearchTokenizer.LanguageMismatch,
  SqlClient.SqlClient
> = Reindex.rebuildSearchIndex
