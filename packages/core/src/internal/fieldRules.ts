/**
 * Hand-written checks of the record's field rules, for the hot paths (reading rows, decoding
 * write inputs). Each accepts a subset of what the schemas in `MemoryRecord` accept — the
 * patterns and limits are the schemas' — and callers send whatever a check refuses to the schema,
 * which keeps the last word and names the problem. `Schema.is` / `Schema.decode` over every field
 * costs about as much as the database work of a row; these cost a few regular-expression tests.
 * Property tests (`MemoryRow.test.ts`, `MemoryWriteInput.test.ts`) check that both paths agree.
 */
import * as DateTime from "effect/DateTime"
import {
  DeliveryPolicy,
  MAX_CORROBORATION_SESSIONS,
  MemoryKind,
  ReviewState,
  SourceType,
  TAG_MAX_CHARS,
  textProblem
} from "../MemoryRecord.js"

const memoryIdPattern = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/
const scopePattern = /^(global|(project|session):[^\s\p{Cc}]{1,200})$/u
const sessionPattern = /^[^\s\p{Cc}]{1,200}$/u
const controlCharacter = /[\p{Cc}\u2028\u2029]/u
const kinds: ReadonlySet<unknown> = new Set(MemoryKind.literals)
const sourceTypes: ReadonlySet<unknown> = new Set(SourceType.literals)
const deliveryPolicies: ReadonlySet<unknown> = new Set(DeliveryPolicy.literals)
const reviewStates: ReadonlySet<unknown> = new Set(ReviewState.literals)

const isWellFormed = (s: string): boolean => textProblem(s) === undefined
const isOneLine = (s: string): boolean => !controlCharacter.test(s) && isWellFormed(s)

export const isKind = (value: unknown): boolean => kinds.has(value)
export const isSourceType = (value: unknown): boolean => sourceTypes.has(value)
export const isDeliveryPolicy = (value: unknown): boolean => deliveryPolicies.has(value)
export const isReviewState = (value: unknown): boolean => reviewStates.has(value)
export const isMemoryId = (value: unknown): boolean => typeof value === "string" && memoryIdPattern.test(value)
export const isContent = (value: unknown): boolean =>
  typeof value === "string" && value.trim().length > 0 && isWellFormed(value)
export const isScope = (value: unknown): boolean =>
  typeof value === "string" && scopePattern.test(value) && isWellFormed(value)
export const isTag = (value: unknown): boolean =>
  typeof value === "string" && value.length >= 1 && value.length <= TAG_MAX_CHARS && isOneLine(value)
export const isTags = (value: unknown): boolean => Array.isArray(value) && value.every(isTag)
export const isLabel = (value: unknown): boolean => isTag(value) && (value as string).trim().length > 0
export const isOneLineText = (value: unknown): boolean =>
  typeof value === "string" && value.length >= 1 && isOneLine(value)
export const isPosition = (thread: unknown, turn: unknown): boolean =>
  typeof thread === "string" && thread.length >= 1 && thread.length <= 200 && isOneLine(thread) &&
  typeof turn === "number" && Number.isInteger(turn) && turn >= 0 && turn <= 2_147_483_647
export const isFreeText = (value: unknown): boolean => typeof value === "string" && isWellFormed(value)
export const isCorroboratingSession = (value: unknown): boolean =>
  typeof value === "string" && sessionPattern.test(value) && isWellFormed(value)
export const isCorroboration = (value: unknown): boolean => {
  if (typeof value !== "object" || value === null) return false
  const { count, lastAt, sessions } = value as { count?: unknown; sessions?: unknown; lastAt?: unknown }
  return typeof count === "number" && Number.isInteger(count) && count >= 1 && count <= 2_147_483_647 &&
    Array.isArray(sessions) && sessions.length <= MAX_CORROBORATION_SESSIONS &&
    sessions.every(isCorroboratingSession) && DateTime.isDateTime(lastAt) && DateTime.isUtc(lastAt)
}
