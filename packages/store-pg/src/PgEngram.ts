/**
 * Everything an Engram agent needs on one PostgreSQL database, in one layer: the memory,
 * promotion, session and telemetry stores sharing one connection pool, the `ContextProjection`
 * over them, and the preset routing specs (`RoutingSpecs.layerPresets`). Add a `LanguageModel`
 * and an agent runs.
 *
 * @example
 * ```ts
 * import { PgEngram } from "@engram/store-pg"
 *
 * const EngramLive = PgEngram.layer({ url: "postgres://app@db:5432/engram", schema: "agents" })
 * // or from ENGRAM_PG_URL (and ENGRAM_PG_SCHEMA, ENGRAM_PG_POOL_SIZE):
 * const FromEnv = PgEngram.layerConfig
 * ```
 *
 * @since 0.1.0
 */
import type * as PgClient from "@effect/sql-pg/PgClient"
import type { Embeddings, MemoryStore } from "@engram/core"
import { SqlEngram, SqlTransaction } from "@engram/store-sql"
import type * as ConfigError from "effect/ConfigError"
import type * as Layer from "effect/Layer"
import * as PgDatabase from "./PgDatabase.js"
import * as PgError from "./PgError.js"
import * as PgMemoryStore from "./PgMemoryStore.js"
import * as PgPromotionStore from "./PgPromotionStore.js"
import * as PgSessionStore from "./PgSessionStore.js"
import * as PgTelemetryStore from "./PgTelemetryStore.js"

/**
 * The four stores on one database, and the one transaction they share (`StoreTransaction`).
 *
 * @since 0.1.0
 * @category models
 */
export type Stores = SqlEngram.Stores

/**
 * What {@link layer} provides: the stores, the projection, the preset specs and the SQL client
 * under them.
 *
 * @since 0.1.0
 * @category models
 */
export type Services = SqlEngram.Services<PgClient.PgClient>

/**
 * What {@link layer} opens: the database (`PgDatabase.ConnectionOptions`) and the memory store's
 * own options, its language and search defaults (`MemoryStore.StoreOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends PgDatabase.ConnectionOptions, MemoryStore.StoreOptions {}

const stores = SqlEngram.layers(PgMemoryStore, {
  promotions: PgPromotionStore.layer,
  sessions: PgSessionStore.layer,
  telemetry: PgTelemetryStore.layer,
  transaction: SqlTransaction.layer(PgError.reasonOf)
})

/**
 * The four stores over the SQL client in context (each migrates its own tables), the memory
 * store with its `options` (`PgMemoryStore.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStores = stores.layerStores

/**
 * {@link layerStores} with a memory store that keeps vectors over the `Embeddings` service it
 * requires (`PgMemoryStore.layerWithVectors`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStoresWithVectors = stores.layerStoresWithVectors

/**
 * The four stores in the database of `options.url` (in `options.schema` when given), the memory
 * store in `options.language` with `options.search` as its search defaults, the
 * `ContextProjection` with its default settings and the preset routing specs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<Services, PgMemoryStore.MakeError> =>
  SqlEngram.layer(layerStores(options), PgDatabase.layer(options))

/**
 * {@link layer} with a memory store that keeps vectors and searches hybrid over the `Embeddings`
 * service it requires ({@link layerStoresWithVectors}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithVectors = (
  options: Options
): Layer.Layer<Services, PgMemoryStore.MakeError, Embeddings.Embeddings> =>
  SqlEngram.layer(layerStoresWithVectors(options), PgDatabase.layer(options))

/**
 * {@link layer} configured from the environment: `ENGRAM_PG_URL` (required), `ENGRAM_PG_SCHEMA`,
 * `ENGRAM_PG_POOL_SIZE`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<Services, PgMemoryStore.MakeError | ConfigError.ConfigError> = SqlEngram.layer(
  layerStores(),
  PgDatabase.layerConfig
)
