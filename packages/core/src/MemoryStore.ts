/**
 * The `MemoryStore` service: create-only writes, lifecycle operations, query-less listing and
 * keyword search over {@link MemoryRecord}s. Every backend implements this one interface and
 * proves it with `@engram/conformance`.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as Schema from "effect/Schema"
import { Embeddings, type Service as EmbeddingsService } from "./Embeddings.js"
import * as HybridStore from "./internal/hybridStore.js"
import * as InMemoryStore from "./internal/inMemoryStore.js"
import * as MemoryContract from "./internal/memoryContract.js"
import * as Pages from "./internal/searchPages.js"
import * as MemoryForget from "./MemoryForget.js"
import type { Cascade, ForgetResult, ForgetTarget, Tombstone, TombstoneQuery } from "./MemoryForget.js"
import type { ListQuery, NeighbourQuery, Place, SearchOptions } from "./MemoryQuery.js"
import type { MemoryId, MemoryRecord, MemoryWriteInput, ReviewState, Scope } from "./MemoryRecord.js"
import type {
  DuplicateMemoryId,
  InvalidCursor,
  InvalidMemoryInput,
  InvalidMemoryQuery,
  InvalidReviewState,
  MemoryConflict,
  MemoryNotFound,
  MemoryStoreFailure
} from "./MemoryStoreError.js"
import { InvalidStoreOptions } from "./MemoryStoreError.js"
import { describeParseError } from "./MemoryWrite.js"
import type { PromotionStore } from "./PromotionStore.js"
import * as SearchPlan from "./SearchPlan.js"
import { DEFAULT_LANGUAGE, type Language } from "./SearchTokenizer.js"
import type { TelemetryStore } from "./TelemetryStore.js"

/**
 * What a backend can do beyond Tier 1. `search: "keyword"` means whole-token matching over the
 * shared tokenizer's tokens (Tier 2 of the conformance kit).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreCapabilities {
  readonly search: "keyword" | "none"
}

/**
 * Records read back, with the number of stored rows that failed to decode and were skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface ReadResult {
  readonly records: ReadonlyArray<MemoryRecord>
  readonly skipped: number
}

/**
 * One page of a listing. `nextCursor` is present when more records may follow.
 *
 * @since 0.1.0
 * @category models
 */
export interface ListPage extends ReadResult {
  readonly nextCursor: string | undefined
}

/**
 * A read of conversation neighbours: the records, and their places (`MemoryQuery.Place`) — first
 * those of the records the query was `around` that have one, in the order asked, each once, then
 * those of the records read, in their order. A record written without a position sits in its
 * scope's write order, which the record itself does not carry.
 *
 * @since 0.1.0
 * @category models
 */
export interface NeighbourResult extends ReadResult {
  readonly places: ReadonlyArray<Place>
}

/**
 * A search match. Higher scores rank first; scores are comparable only within one result.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchHit {
  readonly record: MemoryRecord
  readonly score: number
}

/**
 * Search matches, best first, with the count of undecodable rows skipped.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchResult {
  readonly hits: ReadonlyArray<SearchHit>
  readonly skipped: number
}

/**
 * One search read on demand (decision 0226), for a caller that takes the head of a ranking in
 * growing prefixes (a projection's recall rounds): `take(limit, ahead)` is the first `limit` hits
 * of the search — exactly what `search(text, { ...options, limit })` would return, `skipped`
 * included — where the store continues from the rows it read for the takes before instead of
 * searching again from the start. `ahead` (at least `limit`) is how far to read ahead when the
 * store must run its ranking again. The search's time and statistics are those of its first take.
 * `searches()` counts the times the ranking ran.
 *
 * @since 0.1.0
 * @category models
 */
export interface SearchPages extends Pages.SearchPages {}

/**
 * Opens one search's pages (see {@link SearchPages}).
 *
 * @since 0.1.0
 * @category models
 */
export type Paged = Pages.Paged

/**
 * Registers `paged` as how `store` searches in pages, and returns `store`. Only the service object
 * given holds it: a wrapper building a service of its own does not offer pages unless it registers
 * them ({@link withContract} and {@link withSearchDefaults} pass them on).
 *
 * @since 0.1.0
 * @category combinators
 */
export const withPages: (store: Service, paged: Paged) => Service = Pages.withPages

/**
 * How `store` searches in pages ({@link SearchPages}), when it registered a way; otherwise the caller
 * searches.
 *
 * @since 0.1.0
 * @category combinators
 */
export const pagesOf: (store: Service) => Paged | undefined = Pages.pagesOf

