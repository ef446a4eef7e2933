/**
 * The SQLite telemetry store: `TelemetryStore` over `@effect/sql-sqlite-node`, holding the
 * injection log — one row per recorded projection, naming the memories and sections a turn
 * delivered.
 *
 * Rows are kept in append order (an autoincrementing id) and indexed by session; the memory ids
 * and section labels are JSON arrays, so the log can be read with plain SQL. Migrations run in
 * their own table, `engram_telemetry_migrations`, so the telemetry store shares a database with
 * the other stores without sharing their schema history. Reads decode row by row: a stored row
 * that fails to decode is skipped, logged and counted on the log's `skipped`.
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
 * // memories and telemetry in one database file
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
import { TelemetryStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/sqliteTelemetryStore.js"

/**
 * The table the injection log lives in.
 *
 * @since 0.1.0
 * @category constants
 */
export const INJECTIONS_TABLE: string = internal.INJECTIONS_TABLE

/**
 * The table the telemetry store's migrations are recorded in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIGRATIONS_TABLE: string = internal.MIGRATIONS_TABLE

/**
 * Migrates the telemetry tables and builds the store over the ambient SQL client.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  TelemetryStore.Service,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = internal.make

/**
 * The telemetry store over an SQL client provided elsewhere (normally the memory store's, so all
 * stores live in one database).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  TelemetryStore.TelemetryStore,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = Layer.effect(TelemetryStore.TelemetryStore, internal.make)
