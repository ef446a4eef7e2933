/**
 * One transaction around several store operations: a surface that writes a record and its
 * promotion rows (the server's create and batch routes) runs them as one unit, so a request
 * costs one `BEGIN`/`COMMIT` and either all of it is stored or none.
 *
 * The SQL layers provide it over their one client (every store of `SqliteEngram` or `PgEngram`
 * shares it; the stores' own transactions nest inside as savepoints). {@link layerNone} runs the
 * operations as they are, each store operation atomic on its own — what the in-memory stores
 * need.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { MemoryStoreFailure } from "./MemoryStoreError.js"

/**
 * The service: `run(effect)` runs `effect` in one transaction, committed when it succeeds and
 * rolled back when it fails; a failure to begin or commit is a `MemoryStoreFailure` (of class
 * `StorageFull` when the store ran out of room).
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly run: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | MemoryStoreFailure, R>
}

/**
 * The store transaction tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class StoreTransaction extends Context.Tag("@engram/StoreTransaction")<StoreTransaction, Service>() {}

/**
 * No shared transaction: each store operation is atomic on its own (the in-memory stores).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerNone: Layer.Layer<StoreTransaction> = Layer.succeed(StoreTransaction, { run: (effect) => effect })
