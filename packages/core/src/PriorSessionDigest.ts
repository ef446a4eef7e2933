/**
 * Which earlier sessions a turn is reminded of: the prior-session digest.
 *
 * A digest entry is the summary of one earlier session, with that session's id and timestamp so
 * every line the model reads can be traced back. Selection is pure and keyword-based — no model
 * judges relevance:
 *
 * - `newest` (the default): the most recent prior sessions.
 * - `relevant`: only prior sessions whose newest summary shares at least one whole content token
 *   (by `SearchTokenizer.tokenize`, {@link STOPWORDS} left out) with the turn's query, best
 *   overlap first.
 * - `off`: no digest.
 *
 * A session is never its own prior session, and only its newest summary speaks for it: an older
 * summary that matches the query does not stand in for a newest one that does not. A runtime that
 * finds candidates through a store's keyword search instead of scanning summaries searches for the
 * query's {@link contentTokens} and applies the same {@link isRelevant} predicate (via
 * {@link selectDigest}), so both paths keep the same entries.
 *
 * A summary is stored as an `episode` record in the scope of the work it summarises (the scope the
 * session's agent reads, e.g. `project:billing`), tagged {@link sessionTag}; a request's digest
 * reads only the summaries of its own scopes. (A record in a `session:<id>` scope also counts as
 * that session's summary, for a request that reads that scope.)
 *
 * The chosen entries then compete for the projection budget, where the oldest, lowest-ranked
 * entries are shed first (see `ProjectedContext`).
 *
 * @since 0.1.0
 */
import * as DateTime from "effect/DateTime"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as FunctionWords from "./internal/functionWords.js"
import { onFirstCall } from "./internal/onFirstCall.js"
import { compareRaw } from "./MemoryQuery.js"
import { MemoryId, type MemoryRecord } from "./MemoryRecord.js"
import { distinctTokens, searchableText } from "./SearchTokenizer.js"
import { SessionId } from "./SessionStore.js"

/**
 * How the digest is chosen: `newest | relevant | off`.
 *
 * @since 0.1.0
 * @category models
 */
export const DigestMode = Schema.Literal("newest", "relevant", "off")
/** @since 0.1.0 @category models */
export type DigestMode = typeof DigestMode.Type

/**
 * The default digest mode.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DIGEST_MODE: DigestMode = "newest"

/**
 * How many entries a digest holds unless told otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_DIGEST_LIMIT = 3

const Summary = Schema.String.pipe(
  Schema.filter((s) => (s.trim().length === 0 ? "a session summary must not be blank" : undefined))
)

/**
 * A candidate: the summary of an earlier session. `at` is when the summary was written (the
 * session's end, or its last update). `memoryId` is set when the summary is stored as a memory
 * record. `matchText`, when set, is the text relevance is measured on instead of `summary` — a
 * record-backed summary passes everything the store indexes (label, content and tags) so the
 * predicate sees what the store's search saw.
 *
 * @since 0.1.0
 * @category models
 */
export class PriorSession extends Schema.Class<PriorSession>("PriorSession")({
  sessionId: SessionId,
  at: Schema.DateTimeUtc,
  summary: Summary,
  memoryId: Schema.optional(MemoryId),
  matchText: Schema.optional(Schema.String)
}) {}

/**
 * A chosen digest entry: a prior session plus its `rank`, the number of distinct query tokens its
 * text shares with the turn's query (0 when there is no query). Higher ranks are more relevant.
 *
 * @since 0.1.0
 * @category models
 */
export class DigestEntry extends Schema.Class<DigestEntry>("DigestEntry")({
  ...PriorSession.fields,
  rank: Schema.NonNegative
}) {}

/**
 * Words too common to make two texts related: English function words (articles, pronouns,
 * prepositions, auxiliaries, conjunctions — decision 0180), as written. A summary that
 * shares only these with the query is not relevant to it.
 *
 * @since 0.1.0
 * @category relevance
 */
export const FUNCTION_WORDS: ReadonlyArray<string> = FunctionWords.FUNCTION_WORDS

/**
 * {@link FUNCTION_WORDS} as the shared tokenizer folds them ("does" -> "doe"), so a stemmed query
 * token is recognised. Pinned rather than stemmed here: stemming at load would load the stemmers in
 * every process that imports core, including the ones that never stem (core's tests hold it equal to
 * `FUNCTION_WORDS` through `SearchTokenizer.tokenize`).
 *
 * @since 0.1.0
 * @category relevance
 */
export const STOPWORDS: ReadonlySet<string> = FunctionWords.STOPWORDS

/**
 * The distinct tokens of `text` that carry meaning: `SearchTokenizer.distinctTokens` without
 * {@link STOPWORDS}.
 *
 * @since 0.1.0
 * @category relevance
 */
export const contentTokens = (text: string): ReadonlyArray<string> =>
  distinctTokens(text).filter((token) => !STOPWORDS.has(token))

/**
 * How many distinct content tokens `text` shares with `query` (both through
 * `SearchTokenizer.tokenize`, {@link STOPWORDS} left out).
 *
 * @since 0.1.0
 * @category relevance
 */
