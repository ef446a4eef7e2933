/**
 * The SQLite promotion store: `PromotionStore` over `@effect/sql-sqlite-node`.
 *
 * One row per record and spec (the table's primary key), the placement stored as JSON beside its
 * address, and an index on `(scope, placement_key)` so the save gate's exact lookup costs the same
 * at a thousand rows and at a hundred thousand. Migrations run in their own table,
 * `engram_promotion_migrations`, so the promotion store shares a database with the memory store
 * without sharing its schema history. Reads decode row by row: a stored row that fails to decode
 * is skipped, logged, counted on the result's `skipped` and in `PromotionStore.rowsSkipped`.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import {
 *   SqliteDatabase,
 *   SqliteMemoryStore,
 *   SqlitePromotionStore,
 *   SqliteTelemetryStore
 * } from "@engram/store-sqlite"
 *
 * // both stores in one database file
 * // (the memory store takes the promotion and telemetry stores its forget reaches)
 * const StoresLive = SqliteMemoryStore.layer().pipe(
 *   Layer.provideMerge(Layer.mergeAll(SqlitePromotionStore.layer, SqliteTelemetryStore.layer)),
 *   Layer.provideMerge(SqliteDatabase.layer({ filename: "./data/engram.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { PromotionStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/sqlitePromotionStore.js"

/**
 * The table the rows live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const TABLE: string = internal.TABLE

/**
 * The table the promotion store's migrations are recorded in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIGRATIONS_TABLE: string = internal.MIGRATIONS_TABLE

/**
 * Migrates the promotion table and builds the store over the ambient SQL client.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  PromotionStore.Service,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = internal.make

/**
 * The promotion store over an SQL client provided elsewhere (normally the memory store's, so
 * both live in one database).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  PromotionStore.PromotionStore,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = Layer.effect(PromotionStore.PromotionStore, internal.make)
