/**
 * The vector capability of a memory store: one unit-length vector per record, the identity of the
 * embedder that made them, and a nearest-neighbour search whose filters are the same as keyword
 * search's, applied before the top k (decision 0052). Each backend implements it over its own
 * records — exact in memory, `sqlite-vec` on SQLite, an exact scan on PostgreSQL (decision 0053) —
 * and {@link withVectors} puts it behind the one `MemoryStore` contract: writes embed, relevance
 * searches fuse BM25 with vectors (decision 0054).
 *
 * A store layer builds its index and applies {@link withVectors} when it is asked to keep vectors
 * (its `WithVectors` layer, which requires `Embeddings`), and only then: otherwise the store is
 * exactly the lexical one.
 *
 * @since 0.1.0
 */
import * as Effect from "effect/Effect"
import type * as Option from "effect/Option"
import { type EmbedderIdentity, type EmbedderMismatch, type Service as EmbeddingsService } from "./Embeddings.js"
import * as HybridStore from "./internal/hybridStore.js"
import type { MemoryFilters } from "./MemoryQuery.js"
import type { MemoryId } from "./MemoryRecord.js"
import type { Service as MemoryStoreService } from "./MemoryStore.js"
import type { MemoryStoreFailure } from "./MemoryStoreError.js"

/**
 * How a backend finds nearest neighbours: `exact` compares the query with every admitted vector
 * (memory; PostgreSQL without pgvector); `sqlite-vec` does the same scan inside SQLite over vec0's
 * partitioned chunks, with the extension's distance (a plain scalar loop in the build npm ships);
 * `pgvector` with pgvector's distance operator on PostgreSQL servers that have the extension
 * installed in the database.
 *
 * @since 0.1.0
 * @category models
 */
export type Method = "exact" | "sqlite-vec" | "pgvector"

/**
 * A vector search match: the record's id and its cosine similarity to the query.
 *
 * @since 0.1.0
 * @category models
 */
export interface VectorMatch {
  readonly id: MemoryId
  readonly score: number
}

/**
 * How many deliverable records the store holds, and how many of them have a vector.
 *
 * @since 0.1.0
 * @category models
 */
export interface Coverage {
  readonly deliverable: number
  readonly embedded: number
}

/**
 * A backend's vector index.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly method: Method
  /** The identity of the embedder the stored vectors came from; none before the first claim. */
  readonly identity: Effect.Effect<Option.Option<EmbedderIdentity>, MemoryStoreFailure>
  /** Records `identity` as the store's embedder when it has none; fails when it has another. */
  readonly claim: (identity: EmbedderIdentity) => Effect.Effect<void, EmbedderMismatch | MemoryStoreFailure>
  /** Deletes every vector and makes `identity` the store's embedder (re-embedding starts here). */
  readonly reset: (identity: EmbedderIdentity) => Effect.Effect<void, MemoryStoreFailure>
  /**
   * Stores (or replaces) vectors by record id. Fails with `EmbedderMismatch` when `identity` is not
   * the store's, or a vector's length is not its dimensions. Ids of records not stored are ignored.
   */
  readonly upsert: (
    identity: EmbedderIdentity,
    entries: ReadonlyArray<{ readonly id: MemoryId; readonly vector: Float32Array }>
  ) => Effect.Effect<void, EmbedderMismatch | MemoryStoreFailure>
  /**
   * The `limit` records nearest to `vector` among those `filters` admit (the filters apply before
   * the top k), best first: higher similarity, then id ascending.
   */
  readonly search: (
    identity: EmbedderIdentity,
    vector: Float32Array,
    filters: MemoryFilters,
    limit: number
  ) => Effect.Effect<ReadonlyArray<VectorMatch>, EmbedderMismatch | MemoryStoreFailure>
  /** Up to `limit` deliverable records without a vector, oldest first: what `engram embed` fills. */
  readonly unembedded: (limit: number) => Effect.Effect<ReadonlyArray<MemoryId>, MemoryStoreFailure>
  /** How far the vectors cover the deliverable records. */
  readonly coverage: Effect.Effect<Coverage, MemoryStoreFailure>
}

/**
 * Puts a vector index and an embedder behind a store: every record a write, restore or supersede
 * creates is embedded in batches after it is stored (a failed embedding is logged and leaves the
 * vector missing, never fails or undoes the write); a relevance search embeds the query, searches
 * the vectors with the same filters and fuses both rankings with `SearchPlan.fuse` (a failed query
 * embedding falls back to the lexical ranking). `newest` searches stay lexical. Claims the store
 * for the embedder first: a store whose vectors came from another embedder fails with
 * `EmbedderMismatch`.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withVectors: (
  store: MemoryStoreService,
  index: Service,
  embeddings: EmbeddingsService
) => Effect.Effect<MemoryStoreService, EmbedderMismatch | MemoryStoreFailure> = HybridStore.withVectors

/**
 * Embeds the given records (in the embedder's batches) and stores their vectors: the backfill
 * step `engram embed` runs. Returns how many vectors it stored.
 *
 * @since 0.1.0
 * @category combinators
 */
export const embedRecords = HybridStore.embedRecords

/**
 * What every store layer does after building its store: given `embeddings` (the store was asked to
 * keep vectors), builds the backend's index (`makeIndex`) and returns the store {@link withVectors};
 * given none, returns the store itself, untouched (decision 0161 (c)).
 *
 * @since 0.1.0
 * @category combinators
 */
export const attach = <E, R>(
  store: MemoryStoreService,
  makeIndex: Effect.Effect<Service, E, R>,
  embeddings: EmbeddingsService | undefined
): Effect.Effect<MemoryStoreService, E | EmbedderMismatch | MemoryStoreFailure, R> =>
  embeddings === undefined
    ? Effect.succeed(store)
    : Effect.flatMap(makeIndex, (index) => withVectors(store, index, embeddings))
