/**
 * The body of `StatedTime`: English date expressions read by chrono-node (a maintained natural
 * language date parser) relative to when the text was said, kept only where the text says a fact
 * *starts* then, plus the two forms chrono does not read (a bare year, a season).
 */
import { parse as parseDates, type ParsedResult } from "chrono-node"

const DAY_MS = 86_400_000

/** Words right before a date that make it the start of what the sentence states. */
const START_MARKER =
  /\b(?:since|as of|from|starting(?: on| in| from)?|beginning(?: on| in| from)?|effective(?: on| from)?)(?:\s+(?:the|last))?\s*$/i

/** "in"/"on" right before a date, which start the fact only after a verb of change. */
const IN_OR_ON = /\b(?:in|on|at the (?:start|beginning) of)(?:\s+(?:the|last))?\s*$/i

/** Verbs of change: "I moved to Oak Avenue in March", "on 2024-05-03 my name changed". */
const CHANGE_VERB =
  /\b(?:moved|move|changed|change|switched|switch|started|start|began|begin|became|become|joined|join|left|married|divorced|got|bought|adopted|relocated|renamed|promoted|hired|retired|graduated|took over|set up|opened|closed|founded|launched)\b/i

/** A relative expression that names a past time on its own ("two weeks ago", "yesterday", "last year"). */
const PAST_ANCHOR = /^(?:.*\bago|yesterday|last (?:week|month|year))$/i

const SEASON_MONTH: Readonly<Record<string, number>> = { spring: 2, summer: 5, autumn: 8, fall: 8, winter: 11 }

/** A season or a bare year chrono does not read: "last spring", "the summer of 2024", "since 2023". */
const OWN_FORMS =
  /\b(?:(last|this) (spring|summer|autumn|fall|winter)|(?:the )?(spring|summer|autumn|fall|winter)(?: of)? ((?:19|20)\d\d)|((?:19|20)\d\d))\b/gi

interface Found {
  readonly index: number
  readonly millis: number
}

/** The start (UTC midnight) of the day, month or year a chrono result names. */
const startOf = (result: ParsedResult, said: number): number => {
  const c = result.start
  const year = c.get("year") ?? new Date(said).getUTCFullYear()
  const month = c.isCertain("month") || c.isCertain("day") || !c.isCertain("year") ? (c.get("month") ?? 1) : 1
  const day = c.isCertain("day") || c.isCertain("weekday") || !c.isCertain("month") ? (c.get("day") ?? 1) : 1
  let millis = Date.UTC(year, month - 1, day)
  // A month or day without a year, later than when it was said, is the last one before it:
  // "since the 3rd of May", said in January, is last May.
  if (!c.isCertain("year") && millis > said && (c.isCertain("month") || c.isCertain("day"))) {
    millis = Date.UTC(year - 1, month - 1, day)
  }
  return millis
}

/** The start of the season `at` falls in (meteorological: March, June, September, December). */
const currentSeasonStart = (at: number): number => {
  const date = new Date(at)
  const month = date.getUTCMonth()
  return month < 2
    ? Date.UTC(date.getUTCFullYear() - 1, 11, 1)
    : Date.UTC(date.getUTCFullYear(), month - ((month - 2) % 3), 1)
}

/** The latest start of `season` before `limit` (at or before it unless `strictly`). */
const latestStart = (season: string, limit: number, strictly: boolean): number => {
  const month = SEASON_MONTH[season]!
  const year = new Date(limit).getUTCFullYear()
  const candidate = Date.UTC(year, month, 1)
  return candidate > limit || (strictly && candidate === limit) ? Date.UTC(year - 1, month, 1) : candidate
}

/** "last spring": the spring before the season `said` falls in; "this spring": the latest spring begun by `said`. */
const seasonStart = (which: string, season: string, said: number): number =>
  which === "last" ? latestStart(season, currentSeasonStart(said), true) : latestStart(season, said, false)

