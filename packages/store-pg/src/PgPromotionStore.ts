/**
 * The PostgreSQL `PromotionStore`: promotion rows in `engram_promotions`, one per record and spec
 * (the primary key, so "committed once" holds across every connection), the placement kept as its
 * JSON text beside its address, and `(scope, placement_key)` indexed for the save gate's exact
 * lookup. Migrations are recorded in `engram_promotion_migrations`, so the promotion store shares
 * a schema with the memory store without sharing its history. A stored row that fails to decode
 * is skipped, logged and counted (`skipped`, and `engram_promotion_rows_skipped` tagged
 * `backend=postgres`).
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { PgDatabase, PgMemoryStore, PgPromotionStore, PgTelemetryStore } from "@engram/store-pg"
 *
 * // both stores on one pool, in one schema
 * // (the memory store takes the promotion and telemetry stores its forget reaches)
 * const StoresLive = PgMemoryStore.layer().pipe(
 *   Layer.provideMerge(Layer.merge(PgPromotionStore.layer, PgTelemetryStore.layer)),
 *   Layer.provide(PgDatabase.layer({ url: "postgres://engram@db:5432/app", schema: "engram" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import type { MigrationError } from "@effect/sql/Migrator"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { PromotionStore } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Migrations from "./internal/migrations.js"
import * as internal from "./internal/pgPromotionStore.js"

/**
 * The table the rows live in.
 *
 * @since 0.1.0
 * @category constants
 */
export const TABLE: string = Migrations.promotionTable

/**
 * The table the promotion store's migrations are recorded in.
 *
 * @since 0.1.0
 * @category constants
 */
export const MIGRATIONS_TABLE: string = Migrations.promotionMigrationsTable

/**
 * Migrates the promotion table and builds the store over the ambient `SqlClient`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  PromotionStore.Service,
  SqlError | MigrationError,
  SqlClient.SqlClient
> = internal.make

/**
 * The promotion store on a PostgreSQL `SqlClient` you provide (normally the memory store's).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<PromotionStore.PromotionStore, SqlError | MigrationError, SqlClient.SqlClient> = Layer
  .effect(PromotionStore.PromotionStore, internal.make)

/**
 * The promotion store for a connection that must not change the schema (a read replica, a role
 * without DDL rights): no migrations, and it fails to build unless the table is already current.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithoutMigrations: Layer.Layer<PromotionStore.PromotionStore, SqlError, SqlClient.SqlClient> = Layer
  .effect(PromotionStore.PromotionStore, internal.makeWithoutMigrations)
