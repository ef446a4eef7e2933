/**
 * The PostgreSQL vector index (`VectorIndex`, decision 0053): pgvector's distance where the
 * database has the extension installed, an exact scan in SQL where it does not. For the tools
 * that manage vectors themselves — `engram embed` backfills and re-embeds through it. A store
 * that keeps vectors (`PgMemoryStore.layerWithVectors()`) builds it on its own.
 *
 * @since 0.1.0
 */
import type * as SqlClient from "@effect/sql/SqlClient"
import type { MemoryStoreError, VectorIndex } from "@engram/core"
import type * as Effect from "effect/Effect"
import * as internal from "./internal/pgVectorIndex.js"

/**
 * Migrates the vector tables in the client's schema and opens the index.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<VectorIndex.Service, MemoryStoreError.MemoryStoreFailure, SqlClient.SqlClient> =
  internal.make
