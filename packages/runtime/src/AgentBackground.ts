/**
 * Composing an agent's Background from the stores: the promotion rows of a scope joined with
 * their records into `PlacedRecord`s, folded into the declared Background by
 * `MemoryOverlay.applyMemoryOverlay`.
 *
 * This is the engine behind `engram compose` and behind building an agent's stable prefix. It
 * reads and never writes: a record with no promotion row under the spec is simply not placed
 * (promote it first with `Promotion.promoteNew`).
 *
 * Instrumented as the span `agent.memory.overlay` and the counter of the same name, tagged with
 * the spec and each outcome (`composed`, or the decline reason).
 *
 * @since 0.1.0
 */
import {
  Background,
  ContextSection,
  MemoryOverlay,
  type MemoryRecord,
  MemoryStore,
  type MemoryStoreError,
  PromotionStore,
  PromptFragment,
  Routing
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"

/**
 * What to compose: the declared Background, the spec whose rows to use, the scope, and optionally
 * the overlay's character budget.
 *
 * @since 0.1.0
 * @category models
 */
export interface ComposeOptions {
  readonly background: Background.Background
  readonly spec: Routing.MemoryRoutingSpec
  readonly scope: MemoryRecord.Scope
  readonly budget?: MemoryOverlay.OverlayBudget | undefined
  /**
   * Addresses a more specific scope the agent also reads holds, with the holding record
   * (`ContextProjection.scopeOverrides`): declined `scope-overridden` (decision 0075).
   */
  readonly overriddenBy?: ReadonlyMap<string, string> | undefined
}

/**
 * The composed Background, the overlay report, the Background as attributed fragments, and what
 * could not be joined: rows whose record is gone or unreadable (`missing`), and stored rows that
 * failed to decode (`skipped`).
 *
 * @since 0.1.0
 * @category models
 */
export interface ComposedBackground {
  readonly background: Background.Background
  readonly report: MemoryOverlay.OverlayReport
  readonly fragments: ReadonlyArray<PromptFragment.PromptFragment>
  readonly missing: ReadonlyArray<string>
  readonly skipped: { readonly promotionRows: number; readonly records: number }
}

/**
 * Counts overlay outcomes by spec and outcome (`composed` or a decline reason).
 *
 * @since 0.1.0
 * @category metrics
 */
export const overlayOutcomes = Metric.counter("agent.memory.overlay", {
  description: "Placed memory records judged by the overlay, by spec and outcome",
  incremental: true
})

/**
 * Joins promotion rows with their records. Rows whose record is absent are returned as
 * `missing`; rows whose placement is malformed (committed by a broken spec, or stored by a backend
 * that does not check its rows) are returned as `invalid`, each with the `Routing.InvalidPlacement`
 * saying what is wrong, and are not placed.
 *
 * @since 0.1.0
 * @category composition
 */
export const joinPlaced = (
  rows: ReadonlyArray<PromotionStore.PromotionRow>,
  records: ReadonlyArray<MemoryRecord.MemoryRecord>
): {
  readonly placed: ReadonlyArray<Routing.PlacedRecord>
  readonly missing: ReadonlyArray<string>
  readonly invalid: ReadonlyArray<{ readonly recordId: string; readonly error: Routing.InvalidPlacement }>
} => {
  const byId = new Map(records.map((record) => [record.id, record] as const))
  const placed: Array<Routing.PlacedRecord> = []
  const missing: Array<string> = []
  const invalid: Array<{ readonly recordId: string; readonly error: Routing.InvalidPlacement }> = []
  for (const row of rows) {
    const record = byId.get(row.recordId)
    if (record === undefined) {
      missing.push(row.recordId)
      continue
    }
    const placement = row.placement === null ? undefined : Routing.validatePlacement(row.placement, row.specKey)
    if (placement !== undefined && Either.isLeft(placement)) {
      invalid.push({ recordId: row.recordId, error: placement.left })
      continue
    }
    placed.push({
      record,
      placement: row.placement,
      placementKey: row.placementKey,
      keySource: row.keySource,
      specKey: row.specKey,
      specVersion: row.specVersion,
      promotedAt: row.promotedAt,
      tier: row.tier
    })
  }
  return { placed, missing, invalid }
}

/**
 * Loads the scope's promotion rows under `options.spec` and their records, and composes them
 * into `options.background`. Expiry is judged at the current time (`Clock`). A row whose
 * placement is malformed degrades that row only: it is logged, counted in
 * `skipped.promotionRows` and not composed (see {@link joinPlaced}).
 *
 * @since 0.1.0
 * @category composition
 */
export const composeAgentBackground = (
  options: ComposeOptions
): Effect.Effect<
  ComposedBackground,
  PromotionStore.PromotionStoreFailure | MemoryStoreError.MemoryStoreFailure,
  PromotionStore.PromotionStore | MemoryStore.MemoryStore
> =>
  Effect.gen(function*() {
    const promotions = yield* PromotionStore.PromotionStore
    const rows = yield* promotions.listByScope(options.scope, { specKey: options.spec.key })
    const read = yield* MemoryStore.readInScope(rows.rows.map((row) => row.recordId), options.scope)
    const { invalid, missing, placed } = joinPlaced(rows.rows, read.records)
    yield* Effect.forEach(invalid, ({ error, recordId }) =>
      Effect.logWarning("a promotion row holds a malformed placement; it is not composed").pipe(
        Effect.annotateLogs({ memoryId: recordId, spec: error.specKey, problem: error.problem })
      ), { discard: true })
    const now = yield* DateTime.now
    const { background, report } = MemoryOverlay.applyMemoryOverlay(options.background, placed, options.spec, {
      now,
      budget: options.budget,
      overriddenBy: options.overriddenBy
    })
    const spec = Metric.tagged(overlayOutcomes, "spec", options.spec.key)
    yield* Effect.forEach(report.outcomes, (outcome) =>
      Metric.increment(Metric.tagged(spec, "outcome", outcome.status === "composed" ? "composed" : outcome.reason)), {
      discard: true
    })
    const composed = MemoryOverlay.composedIds(report).length
    yield* Effect.annotateCurrentSpan({ placed: placed.length, composed, missing: missing.length })
    yield* Effect.logDebug("composed the Background").pipe(
      Effect.annotateLogs({ scope: options.scope, spec: options.spec.key, placed: placed.length, composed })
    )
    return {
      background,
      report,
      fragments: Background.renderBackgroundFragments(background),
      missing,
      skipped: { promotionRows: rows.skipped + invalid.length, records: read.skipped }
    }
  }).pipe(
    Effect.withSpan("agent.memory.overlay", {
      attributes: { scope: options.scope, spec: options.spec.key, specVersion: options.spec.version }
    })
  )

/**
 * The `## Context` section as fragments: the composed Background's `###` sections, then the
 * authored awareness text. Memory-derived bytes keep their record ids; everything else is
 * authored. `[]` when there is nothing to hold. Memory that is not composed reaches the model
 * through the projection, never here.
 *
 * @since 0.1.0
 * @category rendering
 */
export const contextFragments = (input: {
  readonly background: Background.Background
  readonly awareness?: string | undefined
}): ReadonlyArray<PromptFragment.PromptFragment> =>
  ContextSection.contextFragments({ background: input.background, awareness: input.awareness })
