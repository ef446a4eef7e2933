/**
 * Provenance to the turn: which session, and which of its turns, a memory was drawn from.
 *
 * Records are create-only and carry their provenance in tags stamped at creation, so every
 * backend keeps it with no new column and every reader (explain, `engram memory show`, the
 * server's JSON) reads it the same way: `from-session:<id>` and `from-turns:<first>-<last>` (or
 * `from-turns:<n>` for one turn). A session id too long for a tag (tags hold 64 characters) is
 * named by `from-session:sha256:<first 16 hex digits of its SHA-256>`; {@link matchesSession}
 * still answers whether a record came from a given session.
 *
 * @since 0.1.0
 */
import * as Sha256 from "./Sha256.js"

const SESSION = "from-session:"
const TURNS = "from-turns:"
const HASHED = "sha256:"
const MAX_TAG = 64

/**
 * Where a memory came from: the session (its id, or the hash that names a long one) and the
 * turn numbers (1-based, as the native loop counts them) it rests on.
 *
 * @since 0.1.0
 * @category models
 */
export interface TurnSource {
  readonly session: string
  readonly hashed: boolean
  readonly turns: { readonly first: number; readonly last: number } | undefined
}

const sessionTag = (sessionId: string): string =>
  SESSION.length + sessionId.length <= MAX_TAG
    ? `${SESSION}${sessionId}`
    : `${SESSION}${HASHED}${Sha256.hex(sessionId).slice(0, 16)}`

/**
 * The tags that record a memory's source turns: the session's tag, and the turns' when there
 * are any (their range, smallest to largest).
 *
 * @since 0.1.0
 * @category constructors
 */
export const tags = (sessionId: string, turns: ReadonlyArray<number>): ReadonlyArray<string> => {
  const valid = turns.filter((t) => Number.isSafeInteger(t) && t > 0)
  if (valid.length === 0) return [sessionTag(sessionId)]
  const first = Math.min(...valid)
  const last = Math.max(...valid)
  return [sessionTag(sessionId), first === last ? `${TURNS}${first}` : `${TURNS}${first}-${last}`]
}

/**
 * A record's source turns, read from its tags; `undefined` when it names no session.
 *
 * @since 0.1.0
 * @category accessors
 */
export const of = (record: { readonly tags: ReadonlyArray<string> }): TurnSource | undefined => {
  const session = record.tags.find((tag) => tag.startsWith(SESSION))
  if (session === undefined) return undefined
  const id = session.slice(SESSION.length)
  const range = record.tags.find((tag) => tag.startsWith(TURNS))
  const match = range === undefined ? null : /^(\d+)(?:-(\d+))?$/.exec(range.slice(TURNS.length))
  const turns = match === null
    ? undefined
    : { first: Number(match[1]), last: Number(match[2] ?? match[1]) }
  return id.startsWith(HASHED)
    ? { session: id.slice(HASHED.length), hashed: true, turns }
    : { session: id, hashed: false, turns }
}

/**
 * True when a record was drawn from the session `sessionId`.
 *
 * @since 0.1.0
 * @category predicates
 */
export const matchesSession = (record: { readonly tags: ReadonlyArray<string> }, sessionId: string): boolean =>
  record.tags.includes(sessionTag(sessionId))

/**
 * A record's source turns in words — `session s-1, turns 2-3` — or `undefined` when it has none.
 *
 * @since 0.1.0
 * @category rendering
 */
export const describe = (record: { readonly tags: ReadonlyArray<string> }): string | undefined => {
  const source = of(record)
  if (source === undefined) return undefined
  const session = source.hashed ? `session sha256:${source.session}…` : `session ${source.session}`
  if (source.turns === undefined) return session
  return source.turns.first === source.turns.last
    ? `${session}, turn ${source.turns.first}`
    : `${session}, turns ${source.turns.first}-${source.turns.last}`
}
