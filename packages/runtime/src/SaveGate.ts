/**
 * The save gate: before a memory is written, the address routing would give it is checked
 * against the promotion rows of its scope. If a live record already holds that address — a record
 * that is deliverable (not rejected, expired or superseded) and promoted under the same spec — the
 * save is a conflict: the caller must supersede the holder or choose another label.
 *
 * The lookup is the promotion store's exact `placementKey` lookup, then a read of the few records
 * it names; neither grows with the size of the store.
 *
 * @since 0.1.0
 */
import {
  type Background,
  Instrumentation,
  MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  type MemoryStoreError,
  PromotionStore,
  Routing
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Metric from "effect/Metric"

/**
 * A live record holding an address, with its promotion row.
 *
 * @since 0.1.0
 * @category models
 */
export interface Holder {
  readonly record: MemoryRecord.MemoryRecord
  readonly row: PromotionStore.PromotionRow
}

/**
 * The live holders of `placementKey` in `scope` under the spec `specKey`, newest first. Records
 * named in `exclude` (the record being superseded) are left out.
 *
 * @since 0.1.0
 * @category gate
 */
export const liveHolders = (options: {
  readonly scope: MemoryRecord.Scope
  readonly placementKey: string
  readonly specKey: string
  readonly exclude?: ReadonlyArray<string> | undefined
}): Effect.Effect<
  ReadonlyArray<Holder>,
  PromotionStore.PromotionStoreFailure | MemoryStoreError.MemoryStoreFailure,
  PromotionStore.PromotionStore | MemoryStore.MemoryStore
> =>
  Effect.gen(function*() {
    const promotions = yield* PromotionStore.PromotionStore
    const memories = yield* MemoryStore.MemoryStore
    const found = yield* promotions.lookup(options.scope, options.placementKey, { specKey: options.specKey })
    const excluded = new Set(options.exclude ?? [])
    const rows = found.rows.filter((row) => !excluded.has(row.recordId))
    if (rows.length === 0) return []
    // Read by id alone and check the scope here: a scope filter would let a backend pick its scope
    // index and scan the whole scope.
    const read = yield* memories.get(rows.map((row) => row.recordId))
    const at = yield* DateTime.now
    const rowOf = new Map(rows.map((row) => [row.recordId, row] as const))
    return read.records
      .filter((record) => record.scope === options.scope && MemoryQuery.isDeliverable(record, at))
      .sort(MemoryQuery.compareListOrder)
      .map((record) => ({ record, row: rowOf.get(record.id)! }))
  })

/**
 * The gate's verdict for a record about to be saved: `Clear` to write (with the routing
 * evaluation, whatever it was), or `Held` by live records at the address routing gives it.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Clear"; readonly evaluation: Routing.RouteEvaluation }
  | {
    readonly _tag: "Held"
    readonly evaluation: Extract<Routing.RouteEvaluation, { readonly placementKey: string }>
    readonly holders: ReadonlyArray<Holder>
  }

/**
 * Judges a record about to be saved. Every record routing gives an address is gated — placed in
 * a declared section, or in a section the agent does not declare, whose records the identity tier
 * still delivers (so one slot never holds two live values for an agent that declares no user
 * sections either). A declined record has no address and cannot collide. The address is the
 * spec's: a label folded to a declared key, or — when the label names none, or there is no label
 * — the single-valued key the content states (`Routing.statedKeyOf`), so "Actually my name is
 * Douglas" under any label meets the name it corrects (decision 0055). `supersedes` names the
 * record the save replaces; it does not count as a holder.
 *
 * Fails with `Routing.InvalidPlacement` when the spec cannot place the record (it returns a
 * malformed placement, or throws).
 *
 * @since 0.1.0
 * @category gate
 */
export const check = (
  record: Routing.RoutableRecord,
  options: {
    readonly background: Background.Background
    readonly spec: Routing.MemoryRoutingSpec
    readonly supersedes?: string | undefined
  }
) =>
  Effect.gen(function*() {
    const evaluation = yield* Routing.evaluateRoute(record, Routing.routingContext(options.background), options.spec)
    if (evaluation.placement === null) return { _tag: "Clear", evaluation } satisfies Verdict as Verdict
    const holders = yield* liveHolders({
      scope: record.scope,
      placementKey: evaluation.placementKey,
      specKey: options.spec.key,
      exclude: options.supersedes === undefined ? [] : [options.supersedes]
    })
    if (holders.length === 0) return { _tag: "Clear", evaluation } satisfies Verdict as Verdict
    yield* Metric.increment(Metric.tagged(Instrumentation.gateConflicts, "spec", options.spec.key))
    return { _tag: "Held", evaluation, holders } satisfies Verdict as Verdict
  })
