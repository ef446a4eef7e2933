/**
 * The PostgreSQL `SessionStore`: one row per message in `engram_session_messages`, numbered from 0
 * per session in append order and kept in its encoded JSON form beside its tag and time; at most
 * one pending interrupt per session in `engram_session_interrupts`. Appends to one session take
 * turns (a transaction-scoped advisory lock), so concurrent batches never interleave. Migrations
 * are recorded in `engram_session_migrations`. A stored message that fails to decode is skipped,
 * logged and counted; a stored interrupt that fails to decode reads as none. The extraction ledger
 * is one row per extraction run in `engram_session_extractions`, read the same way.
 *
 * @since 0.1.0
 */
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { SessionStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrations from "./internal/migrations.js"
import * as internal from "./internal/pgSessionStore.js"

/**
 * The table messages live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MESSAGES_TABLE: string = Migrations.messagesTable

/**
 * The table pending interrupts live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const INTERRUPTS_TABLE: string = Migrations.interruptsTable

/**
 * The table the extraction ledger lives in: one row per extraction run that called the model.
 *
 * @since 0.1.0
 * @category constants
 */
export const EXTRACTIONS_TABLE: string = Migrations.extractionsTable

/**
 * The table extraction claims live in: at most one row per session, naming the extraction service
 * that runs it and until when, so two processes never extract the same session at once.
 *
 * @since 0.1.0
 * @category constants
 */
export const CLAIMS_TABLE: string = Migrations.claimsTable

/**
 * The table the session store's migrations are recorded in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIGRATIONS_TABLE: string = Migrations.sessionMigrationsTable

/**
 * Migrates the session tables and builds the store over the ambient `SqlClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  SessionStore.Service,
  SqlError | MigrationError,
  SqlClient.SqlClient
> = internal.make

/**
 * The session store on a PostgreSQL `SqlClient` you provide (normally the memory store's).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<SessionStore.SessionStore, SqlError | MigrationError, SqlClient.SqlClient> = Layer
  .effect(SessionStore.SessionStore, internal.make)

/**
 * The session store for a connection that must not change the schema (a read replica, a role
 * without DDL rights): no migrations, and it fails to build unless the tables are already current.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutMigrations: Layer.Layer<SessionStore.SessionStore, SqlError, SqlClient.SqlClient> = Layer
  .effect(SessionStore.SessionStore, internal.makeWithoutMigrations)
