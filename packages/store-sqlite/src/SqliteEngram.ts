/**
 * Everything an Engram agent needs on one SQLite file, in one layer: the memory, promotion,
 * session and telemetry stores sharing one connection, the `ContextProjection` over them, and the
 * preset routing specs (`RoutingSpecs.layerPresets`). Add a `LanguageModel` and an agent runs.
 *
 * @example
 * ```ts
 * import { SqliteEngram } from "@engram/store-sqlite"
 *
 * const EngramLive = SqliteEngram.layer({ filename: "./.engram/engram.db" })
 * ```
 *
 * @since 0.1.0
 */
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type { Embeddings, MemoryStore } from "@engram/core"
import { SqlEngram, SqlTransaction } from "@engram/store-sql"
import type * as Layer from "effect/Layer"
import { causeOf } from "./internal/sqliteErrors.js"
import * as SqliteDatabase from "./SqliteDatabase.js"
import * as SqliteMemoryStore from "./SqliteMemoryStore.js"
import * as SqlitePromotionStore from "./SqlitePromotionStore.js"
import * as SqliteSessionStore from "./SqliteSessionStore.js"
import * as SqliteTelemetryStore from "./SqliteTelemetryStore.js"

/**
 * The four stores on one database, and the one transaction they share (`StoreTransaction`).
 *
 * @since 0.1.0
 * @category models
 */
export type Stores = SqlEngram.Stores

/**
 * What {@link layer} provides: the stores, the projection, the preset specs and the SQL client
 * under them (for tools that read the same database).
 *
 * @since 0.1.0
 * @category models
 */
export type Services = SqlEngram.Services<SqliteClient.SqliteClient>

/**
 * What {@link layer} opens: the file (`SqliteDatabase.ClientOptions`) and the memory store's own
 * options, its language and search defaults (`MemoryStore.StoreOptions`).
 *
 * @since 0.1.0
 * @category models
 */
export interface Options extends SqliteDatabase.ClientOptions, MemoryStore.StoreOptions {}

const stores = SqlEngram.layers(SqliteMemoryStore, {
  promotions: SqlitePromotionStore.layer,
  sessions: SqliteSessionStore.layer,
  telemetry: SqliteTelemetryStore.layer,
  transaction: SqlTransaction.layer((error) => causeOf(error, error.message))
})

/**
 * The four stores over the SQL client in context (each migrates its own tables), the memory
 * store with its `options` (`SqliteMemoryStore.layer`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStores = stores.layerStores

/**
 * {@link layerStores} with a memory store that keeps vectors over the `Embeddings` service it
 * requires (`SqliteMemoryStore.layerWithVectors`).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStoresWithVectors = stores.layerStoresWithVectors

/**
 * The four stores on the SQLite file `options.filename` (default `./.engram/engram.db`, created
 * with its directory when missing; `:memory:` for tests), the memory store in `options.language`
 * with `options.search` as its search defaults, the `ContextProjection` with its default settings
 * and the preset routing specs.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: Options
): Layer.Layer<Services, SqliteDatabase.SqliteOpenError | SqliteMemoryStore.MakeError> =>
  SqlEngram.layer(layerStores(options), SqliteDatabase.layer(options))

/**
 * {@link layer} with a memory store that keeps vectors (sqlite-vec) and searches hybrid over the
 * `Embeddings` service it requires ({@link layerStoresWithVectors}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWithVectors = (
  options?: Options
): Layer.Layer<Services, SqliteDatabase.SqliteOpenError | SqliteMemoryStore.MakeError, Embeddings.Embeddings> =>
  SqlEngram.layer(layerStoresWithVectors(options), SqliteDatabase.layer(options))
