/**
 * The promotion step: routing evaluated for records that have no promotion row yet under a spec,
 * and the decision committed once, as a row in the `PromotionStore`.
 *
 * Routing itself is pure and silent; this is where its outcomes become observable — a span
 * (`agent.memory.promote`), a counter of the same name tagged with the spec and the outcome, and
 * one debug log line per record (ids and addresses, never content).
 *
 * @example
 * import { Effect } from "effect"
 * import { type MemoryRecord, RoutingPresets } from "@engram/core"
 * import { Promotion } from "@engram/runtime"
 *
 * const promote = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
 *   Promotion.promoteNew(records, {
 *     background: RoutingPresets.userBackgroundSections,
 *     spec: RoutingPresets.userBackground
 *   })
 *
 * @since 0.1.0
 */
import { type Background, PromotionStore, Routing } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as LogLevel from "effect/LogLevel"
import * as Metric from "effect/Metric"

/**
 * What promotion needs: the agent's declared Background (routing sees its sections, never its
 * entries) and the spec that decides.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromoteOptions {
  readonly background: Background.Background
  readonly spec: Routing.MemoryRoutingSpec
}

/**
 * How routing judged one record at promotion.
 *
 * @since 0.1.0
 * @category models
 */
export type PromotionOutcome = "routed" | "spec-declined" | "undeclared-section"

/**
 * The result of a promotion step: the rows committed (one per newly promoted record), and the
 * ids that already had a row under the spec and were left alone.
 *
 * @since 0.1.0
 * @category models
 */
export interface PromoteResult {
  readonly committed: ReadonlyArray<PromotionStore.PromotionRow>
  readonly alreadyPromoted: ReadonlyArray<string>
}

/**
 * A promotion step over records: {@link promoteNew} and {@link promoteCreated}.
 *
 * @since 0.1.0
 * @category models
 */
export type Promote = (
  records: ReadonlyArray<Routing.RoutableRecord>,
  options: PromoteOptions
) => Effect.Effect<
  PromoteResult,
  Routing.InvalidPlacement | PromotionStore.InvalidPromotionRow | PromotionStore.PromotionStoreFailure,
  PromotionStore.PromotionStore
>

/**
 * Counts promoted records by spec and outcome (`routed`, `spec-declined`, `undeclared-section`).
 *
 * @since 0.1.0
 * @category metrics
 */
export const promoted = Metric.counter("agent.memory.promote", {
  description: "Memory records promoted (a promotion row committed), by spec and routing outcome",
  incremental: true
})

/**
 * The outcome a committed row records.
 *
 * @since 0.1.0
 * @category models
 */
export const outcomeOf = (row: Pick<PromotionStore.PromotionRow, "placement" | "tier">): PromotionOutcome =>
  row.placement === null ? "spec-declined" : row.tier === null ? "undeclared-section" : "routed"

/**
 * The promotion row a record gets under `spec` in the routing context of `background`, committed
 * at `promotedAt`, or `Routing.InvalidPlacement` when the spec cannot place the record. Pure and
 * total.
 *
 * @since 0.1.0
 * @category constructors
 */
export const rowFor = (
  record: Routing.RoutableRecord,
  ctx: Routing.RoutingContext,
  spec: Routing.MemoryRoutingSpec,
  promotedAt: Parameters<typeof Routing.toPromotionDecision>[2]
): Either.Either<PromotionStore.PromotionRow, Routing.InvalidPlacement> =>
  Either.map(Routing.evaluateRoute(record, ctx, spec), (evaluation) => ({
    recordId: record.id,
    scope: record.scope,
    ...Routing.toPromotionDecision(evaluation, spec, promotedAt)
  }))

/**
 * Counts the committed rows by outcome (one increment per outcome, not per row) and, when debug
 * logging is on, logs each row: a batch of a thousand rows pays for its log lines only when they
 * are wanted.
 */
const instrument = (spec: Routing.MemoryRoutingSpec, rows: ReadonlyArray<PromotionStore.PromotionRow>) =>
  Effect.suspend(() => {
    const counts = new Map<PromotionOutcome, number>()
    for (const row of rows) {
      const outcome = outcomeOf(row)
      counts.set(outcome, (counts.get(outcome) ?? 0) + 1)
    }
    return Effect.zipRight(
      Effect.forEach(
        counts,
        ([outcome, count]) =>
          Metric.incrementBy(Metric.tagged(Metric.tagged(promoted, "spec", spec.key), "outcome", outcome), count),
        {
          discard: true
        }
      ),
      Effect.whenLogLevel(
        Effect.forEach(rows, (row) =>
          Effect.logDebug("promoted a memory").pipe(
            Effect.annotateLogs({
              memoryId: row.recordId,
              spec: `${spec.key}@${spec.version}`,
              outcome: outcomeOf(row),
              ...(row.placementKey !== null ? { placementKey: row.placementKey } : {})
            })
          ), { discard: true }),
        LogLevel.Debug
      )
    )
  })

