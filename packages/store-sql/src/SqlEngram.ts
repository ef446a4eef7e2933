/**
 * The shape of a one-database Engram layer, the same for every SQL backend: the four stores and
 * their shared transaction over one SQL client, the `ContextProjection` over them and the preset
 * routing specs (`RoutingSpecs.layerPresets`). `SqliteEngram` and `PgEngram` are this shape over
 * their own stores and client.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import {
  ContextProjection,
  type Embeddings,
  type MemoryStore,
  type PromotionStore,
  RoutingSpecs,
  type SessionStore,
  type StoreTransaction,
  type TelemetryStore
} from "@engram/core"
import * as Layer from "effect/Layer"

/**
 * The four stores on one database, and the one transaction they share (`StoreTransaction`).
 *
 * @since 0.1.0
 * @category models
 */
export type Stores =
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore
  | StoreTransaction.StoreTransaction

/**
 * What {@link layer} provides over a client that provides `C`: the stores, the projection, the
 * preset specs and the SQL client under them (with the driver's own services, `C`).
 *
 * @since 0.1.0
 * @category models
 */
export type Services<C = never> =
  | Stores
  | ContextProjection.ContextProjection
  | RoutingSpecs.RoutingSpecs
  | SqlClient.SqlClient
  | C

/**
 * One backend's store layers, each over the `SqlClient` in context (`R`: the client and what the
 * backend's driver adds to it, e.g. the `SqliteClient`).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreSet<E, R extends SqlClient.SqlClient = SqlClient.SqlClient, RM = never> {
  /**
   * The memory store takes the promotion and telemetry stores its `forget` reaches (decision 0164),
   * and `RM`: what else it requires (`Embeddings` for a store that keeps vectors).
   */
  readonly memory: Layer.Layer<
    MemoryStore.MemoryStore,
    E,
    R | RM | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore
  >
  readonly promotions: Layer.Layer<PromotionStore.PromotionStore, E, R>
  readonly sessions: Layer.Layer<SessionStore.SessionStore, E, R>
  readonly telemetry: Layer.Layer<TelemetryStore.TelemetryStore, E, R>
  readonly transaction: Layer.Layer<StoreTransaction.StoreTransaction, never, R>
}

/**
 * The four stores and their transaction over the `SqlClient` in context. The memory store is
 * built last, over the promotion and telemetry stores of the same database, so its `forget`
 * removes their rows in its own transaction.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStores = <E, R extends SqlClient.SqlClient, RM = never>(
  set: StoreSet<E, R, RM>
): Layer.Layer<Stores, E, R | RM> =>
  set.memory.pipe(Layer.provideMerge(Layer.mergeAll(set.promotions, set.transaction, set.sessions, set.telemetry)))

/**
 * The one-database layer: {@link layerStores} over `client`, the `ContextProjection` with its
 * default settings and the preset routing specs; the client's own services stay in the output
 * (for tools that read the same database). What the stores require beyond the client (`Embeddings`
 * for a memory store that keeps vectors) stays required.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, C, EC, RS>(
  stores: Layer.Layer<Stores, E, RS>,
  client: Layer.Layer<C | SqlClient.SqlClient, EC>
): Layer.Layer<Services<C>, E | EC, Exclude<RS, C | SqlClient.SqlClient>> =>
  Layer.mergeAll(ContextProjection.layer, RoutingSpecs.layerPresets).pipe(
    Layer.provideMerge(stores),
    Layer.provideMerge(client)
  )

/**
 * A memory store's two layers, each taking the store's options: what a store module exports
 * (`SqliteMemoryStore`, `PgMemoryStore`; see `MemoryStoreLayers`).
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryLayers<E, R extends SqlClient.SqlClient> {
  readonly layer: (options?: MemoryStore.StoreOptions) => StoreSet<E, R>["memory"]
  readonly layerWithVectors: (
    options?: MemoryStore.StoreOptions
  ) => StoreSet<E, R, Embeddings.Embeddings>["memory"]
}

/**
 * A backend's stores with and without vectors, each with the memory store's options — what
 * `SqliteEngram.layerStores` / `layerStoresWithVectors` and their `PgEngram` twins are: `memory`
 * is the backend's memory store module, `others` its other stores and transaction.
 *
 * @since 0.1.0
 * @category layers
 */
export const layers = <E, R extends SqlClient.SqlClient>(
  memory: MemoryLayers<E, R>,
  others: Omit<StoreSet<E, R>, "memory">
): {
  readonly layerStores: (options?: MemoryStore.StoreOptions) => Layer.Layer<Stores, E, R>
  readonly layerStoresWithVectors: (
    options?: MemoryStore.StoreOptions
  ) => Layer.Layer<Stores, E, R | Embeddings.Embeddings>
} => ({
  layerStores: (options) => layerStores({ ...others, memory: memory.layer(options) }),
  layerStoresWithVectors: (options) => layerStores({ ...others, memory: memory.layerWithVectors(options) })
})
