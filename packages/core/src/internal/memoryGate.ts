/**
 * The body of `MemoryGate`.
 *
 * @internal
 */
import * as DateTime from "effect/DateTime"
import { MODEL_FLAG_TAG, screen } from "../InstructionScreen.js"
import type { Admission, AdmitOptions } from "../MemoryGate.js"
import type { MemoryRecord } from "../MemoryRecord.js"
import { safeBlock, safeLine } from "../TextSafety.js"
import * as BoundedCache from "./boundedCache.js"

/** Characters of memory text whose screen verdicts a process remembers (in two generations; `BoundedCache`). */
const SCREEN_CACHE_CHARS = 4_000_000
const verdicts = BoundedCache.make(SCREEN_CACHE_CHARS)

export const flaggedText = (text: string): boolean => {
  let verdict = verdicts.get(text)
  if (verdict === undefined) verdicts.set(text, verdict = screen(text).flagged ? 1 : 0)
  return verdict === 1
}

export const isHeld = (record: Pick<MemoryRecord, "content" | "label" | "reviewState" | "tags">): boolean =>
  record.reviewState !== "confirmed" &&
  (flaggedText(record.content) || (record.label !== undefined && flaggedText(record.label)) ||
    record.tags.some((tag) => tag === MODEL_FLAG_TAG || flaggedText(tag)))

const oneLine = (text: string): string => safeLine(text).trim()

export const admit = (record: MemoryRecord, options: AdmitOptions = {}): Admission => {
  if (record.reviewState === "rejected") return { _tag: "Withheld", record, reason: "rejected" }
  const history = options.purpose === "history"
  if (!history && record.invalidatedAt !== undefined) return { _tag: "Withheld", record, reason: "superseded" }
  if (
    !history && options.now !== undefined && record.expiresAt !== undefined &&
    DateTime.toEpochMillis(record.expiresAt) <= DateTime.toEpochMillis(options.now)
  ) return { _tag: "Withheld", record, reason: "expired" }
  if (isHeld(record)) {
    // The label is named only when it is not itself the payload.
    const label = record.label !== undefined && !flaggedText(record.label) ? oneLine(record.label) : undefined
    return { _tag: "Held", record, label }
  }
  return {
    _tag: "Shown",
    record,
    content: options.form === "block" ? safeBlock(record.content) : oneLine(record.content),
    label: record.label === undefined ? undefined : oneLine(record.label),
    unconfirmed: record.reviewState !== "confirmed"
  }
}