const introduces = (text: string, index: number): boolean => {
  const before = text.slice(0, index)
  if (START_MARKER.test(before)) return true
  if (!IN_OR_ON.test(before)) return false
  // The verb of change must be in the same sentence as the date, before or after it.
  const start = before.split(/[.;!?]/).at(-1) ?? before
  const rest = text.slice(index).split(/[.;!?]/)[0] ?? ""
  return CHANGE_VERB.test(start + rest)
}

const ownForms = (text: string, said: number): ReadonlyArray<Found> => {
  const found: Array<Found> = []
  for (const match of text.matchAll(OWN_FORMS)) {
    const [, which, relative, season, seasonYear, year] = match
    const index = match.index
    if (which !== undefined && relative !== undefined) {
      // "last spring" names a past time on its own, like "two weeks ago".
      found.push({
        index: introducedOrAnchor(text, index, true),
        millis: seasonStart(which.toLowerCase(), relative.toLowerCase(), said)
      })
    } else if (season !== undefined && seasonYear !== undefined) {
      found.push({
        index: introducedOrAnchor(text, index, false),
        millis: Date.UTC(Number(seasonYear), SEASON_MONTH[season.toLowerCase()]!, 1)
      })
    } else if (year !== undefined && introduces(text, index)) {
      found.push({ index, millis: Date.UTC(Number(year), 0, 1) })
    }
  }
  return found.filter((f) => f.index >= 0)
}

/** `index` when the expression at it is introduced as a start (or names a past time on its own); -1 otherwise. */
const introducedOrAnchor = (text: string, index: number, anchor: boolean): number =>
  anchor || introduces(text, index) ? index : -1

/**
 * When `text` says the fact it states started, read relative to `said` (epoch ms, when the text
 * was said), as epoch ms at UTC midnight of the day (or the first day of the month, season or year)
 * it names; `undefined` when it names none, or only one after `said`.
 */
export const validFromIn = (text: string, said: number): number | undefined => {
  const found: Array<Found> = []
  const results = parseDates(text, { instant: new Date(said), timezone: 0 }, { forwardDate: false })
  for (const result of results) {
    if (result.start.isCertain("hour") && !result.start.isCertain("day") && !result.start.isCertain("month")) {
      continue // a time of day ("at 10") is a value, never when a fact started
    }
    if (introduces(text, result.index) || PAST_ANCHOR.test(result.text.trim())) {
      found.push({ index: result.index, millis: startOf(result, said) })
    }
  }
  found.push(...ownForms(text, said))
  const first = found.filter((f) => f.millis <= said).sort((a, b) => a.index - b.index)[0]
  return first === undefined ? undefined : Math.floor(first.millis / DAY_MS) * DAY_MS
}

/**
 * Words right before a date that make it the end of what the sentence states (decision 0178):
 * "until", "till", "through", "ending", "expires"… — "through" counts the period it names in.
 */
const END_MARKER_ANYWHERE =
  /\b(?:until|till|til|through|thru|ending(?: on| in)?|ends(?: on| in)?|expires?(?: on| in)?|expiring(?: on| in)?)\s+/gi

/** An end marker that keeps the named day, month or year in: "through 2026-01-10" ends on the 11th. */
const INCLUSIVE_MARKER = /^(?:through|thru)\b/i

/** The text of a date that writes its year: a past end counts only when the text says which one. */
const WRITTEN_YEAR = /\b(?:19|20)\d\d\b/

/** The first instant of the day, month or year a chrono component names, and of the one after it. */
const periodOf = (c: ParsedResult["start"], said: number): { readonly start: number; readonly next: number } => {
  const year = c.get("year") ?? new Date(said).getUTCFullYear()
  if (c.isCertain("day") || c.isCertain("weekday") || !c.isCertain("month") && !c.isCertain("year")) {
    const start = Date.UTC(year, (c.get("month") ?? 1) - 1, c.get("day") ?? 1)
    return { start, next: start + DAY_MS }
  }
  if (c.isCertain("month")) {
    const month = (c.get("month") ?? 1) - 1
    return { start: Date.UTC(year, month, 1), next: Date.UTC(year, month + 1, 1) }
  }
  return { start: Date.UTC(year, 0, 1), next: Date.UTC(year + 1, 0, 1) }
}

