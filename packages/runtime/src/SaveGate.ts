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
  Routing,
  Slot
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
    const found = yield* promotions.lookup(options.scope, options.placementKey, { specKey: options.specKey })
    const excluded = new Set(options.exclude ?? [])
    const rows = found.rows.filter((row) => !excluded.has(row.recordId))
    if (rows.length === 0) return []
    const read = yield* MemoryStore.readInScope(rows.map((row) => row.recordId), options.scope)
    const at = yield* DateTime.now
    const rowOf = new Map(rows.map((row) => [row.recordId, row] as const))
    return read.records
      .filter((record) => MemoryQuery.isDeliverable(record, at))
      .sort(MemoryQuery.compareListOrder)
      .map((record) => ({ record, row: rowOf.get(record.id)! }))
  })

/**
 * A live memory in a slot: the record, and its promotion row when it holds the slot's address.
 *
 * @since 0.1.0
 * @category models
 */
export interface SlotHolder {
  readonly record: MemoryRecord.MemoryRecord
  readonly row?: PromotionStore.PromotionRow | undefined
}

/**
 * The gate's verdict for a record about to be saved: `Clear` to write (with the routing
 * evaluation, whatever it was); `Held` by live records in its slot — the address routing gives it,
 * or the slot its content states (`Slot.slotOf`) — whose value it changes; `Restated` when the
 * newest holder already states the same value (`Slot.restates`): nothing is to be written, the
 * holder is corroborated. `key` is the key a person reads for the slot.
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | { readonly _tag: "Clear"; readonly evaluation: Routing.RouteEvaluation }
  | {
    readonly _tag: "Held"
    readonly evaluation: Routing.RouteEvaluation
    readonly key: string
    readonly holders: ReadonlyArray<SlotHolder>
  }
  | {
    readonly _tag: "Restated"
    readonly evaluation: Routing.RouteEvaluation
    readonly key: string
    readonly holder: MemoryRecord.MemoryRecord
  }

/** A pending supersede proposal is a value waiting for review, not a value in force. */
const isProposal = (record: MemoryRecord.MemoryRecord): boolean =>
  record.tags.some((tag) => tag.startsWith("supersede-proposal:"))

/** At most this many search hits are read for the holders of a slot no address names. */
const SLOT_CANDIDATES = 50

/**
 * The live holders of `slot` in `scope` that hold no promoted address: the scope's deliverable
 * records a search for the slot's words finds (at most {@link SLOT_CANDIDATES}), those in the
 * same slot, newest first. Pending supersede proposals and `exclude` are left out.
 *
 * @since 0.1.0
 * @category gate
 */
export const slotHolders = (options: {
  readonly scope: MemoryRecord.Scope
  readonly slot: Slot.Slot
  readonly spec: Pick<Routing.MemoryRoutingSpec, "keys">
  readonly exclude?: ReadonlyArray<string> | undefined
}): Effect.Effect<
  ReadonlyArray<MemoryRecord.MemoryRecord>,
  MemoryStoreError.MemoryStoreFailure | MemoryStoreError.InvalidMemoryQuery,
  MemoryStore.MemoryStore
> =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const found = yield* memories.search(options.slot.name.replace(/_/g, " "), {
      scopes: [options.scope],
      deliverable: true,
      limit: SLOT_CANDIDATES
    })
    const excluded = new Set(options.exclude ?? [])
    return found.hits
      .map((hit) => hit.record)
      .filter((record) =>
        !excluded.has(record.id) && !isProposal(record) && Slot.slotOf(options.spec, record)?.key === options.slot.key
      )
      .sort(MemoryQuery.compareListOrder)
  })

/**
 * Judges a record about to be saved. First the address routing gives it — placed in a declared
 * section, or in a section the agent does not declare, whose records the identity tier still
 * delivers (so one slot never holds two live values for an agent that declares no user sections
 * either). The address is the spec's: a label folded to a declared key, or the single-valued key
 * the content states (`Routing.statedKeyOf`), so "Actually my name is Douglas" under any label
 * meets the name it corrects (decisions 0055, 0170). When no promoted record holds that address,
 * the slot the content states (`Slot.slotOf`: "Our standup moved to 10am" is the standup's
 * time, placed or not) is looked for among the scope's live records. A holder stating the same
 * value makes the save a restatement; any other, a conflict. `supersedes` names the record the
 * save replaces; it does not count as a holder.
 *
 * Fails with `Routing.InvalidPlacement` when the spec cannot place the record (it returns a
 * malformed placement, or throws).
 *
 * @since 0.1.0
 * @category gate
 */
export const check = (
  record: Routing.RoutableRecord & { readonly id?: string | undefined },
  options: {
    readonly background: Background.Background
    readonly spec: Routing.MemoryRoutingSpec
    readonly supersedes?: string | undefined
  }
) =>
  Effect.gen(function*() {
    const evaluation = yield* Routing.evaluateRoute(record, Routing.routingContext(options.background), options.spec)
    const exclude = [
      ...(options.supersedes === undefined ? [] : [options.supersedes]),
      ...(record.id === undefined ? [] : [record.id])
    ]
    const placed: ReadonlyArray<SlotHolder> = evaluation.placement === null ? [] : yield* liveHolders({
      scope: record.scope,
      placementKey: evaluation.placementKey,
      specKey: options.spec.key,
      exclude
    })
    const slot = Slot.slotOf(options.spec, record)
    const holders: ReadonlyArray<SlotHolder> = placed.length > 0 || slot === undefined ? placed : (yield* slotHolders({
      scope: record.scope,
      slot,
      spec: options.spec,
      exclude
    })).map((held) => ({ record: held }))
    if (holders.length === 0) return { _tag: "Clear", evaluation } satisfies Verdict as Verdict
    const key = placed.length > 0 && evaluation.placement !== null ? evaluation.placement.key : slot!.name
    const newest = holders[0]!.record
    if (options.supersedes === undefined && Slot.restates(record.content, newest.content)) {
      yield* Metric.increment(Metric.tagged(Instrumentation.gateRestatements, "spec", options.spec.key))
      return { _tag: "Restated", evaluation, key, holder: newest } satisfies Verdict as Verdict
    }
    yield* Metric.increment(Metric.tagged(Instrumentation.gateConflicts, "spec", options.spec.key))
    return { _tag: "Held", evaluation, key, holders } satisfies Verdict as Verdict
  })
