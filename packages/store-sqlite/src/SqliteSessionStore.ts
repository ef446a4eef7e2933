/**
 * The SQLite session store: `SessionStore` over `@effect/sql-sqlite-node`.
 *
 * One row per stored message, numbered in append order within its session, holding the message's
 * encoded JSON beside its tag and time; at most one pending-interrupt row per session. An append
 * is one transaction, so a batch lands whole or not at all, and concurrent appends to one session
 * never interleave within a batch. Migrations run in their own table,
 * `engram_session_migrations`, so the session store shares a database with the memory and
 * promotion stores without sharing their schema history. Reads decode row by row: a stored
 * message that fails to decode is skipped, logged and counted on the history's `skipped`; a
 * stored interrupt that fails to decode reads as none. The extraction ledger is one row per
 * extraction run (`engram_session_extractions`), read the same way: a bad row is skipped.
 *
 * Projected context never reaches this store: `SessionStore` has no method that takes one.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import {
 *   SqliteDatabase,
 *   SqliteMemoryStore,
 *   SqlitePromotionStore,
 *   SqliteSessionStore,
 *   SqliteTelemetryStore
 * } from "@engram/store-sqlite"
 *
 * // memories and sessions in one database file
 * // (the memory store takes the promotion and telemetry stores its forget reaches)
 * const StoresLive = SqliteMemoryStore.layer().pipe(
 *   Layer.provideMerge(Layer.mergeAll(SqlitePromotionStore.layer, SqliteTelemetryStore.layer, SqliteSessionStore.layer)),
 *   Layer.provideMerge(SqliteDatabase.layer({ filename: "./data/engram.db" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type * as Migrator from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SessionStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as internal from "./internal/sqliteSessionStore.js"

/**
 * The table messages live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MESSAGES_TABLE: string = internal.MESSAGES_TABLE

/**
 * The table pending interrupts live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTS_TABLE: string = internal.INTERRUPTS_TABLE

/**
 * The table the extraction ledger lives in: one row per extraction run that called the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const EXTRACTIONS_TABLE: string = internal.EXTRACTIONS_TABLE

/**
 * The table extraction claims live in: at most one row per session, naming the extraction service
 * that runs it and until when, so two processes never extract the same session at once.
 *
 * @since 0.1.0
 * @category constants
 */
export const CLAIMS_TABLE: string = internal.CLAIMS_TABLE

/**
 * The table the session store's migrations are recorded in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIGRATIONS_TABLE: string = internal.MIGRATIONS_TABLE

/**
 * Migrates the session tables and builds the store over the ambient SQL client.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  SessionStore.Service,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = internal.make

/**
 * The session store over an SQL client provided elsewhere (normally the memory store's, so all
 * stores live in one database).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  SessionStore.SessionStore,
  SqlError | Migrator.MigrationError,
  SqlClient.SqlClient
> = Layer.effect(SessionStore.SessionStore, internal.make)
