/**
 * The SQLite vector index (`VectorIndex` over sqlite-vec, decision 0053), for the tools that
 * manage vectors themselves — `engram embed` backfills and re-embeds through it. A store that
 * keeps vectors (`SqliteMemoryStore.layerWithVectors()`) builds it on its own.
 *
 * @since 0.1.0
 */
import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { MemoryStoreError, VectorIndex } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/sqliteVectorIndex.js"

/**
 * Loads sqlite-vec into the connection (it needs the `SqliteClient` in context, which every
 * `SqliteDatabase` layer provides), migrates the vector tables and opens the index.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  VectorIndex.Service,
  MemoryStoreError.MemoryStoreFailure,
  SqlClient.SqlClient | SqliteClient.SqliteClient
> = internal.make
