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
 * slot with no current value until then (decision 0173). An end the text states ("until Monday",
 * "through 2026-01-10") is `validToIn`, and `boundsIn` gives both as a record takes them (decision
 * 0178). English only. Pure.
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

/**
 * The instant `text` says its fact stops holding, relative to `said` (decision 0178): after
 * "until"/"till" the start of the day, month or year it names ("The office is closed until Monday"
 * ends as Monday begins); after "through", or for "the end of …", the start of the one after
 * ("through 2026-01-10" ends as the 11th begins, "till the end of March" as April begins). A date
 * without a year is the next one after `said`; an end at or before `said` counts only when the text
 * writes its year ("until 2024-05-03 the user lived in Oslo"). `undefined` when the text names no end.
 *
 * @since 0.1.0
 * @category parsing
 */
export const validToIn = (text: string, said: DateTime.Utc): DateTime.Utc | undefined => {
  const millis = internal.validToIn(text, DateTime.toEpochMillis(said))
  return millis === undefined ? undefined : DateTime.unsafeMake(millis)
}

/**
 * The world time a text states, as a record takes it (decision 0178): `validFrom` is the start the
 * text names ({@link validFromIn}), else `defaultFrom` (extraction passes when it was said);
 * `validTo` is the end it names ({@link validToIn}). `validFrom` is always before `validTo`: an end
 * not after the stated start is dropped, and a default start not before the stated end is left
 * out ("until 2024 the user lived in Oslo", said in 2026, has an open start).
 *
 * @example
 * ```ts
 * import { StatedTime } from "@engram/core"
 * import * as DateTime from "effect/DateTime"
 *
 * const said = DateTime.unsafeMake("2026-01-15T12:00:00Z")
 * StatedTime.boundsIn("The office is closed until Monday", said, said)
 * // { validFrom: 2026-01-15T12:00:00Z, validTo: 2026-01-19T00:00:00Z }
 * ```
 *
 * @since 0.1.0
 * @category parsing
 */
export const boundsIn = (
  text: string,
  said: DateTime.Utc,
  defaultFrom?: DateTime.Utc | undefined
): { readonly validFrom?: DateTime.Utc; readonly validTo?: DateTime.Utc } => {
  const bounds = internal.boundsIn(
    text,
    DateTime.toEpochMillis(said),
    defaultFrom === undefined ? undefined : DateTime.toEpochMillis(defaultFrom)
  )
  return {
    ...(bounds.validFrom !== undefined ? { validFrom: DateTime.unsafeMake(bounds.validFrom) } : {}),
    ...(bounds.validTo !== undefined ? { validTo: DateTime.unsafeMake(bounds.validTo) } : {})
  }
}
