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
 * One backend's store layers, each over the `SqlClient` in context.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreSet<E> {
  readonly memory: Layer.Layer<MemoryStore.MemoryStore, E, SqlClient.SqlClient>
  readonly promotions: Layer.Layer<PromotionStore.PromotionStore, E, SqlClient.SqlClient>
  readonly sessions: Layer.Layer<SessionStore.SessionStore, E, SqlClient.SqlClient>
  readonly telemetry: Layer.Layer<TelemetryStore.TelemetryStore, E, SqlClient.SqlClient>
  readonly transaction: Layer.Layer<StoreTransaction.StoreTransaction, never, SqlClient.SqlClient>
}

/**
 * The four stores and their transaction over the `SqlClient` in context. The memory store is
 * built first (it opens the database's own tables), then the others.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerStores = <E>(set: StoreSet<E>): Layer.Layer<Stores, E, SqlClient.SqlClient> =>
  Layer.mergeAll(set.promotions, set.transaction, set.sessions, set.telemetry).pipe(
    Layer.provideMerge(set.memory)
  )

/**
 * The one-database layer: {@link layerStores} over `client`, the `ContextProjection` with its
 * default settings and the preset routing specs; the client's own services stay in the output
 * (for tools that read the same database).
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E, C, EC>(
  stores: Layer.Layer<Stores, E, SqlClient.SqlClient>,
  client: Layer.Layer<C | SqlClient.SqlClient, EC>
): Layer.Layer<
  Stores | ContextProjection.ContextProjection | RoutingSpecs.RoutingSpecs | C | SqlClient.SqlClient,
  E | EC
> =>
  Layer.mergeAll(ContextProjection.layer, RoutingSpecs.layerPresets).pipe(
    Layer.provideMerge(stores),
    Layer.provideMerge(client)
  )
