/**
 * Searches read on demand (decision 0226): a store that can continue a search where it stopped
 * registers how, keyed by its service object, so that only the stores that registered it — and the
 * core wrappers that pass it on (`withContract`, `withSearchDefaults`) — offer it. A wrapper that
 * builds a service of its own (a hybrid store, a test double overriding `search`) leaves it out,
 * and its callers search as before.
 */
import type * as Effect from "effect/Effect"
import type { SearchOptions } from "../MemoryQuery.js"
import type { SearchResult, Service } from "../MemoryStore.js"
import type { InvalidMemoryQuery, MemoryStoreFailure } from "../MemoryStoreError.js"

/** One search's pages: see `MemoryStore.SearchPages`. */
export interface SearchPages {
  readonly take: (limit: number, ahead: number) => Effect.Effect<SearchResult, InvalidMemoryQuery | MemoryStoreFailure>
  readonly searches: () => number
}

/** Opens one search's pages: the text and options of `search`, the limit given to each take. */
export type Paged = (text: string, options?: Omit<SearchOptions, "limit">) => SearchPages

const registered = new WeakMap<Service, Paged>()

/** `store`, registered as searching in pages by `paged`. */
export const withPages = (store: Service, paged: Paged): Service => {
  registered.set(store, paged)
  return store
}

/** How `store` searches in pages, if it registered a way. */
export const pagesOf = (store: Service): Paged | undefined => registered.get(store)