/**
 * The outcome of a supersession: the invalidated original and its successor.
 *
 * @since 0.1.0
 * @category models
 */
export interface Supersession {
  readonly superseded: MemoryRecord
  readonly successor: MemoryRecord
}

/**
 * The memory store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** What this backend supports beyond Tier 1. */
  readonly capabilities: StoreCapabilities

  /**
   * Creates records from inputs, atomically: a duplicate id (stored, or repeated in the batch)
   * or an invalid input fails the whole batch and stores nothing. The records of one call are
   * stamped the clock's instant plus their index in milliseconds, so the last input is the newest
   * (decision 0173; why not otherwise, decision 0177). Returns the created records in input order.
   */
  readonly write: (
    inputs: ReadonlyArray<MemoryWriteInput>
  ) => Effect.Effect<ReadonlyArray<MemoryRecord>, DuplicateMemoryId | InvalidMemoryInput | MemoryStoreFailure>

  /**
   * Stores fully formed records verbatim — timestamps, review and lifecycle included. For
   * imports and migrations between backends; create-only and atomic like `write`.
   */
  readonly restore: (
    records: ReadonlyArray<MemoryRecord>
  ) => Effect.Effect<void, DuplicateMemoryId | InvalidMemoryInput | MemoryStoreFailure>

  /**
   * Reads records by id, in the order asked; unknown ids are left out. With `scopes`, records
   * outside those scopes are left out too.
   */
  readonly get: (
    ids: ReadonlyArray<MemoryId>,
    options?: { readonly scopes?: ReadonlyArray<Scope> }
  ) => Effect.Effect<ReadResult, MemoryStoreFailure>

  /** Lists records newest first (`createdAt` DESC, then `id` ASC), one page at a time. */
  readonly list: (query?: ListQuery) => Effect.Effect<ListPage, InvalidCursor | InvalidMemoryQuery | MemoryStoreFailure>

  /**
   * Keyword search: a record matches when it shares at least one whole token with the query
   * (tokens OR-joined). Searches the label, the content and the tags.
   */
  readonly search: (
    text: string,
    options?: SearchOptions
  ) => Effect.Effect<SearchResult, InvalidMemoryQuery | MemoryStoreFailure>

  /**
   * Reads conversation neighbours in one call: the records of the same scope and thread as any of
   * `query.positions` or of the places of the records `query.around` names, within `query.window`
   * turns of it (its own turn included), that the shared filters admit — the filters a search
   * takes, applied the same way — at most `query.limit`, in conversation order
   * (`MemoryQuery.comparePlaces`), leaving out the ids in `query.exclude` before the limit counts,
   * with their places. A record without a position is a neighbour only through its scope's write
   * order (`MemoryQuery.WRITE_ORDER_THREAD`, decision 0233): an `episode` is, other kinds never. A
   * window over `MemoryLimits.maxNeighbourWindow`, more positions and ids around than
   * `MemoryLimits.maxNeighbourPositions` or more ids left out than
   * `MemoryLimits.maxNeighbourExcluded` fails with `InvalidMemoryQuery` whose `limit` names it;
   * a position that is not one (an empty or over-long thread, a negative turn, a scope no record
   * can have) fails with `InvalidMemoryQuery` naming the field.
   */
  readonly neighbours: (
    query: NeighbourQuery
  ) => Effect.Effect<NeighbourResult, InvalidMemoryQuery | MemoryStoreFailure>

  /** Sets a record's review state. */
  readonly setReviewState: (
    id: MemoryId,
    state: ReviewState
  ) => Effect.Effect<MemoryRecord, MemoryNotFound | MemoryConflict | InvalidReviewState | MemoryStoreFailure>

  /**
   * In one transaction: inserts the successor (`supersedes: oldId`, scope defaulting to the
   * original's), then invalidates the original with `invalidatedAt`, `invalidationReason`
   * `superseded_by:<newId>` and `supersededBy`. Fails with `MemoryConflict` if the original is
   * already invalidated.
   */
  readonly supersede: (
    oldId: MemoryId,
    input: MemoryWriteInput
  ) => Effect.Effect<
    Supersession,
    MemoryNotFound | MemoryConflict | DuplicateMemoryId | InvalidMemoryInput | MemoryStoreFailure
  >

  /**
   * Records that the record's value was said again (decision 0174): its corroboration count goes
   * up by one, `session` joins the sessions it names (`MemoryWrite.corroborated`), and its
   * `lastAt` is now. Nothing else about the record changes, whatever its review or lifecycle
   * state. A `session` that is not a session id fails with `InvalidMemoryInput`.
   */
  readonly corroborate: (
    id: MemoryId,
    options?: { readonly session?: string | undefined }
  ) => Effect.Effect<MemoryRecord, MemoryNotFound | InvalidMemoryInput | MemoryStoreFailure>

  /** Expires a record now (keeps an earlier expiry). Expired records stay stored but are not deliverable. */
  readonly expire: (id: MemoryId) => Effect.Effect<MemoryRecord, MemoryNotFound | MemoryStoreFailure>

  /**
   * Hard-deletes the targeted records in one transaction: the rows, their search-index entries,
   * and — when a `PromotionStore` is in the caller's context — their promotion rows, leaving one
   * {@link Tombstone} per record (who, when, scope, supersession links; no content). Records that
   * link to a forgotten one keep their links. Unknown ids are ignored; `by` is checked first
   * (`InvalidMemoryQuery`) and nothing is deleted when it is not one line of 1-200 characters.
   */
  readonly forget: (
    target: ForgetTarget,
    options: { readonly by: string }
  ) => Effect.Effect<ForgetResult, InvalidMemoryQuery | MemoryStoreFailure>

  /** The tombstones of forgotten records, by forgotten id and/or scope, ordered by id then time. */
  readonly tombstones: (query?: TombstoneQuery) => Effect.Effect<ReadonlyArray<Tombstone>, MemoryStoreFailure>
}

