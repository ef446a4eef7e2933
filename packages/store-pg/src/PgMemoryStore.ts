/**
 * The PostgreSQL `MemoryStore`: the same semantics as the in-memory reference store, kept in one
 * table with a GIN-indexed `tsvector` of the shared tokenizer's tokens.
 *
 * - Search matches whole tokens, OR-joined, exactly as every other backend: the tokens are stored
 *   as lexemes verbatim (`array_to_tsvector`) and queried as quoted, OR-joined `tsquery` operands;
 *   hits are ranked with `ts_rank`.
 * - Lifecycle operations lock the record's row for their transaction, so concurrent reviews and
 *   supersessions of one record take turns: the loser of a supersession race gets a
 *   `MemoryConflict`, and the final state is that of some serial order.
 * - A stored row that fails to decode is skipped, logged and counted (`skipped` on the result and
 *   the `engram_memory_rows_skipped` metric, tagged `backend=postgres`).
 * - Tables are created and upgraded by the Effect migrator (`engram_memory_migrations`).
 *
 * @since 0.1.0
 */
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import {
  type Embeddings,
  MemoryStore,
  type MemoryStoreError,
  type PromotionStore,
  type SearchTokenizer,
  type TelemetryStore
} from "@engram/core"
import { MemoryStoreLayers } from "@engram/store-sql"
import * as Layer from "effect/Layer"
import * as internal from "./internal/pgMemoryStore.js"
import * as PgDatabase from "./PgDatabase.js"

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
  | MigrationError
  | MemoryStoreError.MemoryStoreFailure
  | MemoryStoreError.InvalidStoreOptions
  | Embeddings.EmbedderMismatch
  | SearchTokenizer.LanguageMismatch

/**
 * What the store is built on: the `SqlClient`, and the promotion and telemetry stores its `forget`
 * reaches in the same transaction (`MemoryForget.Cascade`, decision 0164) — `SqliteEngram` and
 * `PgEngram` provide them on the same database.
 *
 * @since 0.1.0
 * @category models
 */
export type Requirements = SqlClient.SqlClient | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore

/**
 * The store's constructors, derived from its one `make` (`MemoryStoreLayers.fromMake`).
 *
 * @since 0.1.0
 * @category models
 */
export type Constructors = MemoryStoreLayers.Constructors<MakeError, Requirements>

const constructors: Constructors = MemoryStoreLayers.fromMake(internal.make)

/**
 * Builds the store over the ambient `SqlClient`, migrating its tables first, in
 * `options.language` and with `options.search` as its search defaults (`MemoryStore.StoreOptions`).
 * It searches by keyword: the store that keeps vectors is {@link makeWithVectors}.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Constructors["make"] = constructors.make

/**
 * {@link make} keeping a vector per record over the `Embeddings` service it requires (pgvector's
 * distance where the database has the extension, an exact scan in SQL where not) and searching
 * hybrid (`VectorIndex.withVectors`). A store whose vectors came from another embedder fails with
 * `EmbedderMismatch`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeWithVectors: Constructors["makeWithVectors"] = constructors.makeWithVectors

/**
 * The store on a PostgreSQL `SqlClient` you provide (e.g. {@link PgDatabase.layer}), with its
 * options ({@link make}).
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
 * The store for a connection that must not change the schema — a read replica, or a role
 * without DDL rights. It runs no migrations; it fails to build unless the tables are already at
 * this version, and writes nothing (not even a new store's language). Reads work as usual; on a
 * replica, writes and lifecycle operations fail with `MemoryStoreFailure` (the server refuses them).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutMigrations = (
  options?: MemoryStore.StoreOptions
): Layer.Layer<MemoryStore.MemoryStore, Exclude<MakeError, MigrationError>, Requirements> =>
  Layer.effect(MemoryStore.MemoryStore, internal.makeWithoutMigrations(options ?? {}))
