/**
 * The size limits every memory store enforces before a backend sees a value: how long a record's
 * content and a search query may be, and how many tags a record may carry. Being a `Context.Reference`, it needs no layer — the defaults
 * apply — and an application sets its own with {@link layer}.
 *
 * @example
 * ```ts
 * import { MemoryLimits } from "@engram/core"
 *
 * const Limits = MemoryLimits.layer({ maxContentChars: 100_000 })
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"

/**
 * The limits: sizes in characters (UTF-16 code units, as `String.length` counts them), counts in
 * entries. A tag's own size is part of what a tag is (`MemoryRecord.TAG_MAX_CHARS`), not a setting.
 *
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** Longest content a record may have (write, restore, supersede). */
  readonly maxContentChars: number
  /** Longest text a search may be given. */
  readonly maxQueryChars: number
  /** Most tags one record may carry (write, restore, supersede). */
  readonly maxTags: number
  /** Widest turn window a read of conversation neighbours may ask for (`MemoryStore.neighbours`), in turns each side. */
  readonly maxNeighbourWindow: number
  /** Most conversation positions one read of neighbours may name (`MemoryStore.neighbours`). */
  readonly maxNeighbourPositions: number
  /** Most ids one read of neighbours may leave out (`NeighbourQuery.exclude`). */
  readonly maxNeighbourExcluded: number
}

/**
 * The defaults: 32,000 characters of content (about 8,000 tokens — a memory, not a document; and
 * well inside PostgreSQL's 1 MB `tsvector`), 8,000 characters of query (a search of that size
 * stays in milliseconds on every backend), 32 tags (at most 2,048 characters of tags a record);
 * a read of neighbours spans at most 10 turns each side (the widest `Bm25.neighbourWindow`) of at
 * most 10,000 positions (the most hits a search returns, `MemoryQuery.MAX_LIMIT`), leaving out at
 * most as many ids.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: Limits = {
  maxContentChars: 32_000,
  maxQueryChars: 8_000,
  maxTags: 32,
  maxNeighbourWindow: 10,
  maxNeighbourPositions: 10_000,
  maxNeighbourExcluded: 10_000
}

/**
 * The limits in force. Read by the store contract on every call.
 *
 * @since 0.1.0
 * @category tags
 */
export class MemoryLimits extends Context.Reference<MemoryLimits>()("@engram/core/MemoryLimits", {
  defaultValue: (): Limits => defaults
}) {}

/**
 * Sets the limits, each one given overriding its default.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (limits: Partial<Limits>): Layer.Layer<never> =>
  Layer.succeed(MemoryLimits, { ...defaults, ...limits })

/**
 * The longest prefix of `text` within `maxQueryChars`, cut at the last whitespace before the limit
 * when there is one (never inside a word or a surrogate pair). For callers that search with text
 * they do not control, such as an operator's whole message.
 *
 * @since 0.1.0
 * @category queries
 */
export const clampQuery = (text: string, limits: Limits): string => {
  if (text.length <= limits.maxQueryChars) return text
  const head = text.slice(0, limits.maxQueryChars + 1)
  const space = head.search(/\s\S*$/u)
  if (space > 0) return head.slice(0, space)
  const cut = text.slice(0, limits.maxQueryChars)
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut
}