/**
 * The memory store service tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class MemoryStore extends Context.Tag("@engram/core/MemoryStore")<MemoryStore, Service>() {}

/**
 * Counts stored rows that failed to decode on read and were skipped, by backend.
 *
 * @since 0.1.0
 * @category metrics
 */
export const rowsSkipped = Metric.counter("engram_memory_rows_skipped", {
  description: "Stored memory rows that failed to decode on read and were skipped",
  incremental: true
})

/**
 * Puts the one input contract in front of a store implementation; every backend's layer applies
 * it, so no backend sees a value the contract refuses. Content and search text over
 * `MemoryLimits` fail with `InvalidMemoryInput` / `InvalidMemoryQuery` whose `limit` names it; a review state that is not one
 * fails with `InvalidReviewState`; an id no record can have is not found (left out of `get`,
 * `MemoryNotFound` on lifecycle calls) and a scope no record can have admits nothing. Field rules
 * (no NUL, well-formed Unicode, the shapes of ids, scopes, labels and tags) are the record
 * schemas, decoded by `MemoryWrite` on every write.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withContract: (store: Service) => Service = MemoryContract.withContract

/**
 * What every store is opened with, each store layer's options (decisions 0165, 0196):
 *
 * - `language`: the language the store indexes and queries in (`SearchTokenizer.Language`). A
 *   persistent store records the language its index was built in; opened without one it uses
 *   what it records (a new store: `SearchTokenizer.DEFAULT_LANGUAGE`), and opened in another it
 *   fails with `SearchTokenizer.LanguageMismatch` naming both.
 * - `search`: the store's search defaults (`SearchPlan.SearchTuning`), used for every field a
 *   search's own options leave out; a search still overrides any of them. Checked when the store
 *   is built (`InvalidStoreOptions` names the field).
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreOptions {
  readonly language?: Language | undefined
  readonly search?: SearchPlan.SearchTuning | undefined
}

const decodeTuning = Schema.decodeUnknown(SearchPlan.SearchTuning)

/**
 * The store with `search` as its search defaults: every search runs with the fields its own options
 * set, over `search`'s (`SearchPlan.withDefaults`), then over `SearchPlan.defaultTuning`. A hybrid
 * store's fusion defaults too, as it reads its tuning from the options it is given. Fails with
 * `InvalidStoreOptions` naming the field when a default is out of range; no defaults leave the
 * store as it is.
 *
 * @since 0.1.0
 * @category combinators
 */
export const withSearchDefaults = (
  store: Service,
  search: SearchPlan.SearchTuning | undefined
): Effect.Effect<Service, InvalidStoreOptions> =>
  search === undefined ? Effect.succeed(store) : decodeTuning(search).pipe(
    Effect.mapError((error) => new InvalidStoreOptions({ problem: `search: ${describeParseError(error)}` })),
    Effect.map((defaults): Service => {
      const wrapped: Service = {
        ...store,
        search: (text, options) => store.search(text, { ...options, ...SearchPlan.withDefaults(options, defaults) })
      }
      const paged = Pages.pagesOf(store)
      return paged === undefined
        ? wrapped
        : Pages.withPages(
          wrapped,
          (text, options) => paged(text, { ...options, ...SearchPlan.withDefaults(options, defaults) })
        )
    })
  )

