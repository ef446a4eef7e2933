/**
 * How far a store's re-index has come. A store whose search index was built by another tokenizer
 * (another version, another stemmer, another language: its fingerprint differs) re-indexes every
 * record once when it opens, before it answers a search, so no search ever runs over mixed forms.
 * That can take a while on a large store: a caller that shows progress (the CLI draws a bar)
 * provides a {@link ReindexProgress} observer; by default nothing is reported.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

/**
 * Called as a re-index runs: `done` of `total` records indexed so far (first with `done = 0`,
 * last with `done = total`).
 *
 * @since 0.1.0
 * @category models
 */
export type Observer = (progress: { readonly done: number; readonly total: number }) => Effect.Effect<void>

/**
 * The observer a store's re-index reports to. A `Context.Reference`: it needs no layer, and
 * reports nowhere unless a caller provides one.
 *
 * @since 0.1.0
 * @category tags
 */
export class ReindexProgress extends Context.Reference<ReindexProgress>()("@engram/core/ReindexProgress", {
  defaultValue: (): Observer => () => Effect.void
}) {}
