/**
 * The PostgreSQL `TelemetryStore`: the injection log in `engram_injection_log`, one row per
 * appended row in append order, with the delivered memory ids and section labels as JSONB arrays
 * a person can query. Migrations are recorded in `engram_telemetry_migrations`. A stored row that
 * fails to decode is skipped, logged and counted.
 *
 * @since 0.1.0
 */
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { TelemetryStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrations from "./internal/migrations.js"
import * as internal from "./internal/pgTelemetryStore.js"

/**
 * The table the injection log lives in.
 *
 * @since 0.1.0
 * @category constants
 */
export const INJECTIONS_TABLE: string = Migrations.injectionsTable

/**
 * The table the telemetry store's migrations are recorded in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIGRATIONS_TABLE: string = Migrations.telemetryMigrationsTable

/**
 * Migrates the telemetry tables and builds the store over the ambient `SqlClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  TelemetryStore.Service,
  SqlError | MigrationError,
  SqlClient.SqlClient
> = internal.make

/**
 * The telemetry store on a PostgreSQL `SqlClient` you provide (normally the memory store's).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<TelemetryStore.TelemetryStore, SqlError | MigrationError, SqlClient.SqlClient> = Layer
  .effect(TelemetryStore.TelemetryStore, internal.make)

/**
 * The telemetry store for a connection that must not change the schema (a read replica, a role
 * without DDL rights): no migrations, and it fails to build unless the tables are already current.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutMigrations: Layer.Layer<TelemetryStore.TelemetryStore, SqlError, SqlClient.SqlClient> = Layer
  .effect(TelemetryStore.TelemetryStore, internal.makeWithoutMigrations)
