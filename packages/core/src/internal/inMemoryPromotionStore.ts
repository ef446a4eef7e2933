import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import type { MemoryId, Scope } from "../MemoryRecord.js"
import type { ReadOptions, Service as PromotionStoreService } from "../PromotionStore.js"
import { DuplicatePromotion } from "../PromotionStoreError.js"
import { compareRows, type PromotionRow, rowIdentity, validateBatch } from "./promotionRow.js"

const addressOf = (scope: Scope, placementKey: string): string => JSON.stringify([scope, placementKey])

const bySpec = (rows: Iterable<PromotionRow>, options: ReadOptions | undefined): Array<PromotionRow> => {
  const out: Array<PromotionRow> = []
  for (const row of rows) if (options?.specKey === undefined || row.specKey === options.specKey) out.push(row)
  return out.sort(compareRows)
}

/**
 * The in-memory reference promotion store. A commit is checked, then applied in one synchronous
 * step, so a batch is all-or-nothing and no reader sees half of it.
 */
export const make = (): PromotionStoreService => {
  const byIdentity = new Map<string, PromotionRow>()
  const byRecord = new Map<MemoryId, Array<PromotionRow>>()
  const byScope = new Map<Scope, Array<PromotionRow>>()
  const byAddress = new Map<string, Array<PromotionRow>>()

  const push = <K>(index: Map<K, Array<PromotionRow>>, key: K, row: PromotionRow) => {
    const rows = index.get(key)
    if (rows === undefined) index.set(key, [row])
    else rows.push(row)
  }

  const drop = <K>(index: Map<K, Array<PromotionRow>>, key: K, row: PromotionRow) => {
    const rows = index.get(key)?.filter((r) => r !== row)
    if (rows === undefined || rows.length === 0) index.delete(key)
    else index.set(key, rows)
  }

  return {
    commit: (rows) =>
      Effect.suspend(() => {
        const checked = validateBatch(rows)
        if (Either.isLeft(checked)) return Effect.fail(checked.left)
        const taken = rows.find((row) => byIdentity.has(rowIdentity(row)))
        if (taken !== undefined) {
          return Effect.fail(new DuplicatePromotion({ recordId: taken.recordId, specKey: taken.specKey }))
        }
        for (const row of rows) {
          byIdentity.set(rowIdentity(row), row)
          push(byRecord, row.recordId, row)
          push(byScope, row.scope, row)
          if (row.placementKey !== null) push(byAddress, addressOf(row.scope, row.placementKey), row)
        }
        return Effect.succeed(rows)
      }),

    lookup: (scope, placementKey, options) =>
      Effect.sync(() => ({ rows: bySpec(byAddress.get(addressOf(scope, placementKey)) ?? [], options), skipped: 0 })),

    listByScope: (scope, options) =>
      Effect.sync(() => ({ rows: bySpec(byScope.get(scope) ?? [], options), skipped: 0 })),

    getByRecords: (recordIds, options) =>
      Effect.sync(() => ({
        rows: bySpec([...new Set(recordIds)].flatMap((id) => byRecord.get(id) ?? []), options),
        skipped: 0
      })),

    forget: (recordIds) =>
      Effect.sync(() => {
        let removed = 0
        for (const id of new Set(recordIds)) {
          const rows = byRecord.get(id)
          if (rows === undefined) continue
          byRecord.delete(id)
          for (const row of rows) {
            removed++
            byIdentity.delete(rowIdentity(row))
            drop(byScope, row.scope, row)
            if (row.placementKey !== null) drop(byAddress, addressOf(row.scope, row.placementKey), row)
          }
        }
        return removed
      })
  }
}