/**
 * What an in-memory store is built with: its {@link StoreOptions} (nothing persists, so its
 * `language` is simply the one it stems in), the stores its `forget` reaches
 * (`MemoryForget.Cascade`; without them it forgets its own records only) and the embeddings its
 * exact vector index uses (without them it searches by keyword).
 *
 * @since 0.1.0
 * @category models
 */
export interface MemoryOptions extends StoreOptions {
  readonly cascade?: Cascade | undefined
  readonly embeddings?: EmbeddingsService | undefined
}

/**
 * Builds an in-memory reference store with what `options` gives it (English unless
 * `options.language` says otherwise). Fails only on search defaults out of range.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (options: MemoryOptions = {}): Effect.Effect<Service, InvalidStoreOptions> =>
  Effect.gen(function*() {
    const language = options.language ?? DEFAULT_LANGUAGE
    if (options.embeddings === undefined) {
      return yield* withSearchDefaults(withContract(InMemoryStore.make(language, options.cascade)), options.search)
    }
    const { store, vectors } = InMemoryStore.makeWithVectors(language, options.cascade)
    // A fresh store has no embedder yet: the claim cannot fail.
    const hybrid = yield* Effect.orDie(HybridStore.withVectors(withContract(store), vectors, options.embeddings))
    return yield* withSearchDefaults(hybrid, options.search)
  })

// The layers below set no search defaults: building them cannot fail.
const makeDefault = (options: Omit<MemoryOptions, "search">): Effect.Effect<Service> =>
  Effect.orDie(makeMemory(options))

/**
 * The in-memory reference store: the same token semantics as every other backend, nothing
 * persisted. Each layer build starts empty, stemming in English ({@link makeMemory} takes another language).
 * It searches by keyword: the store that keeps vectors is {@link layerMemoryWithVectors}. Its
 * `forget` removes its own records only: the store whose forget reaches promotion rows and
 * telemetry is {@link layerMemoryCascading}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<MemoryStore> = Layer.effect(MemoryStore, makeDefault({}))

/**
 * {@link layerMemory} with an exact vector index over the `Embeddings.Embeddings` service it
 * requires: every record is embedded as it is stored and relevance searches are hybrid
 * (`VectorIndex.withVectors`). Vectors are asked for by choosing this layer, never by what
 * happens to be in context (decision 0161 (c)).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemoryWithVectors: Layer.Layer<MemoryStore, never, Embeddings> = Layer.effect(
  MemoryStore,
  Effect.flatMap(Embeddings, (embeddings) => makeDefault({ embeddings }))
)

/**
 * {@link layerMemory} over the promotion and telemetry stores in context, taken when the layer is
 * built: its `forget` removes the forgotten records' promotion rows and their text in the
 * telemetry, as a SQL store's does (`MemoryForget.Cascade`, decision 0164). It searches by
 * keyword: with vectors it is {@link layerMemoryCascadingWithVectors}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemoryCascading: Layer.Layer<
  MemoryStore,
  never,
  PromotionStore | TelemetryStore
> = Layer.effect(MemoryStore, Effect.flatMap(MemoryForget.cascade, (cascade) => makeDefault({ cascade })))

/**
 * {@link layerMemoryCascading} with an exact vector index over the `Embeddings.Embeddings`
 * service it requires (as {@link layerMemoryWithVectors}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemoryCascadingWithVectors: Layer.Layer<
  MemoryStore,
  never,
  PromotionStore | TelemetryStore | Embeddings
> = Layer.effect(
  MemoryStore,
  Effect.flatMap(
    Effect.all({ cascade: MemoryForget.cascade, embeddings: Embeddings }),
    ({ cascade, embeddings }) => makeDefault({ cascade, embeddings })
  )
)

/**
 * The records of `ids` that live in `scope`, in the store's answer order, with the number of
 * stored rows that failed to decode. They are read by id alone and kept to the scope here: a scope
 * filter would let a backend pick its scope index and scan the whole scope once per batch of ids.
 * What the composed Background and the save gate read for their promotion rows.
 *
 * @since 0.1.0
 * @category reading
 */
export const readInScope = (
  ids: ReadonlyArray<MemoryId>,
  scope: Scope
): Effect.Effect<ReadResult, MemoryStoreFailure, MemoryStore> =>
  Effect.flatMap(MemoryStore, (memories) =>
    Effect.map(
      memories.get(ids),
      (read) => ({ records: read.records.filter((record) => record.scope === scope), skipped: read.skipped })
    ))