/**
 * Promotes the records that have no row under `options.spec` yet: evaluates routing for each and
 * commits the rows in one batch. Records already promoted under the spec are left alone (rows
 * are committed once). Each row takes the record's own scope. If another writer promotes one of
 * the records at the same moment, the step re-reads and tries again.
 *
 * Fails with `Routing.InvalidPlacement` when the spec returns a malformed placement (a bug in the
 * spec; nothing is committed), or with the store's typed failures.
 *
 * @since 0.1.0
 * @category promotion
 */
export const promoteNew: Promote = (records, options) => promote(records, options, true)

/**
 * {@link promoteNew} for records the caller has just created (in the transaction that wrote
 * them, with ids it assigned): no row can exist for them yet, so the rows are committed without
 * reading the store first. Should one exist anyway, the store refuses it by its key and the step
 * falls back to {@link promoteNew}'s read and commit, so the result is the same as promoteNew's.
 *
 * @since 0.1.0
 * @category promotion
 */
export const promoteCreated: Promote = (records, options) => promote(records, options, false)

const promote = (
  records: ReadonlyArray<Routing.RoutableRecord>,
  options: PromoteOptions,
  readFirst: boolean
) => {
  const { spec } = options
  const ctx = Routing.routingContext(options.background)
  const unique = [...new Map(records.map((record) => [record.id, record] as const)).values()]
  const attempt = (read: boolean) =>
    Effect.gen(function*() {
      const store = yield* PromotionStore.PromotionStore
      if (unique.length === 0) return { committed: [], alreadyPromoted: [] }
      const have = new Set<string>()
      if (read) {
        const existing = yield* store.getByRecords(unique.map((record) => record.id), { specKey: spec.key })
        for (const row of existing.rows) have.add(row.recordId)
      }
      const at = yield* DateTime.now
      const rows = yield* Either.all(
        unique.filter((record) => !have.has(record.id)).map((record) => rowFor(record, ctx, spec, at))
      )
      const committed = yield* store.commit(rows)
      return { committed, alreadyPromoted: unique.filter((record) => have.has(record.id)).map((record) => record.id) }
    })
  const reading = Effect.retry(attempt(true), { times: 3, while: (error) => error._tag === "DuplicatePromotion" })
  return (readFirst ? reading : Effect.catchTag(attempt(false), "DuplicatePromotion", () => reading)).pipe(
    // After repeated races the rows exist; what is left to report is a store failure.
    Effect.catchTag(
      "DuplicatePromotion",
      (error) =>
        Effect.fail(new PromotionStore.PromotionStoreFailure({ operation: "promote", cause: new Error(error.message) }))
    ),
    Effect.tap((result) => instrument(spec, result.committed)),
    Effect.tap((result) =>
      Effect.annotateCurrentSpan({ committed: result.committed.length, alreadyPromoted: result.alreadyPromoted.length })
    ),
    Effect.withSpan("agent.memory.promote", {
      attributes: { spec: spec.key, specVersion: spec.version, records: unique.length }
    })
  )
}

/**
 * Gives a successor the slots its predecessor held: for every spec the predecessor has a row under
 * and the successor has none, a row with the predecessor's decision (placement, address, key
 * source, tier, spec version), for the successor's id and scope, promoted now. This is what an
 * approved supersede proposal needs where no agent config is at hand (`engram memory review`, the
 * HTTP API, the MCP operator tools): the correction takes the address of the value it corrects,
 * under every spec that placed it, so the next prompt shows the new value where the old one was.
 * Returns the rows committed.
 *
 * @since 0.1.0
 * @category promotion
 */
export const inherit = (
  predecessorId: string,
  successor: Pick<Routing.RoutableRecord, "id" | "scope">
): Effect.Effect<
  ReadonlyArray<PromotionStore.PromotionRow>,
  PromotionStore.InvalidPromotionRow | PromotionStore.PromotionStoreFailure,
  PromotionStore.PromotionStore
> =>
  Effect.gen(function*() {
    const store = yield* PromotionStore.PromotionStore
    const held = yield* store.getByRecords([predecessorId, successor.id])
    const has = new Set(held.rows.filter((row) => row.recordId === successor.id).map((row) => row.specKey))
    const promotedAt = yield* DateTime.now
    const rows = held.rows
      .filter((row) => row.recordId === predecessorId && !has.has(row.specKey))
      .map((row): PromotionStore.PromotionRow => ({
        ...row,
        recordId: successor.id,
        scope: successor.scope,
        promotedAt
      }))
    if (rows.length === 0) return []
    return yield* store.commit(rows).pipe(
      Effect.catchTag(
        "DuplicatePromotion",
        (error) =>
          Effect.fail(
            new PromotionStore.PromotionStoreFailure({ operation: "inherit", cause: new Error(error.message) })
          )
      )
    )
  }).pipe(Effect.withSpan("agent.memory.promote.inherit", { attributes: { predecessorId, successor: successor.id } }))