export const relevance = (query: string, text: string): number => overlap(new Set(contentTokens(query)), text)

/**
 * True when `text` shares at least one content token with `query` — the match rule of a store's
 * keyword search (tokens OR-joined) for the query's {@link contentTokens}, so a store search hit
 * for those tokens and this predicate agree.
 *
 * @since 0.1.0
 * @category relevance
 */
export const isRelevant = (query: string, text: string): boolean => relevance(query, text) > 0

const overlap = (queryTokens: ReadonlySet<string>, text: string): number => {
  if (queryTokens.size === 0) return 0
  let shared = 0
  for (const token of distinctTokens(text)) if (queryTokens.has(token)) shared++
  return shared
}

/**
 * The text relevance is measured on for a candidate.
 *
 * @since 0.1.0
 * @category relevance
 */
export const matchTextOf = (session: PriorSession): string => session.matchText ?? session.summary

/**
 * Options for {@link selectDigest}.
 *
 * @since 0.1.0
 * @category models
 */
export interface DigestOptions {
  /** Default {@link DEFAULT_DIGEST_MODE}. */
  readonly mode?: DigestMode
  /** The session being served: never its own prior session. */
  readonly currentSessionId?: SessionId
  /** The turn's query (the newest operator input). Ranks entries; required for `relevant`. */
  readonly query?: string
  /** At most this many entries. Default {@link DEFAULT_DIGEST_LIMIT}. */
  readonly limit?: number
}

const byNewest = (a: PriorSession, b: PriorSession): number =>
  DateTime.toEpochMillis(b.at) - DateTime.toEpochMillis(a.at) || compareRaw(a.sessionId, b.sessionId)

/**
 * Chooses the digest entries for a turn from candidate prior sessions.
 *
 * The current session is excluded; a session that appears twice keeps its newest summary. `newest`
 * returns the newest sessions first; `relevant` keeps only sessions that share a token with the
 * query (none without a query), most shared tokens first, then newest; `off` returns nothing.
 * Ties are broken by session id, so the result never depends on the candidates' order.
 *
 * @since 0.1.0
 * @category selection
 */
export const selectDigest = (
  candidates: ReadonlyArray<PriorSession>,
  options: DigestOptions = {}
): ReadonlyArray<DigestEntry> => {
  const mode = options.mode ?? DEFAULT_DIGEST_MODE
  const limit = Math.max(0, Math.floor(options.limit ?? DEFAULT_DIGEST_LIMIT))
  if (mode === "off" || limit === 0) return []
  const newestPerSession = new Map<SessionId, PriorSession>()
  for (const candidate of candidates) {
    if (candidate.sessionId === options.currentSessionId) continue
    const held = newestPerSession.get(candidate.sessionId)
    if (held === undefined || byNewest(candidate, held) < 0) newestPerSession.set(candidate.sessionId, candidate)
  }
  const queryTokens = new Set(contentTokens(options.query ?? ""))
  const ranked = [...newestPerSession.values()].map((session) =>
    new DigestEntry({ ...session, rank: overlap(queryTokens, matchTextOf(session)) }, { disableValidation: true })
  )
  const chosen = mode === "relevant"
    ? ranked.filter((entry) => entry.rank > 0).sort((a, b) => b.rank - a.rank || byNewest(a, b))
    : ranked.sort(byNewest)
  return chosen.slice(0, limit)
}

const SESSION_PREFIX = "session:"
const isSessionId = onFirstCall(() => Schema.is(SessionId))

/**
 * The tag that marks a memory record as the summary of session `sessionId`: `session:<id>`. (A tag
 * holds at most 64 characters, so a summarised session id has at most 56.)
 *
 * @since 0.1.0
 * @category constructors
 */
export const sessionTag = (sessionId: SessionId): string => `${SESSION_PREFIX}${sessionId}`

/** The session a record summarises: its {@link sessionTag}, else its `session:<id>` scope. */
const summarisedSession = (record: MemoryRecord): string | undefined => {
  const tagged = record.tags.find((tag) => tag.startsWith(SESSION_PREFIX))
  const id = tagged !== undefined
    ? tagged.slice(SESSION_PREFIX.length)
    : record.scope.startsWith(SESSION_PREFIX)
    ? record.scope.slice(SESSION_PREFIX.length)
    : undefined
  return id !== undefined && isSessionId(id) ? id : undefined
}

/**
 * Reads a session summary stored as a memory record: the session comes from the record's
 * {@link sessionTag} (or, failing that, its `session:<id>` scope), `at` from its creation, the
 * summary from its content, and relevance is measured on what the store indexes — the session tag
 * aside. `None` for a record that names no session (an ordinary `episode`).
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromRecord = (record: MemoryRecord): Option.Option<PriorSession> => {
  const sessionId = summarisedSession(record)
  if (sessionId === undefined) return Option.none()
  return Option.some(
    new PriorSession(
      {
        sessionId,
        at: record.createdAt,
        summary: record.content,
        memoryId: record.id,
        matchText: searchableText({ ...record, tags: record.tags.filter((tag) => !tag.startsWith(SESSION_PREFIX)) })
      },
      { disableValidation: true }
    )
  )
}
