/**
 * When a text says the fact it states began (decision 0176): "Since March 2025 I live on Oak
 * Avenue", "I moved on 2024-05-03", "as of May 3, 2024", "two weeks ago", "last spring" — read
 * relative to when the text was said, so extraction can give a memory the `validFrom` its words
 * name rather than the time they were said.
 *
 * A date counts only where the text makes it a start: after "since", "as of", "from", "starting",
 * "beginning" or "effective"; after "in"/"on" in a clause with a verb of change ("moved", "changed",
 * "started", "joined"…); or as a past time on its own ("two weeks ago", "yesterday", "last year",
 * "last spring"). A date that is the value ("My birthday is March 3", "The deploy day is Tuesday")
 * is none. A date after the moment it was said is left out: a fact that starts later would leave its
 * slot with no current value until then (decision 0173). English only. Pure.
 *
 * @example
 * ```ts
 * import { StatedTime } from "@engram/core"
 * import * as DateTime from "effect/DateTime"
 *
 * const said = DateTime.unsafeMake("2026-01-15T12:00:00Z")
 * StatedTime.validFromIn("Since March 2025 the user lives on Oak Avenue", said)
 * // DateTime 2025-03-01T00:00:00.000Z
 * StatedTime.validFromIn("The deploy day is Tuesday", said) // undefined
 * ```
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as internal from "./internal/statedTime.js"

/**
 * The instant `text` says its fact began, relative to `said` (when it was said): UTC midnight of
 * the day it names, or of the first day of the month, season or year; `undefined` when the text
 * names no start, or only one after `said`. The first such date in the text wins.
 *
 * @since 0.1.0
 * @category parsing
 */
export const validFromIn = (text: string, said: DateTime.Utc): DateTime.Utc | undefined => {
  const millis = internal.validFromIn(text, DateTime.toEpochMillis(said))
  return millis === undefined ? undefined : DateTime.unsafeMake(millis)
}