/**
 * When `text` says the fact it states stops holding, read relative to `said` (epoch ms): after
 * "until"/"till" the start of the day, month or year it names ("until Monday" ends as Monday
 * begins); after "through", or for "the end of …", the start of the one after ("through
 * 2026-01-10" ends as the 11th begins). A date without a year is the next one after `said`; an
 * end at or before `said` only when the text writes its year ("until 2024-05-03 I lived in Oslo").
 * A range after a start marker ("from March to May 2025") ends after its last period.
 */
export const validToIn = (text: string, said: number): number | undefined => {
  const found: Array<Found> = []
  const instant = { instant: new Date(said), timezone: 0 }
  // A range after a start marker: "from March to May 2025" ends after May, "… until June 10" as it begins.
  for (const result of parseDates(text, instant, { forwardDate: true })) {
    if (result.end === null || result.end === undefined || !START_MARKER.test(text.slice(0, result.index))) continue
    const period = periodOf(result.end, said)
    found.push({
      index: result.index,
      millis: /\b(?:until|till|til)\b/i.test(result.text) ? period.start : period.next
    })
  }
  // Each end marker, and the date right after it (read on its own: chrono reads "lasts until March"
  // as "last s…", so the words before the marker are left out).
  for (const marker of text.matchAll(END_MARKER_ANYWHERE)) {
    const at = marker.index + marker[0].length
    const rest = text.slice(at)
    const inclusive = INCLUSIVE_MARKER.test(marker[0])
    const [result] = parseDates(rest, instant, { forwardDate: true })
    if (result !== undefined && /^(?:the\s+)?$/i.test(rest.slice(0, result.index))) {
      const c = result.start
      if (c.isCertain("hour") && !c.isCertain("day") && !c.isCertain("month") && !c.isCertain("weekday")) continue
      const period = periodOf(c, said)
      let millis = inclusive || /^end of\b/i.test(result.text) ? period.next : period.start
      if (millis <= said && !WRITTEN_YEAR.test(result.text)) {
        // A weekday or a date without a year is the next one ("until Monday", said on a Monday).
        if (c.isCertain("weekday") && !c.isCertain("day")) millis += 7 * DAY_MS
        else if ((c.isCertain("month") || c.isCertain("day")) && !c.isCertain("year")) {
          const next = new Date(millis)
          millis = Date.UTC(next.getUTCFullYear() + 1, next.getUTCMonth(), next.getUTCDate())
        }
      }
      if (millis > said || WRITTEN_YEAR.test(result.text)) found.push({ index: at + result.index, millis })
      continue
    }
    // A bare year chrono does not read: "until 2027", "through 2025".
    const year = /^\s*((?:19|20)\d\d)\b(?!-)/.exec(rest)?.[1]
    if (year !== undefined) {
      found.push({ index: at, millis: Date.UTC(inclusive ? Number(year) + 1 : Number(year), 0, 1) })
    }
  }
  return found.sort((a, b) => a.index - b.index)[0]?.millis
}

/**
 * The bounds `text` states, read against `said`, with `defaultFrom` as the start when the text
 * names none: an end not after the start is dropped (the text's own start wins), and a default
 * start not before the stated end is left out (the end the text states wins). So `validFrom` is
 * always before `validTo` when both are there.
 */
export const boundsIn = (
  text: string,
  said: number,
  defaultFrom: number | undefined
): { readonly validFrom?: number; readonly validTo?: number } => {
  const statedFrom = validFromIn(text, said)
  let validTo = validToIn(text, said)
  if (statedFrom !== undefined && validTo !== undefined && validTo <= statedFrom) validTo = undefined
  const validFrom = statedFrom ??
    (defaultFrom !== undefined && (validTo === undefined || defaultFrom < validTo) ? defaultFrom : undefined)
  return {
    ...(validFrom !== undefined ? { validFrom } : {}),
    ...(validTo !== undefined ? { validTo } : {})
  }
}
