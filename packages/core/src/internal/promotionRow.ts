/**
 * The promotion row model and its checks, shared by `PromotionStore` (which documents and exports
 * them) and the in-memory store, so neither imports values from the other.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { PromotionTier } from "../Background.js"
import { MemoryId, Scope } from "../MemoryRecord.js"
import { describeParseError } from "../MemoryWrite.js"
import { DuplicatePromotion, InvalidPromotionRow } from "../PromotionStoreError.js"
import { KeySource, placementKey, PromotionDecision } from "../Routing.js"
import * as Rules from "./fieldRules.js"
import { isPlacement } from "./placementRule.js"

export const PromotionRow = Schema.Struct({
  recordId: MemoryId,
  scope: Scope,
  ...PromotionDecision.fields
}).annotations({ identifier: "PromotionRow" })
export type PromotionRow = typeof PromotionRow.Type

const compareRaw = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

export const compareRows = (a: PromotionRow, b: PromotionRow): number =>
  compareRaw(a.recordId, b.recordId) || compareRaw(a.specKey, b.specKey)

export const rowIdentity = (row: Pick<PromotionRow, "recordId" | "specKey">): string =>
  JSON.stringify([row.recordId, row.specKey])

const validateFields = Schema.validateEither(PromotionRow)
const keySources: ReadonlySet<unknown> = new Set(KeySource.literals)
const tiers: ReadonlySet<unknown> = new Set(PromotionTier.literals)

// The schema's field rules, hand-written for the rows that pass them (nearly all: a batch write
// commits one row per record); whatever they refuse goes to the schema, which names the problem.
const passesFieldRules = (row: unknown): row is PromotionRow => {
  if (typeof row !== "object" || row === null) return false
  const r = row as { readonly [K in keyof PromotionRow]?: unknown }
  return Rules.isMemoryId(r.recordId) && Rules.isScope(r.scope) &&
    (r.placement === null || isPlacement(r.placement)) &&
    (r.placementKey === null || typeof r.placementKey === "string") &&
    (r.keySource === null || keySources.has(r.keySource)) &&
    typeof r.specKey === "string" && typeof r.specVersion === "string" &&
    DateTime.isDateTime(r.promotedAt) && DateTime.isUtc(r.promotedAt) &&
    (r.tier === null || tiers.has(r.tier))
}

const validRow = (row: unknown): Either.Either<PromotionRow, string> =>
  passesFieldRules(row) ? Either.right(row) : Either.mapLeft(validateFields(row), describeParseError)

export const rowProblem = (row: unknown): string | undefined => {
  const checked = validRow(row)
  if (Either.isLeft(checked)) return checked.left
  const valid = checked.right
  if (valid.specKey.length === 0) return "specKey must not be empty"
  if (valid.specVersion.length === 0) return "specVersion must not be empty"
  if (valid.placement === null) {
    if (valid.placementKey !== null) return "a declined row (no placement) has no placementKey"
    if (valid.keySource !== null) return "a declined row (no placement) has no keySource"
    if (valid.tier !== null) return "a declined row (no placement) has no tier"
    return undefined
  }
  const expected = placementKey(valid.placement)
  if (valid.placementKey !== expected) {
    return `placementKey ${JSON.stringify(valid.placementKey)} does not match its placement (expected ${
      JSON.stringify(expected)
    })`
  }
  if (valid.keySource === null) return "a placed row has a keySource"
  return undefined
}

export const validateBatch = (
  rows: ReadonlyArray<PromotionRow>
): Either.Either<ReadonlyArray<PromotionRow>, InvalidPromotionRow | DuplicatePromotion> => {
  const seen = new Set<string>()
  for (let index = 0; index < rows.length; index++) {
    const row = rows[index]!
    const problem = rowProblem(row)
    if (problem !== undefined) return Either.left(new InvalidPromotionRow({ index, problem }))
    const identity = rowIdentity(row)
    if (seen.has(identity)) return Either.left(new DuplicatePromotion({ recordId: row.recordId, specKey: row.specKey }))
    seen.add(identity)
  }
  return Either.right(rows)
}
