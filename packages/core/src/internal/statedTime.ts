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
