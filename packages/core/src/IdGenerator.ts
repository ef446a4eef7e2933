/**
 * Where new record ids come from. The default draws random UUIDs; tests swap in
 * {@link sequential} so runs produce the same bytes every time.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * Generates record ids.
 *
 * @since 0.1.0
 * @category tags
 */
export class IdGenerator extends Context.Reference<IdGenerator>()("@engram/core/IdGenerator", {
  defaultValue: (): { readonly next: Effect.Effect<string> } => ({
    next: Effect.sync(() => globalThis.crypto.randomUUID())
  })
}) {}

/**
 * Ids `<prefix>-000001`, `<prefix>-000002`, … — deterministic, and ordered like their creation.
 *
 * @since 0.1.0
 * @category layers
 */
export const sequential = (prefix = "mem"): Layer.Layer<IdGenerator> =>
  Layer.sync(IdGenerator, () => {
    let n = 0
    return { next: Effect.sync(() => `${prefix}-${String(++n).padStart(6, "0")}`) }
  })
