/**
 * What PostgreSQL cannot store in a text column: U+0000, and an unpaired surrogate (it cannot be
 * encoded as UTF-8 and would come back as U+FFFD). Every PostgreSQL store refuses such text up
 * front, naming the field, instead of failing in SQL or silently changing what was given.
 */

const unstorable = /\u0000|[\uD800-\uDFFF]/u

/** Why a text is refused, after the field's name. */
export const UNSTORABLE = "contains U+0000 or an unpaired surrogate, which PostgreSQL cannot store"

/** The name of the first field whose text PostgreSQL cannot store, if any (absent fields pass). */
export const unstorableField = (
  fields: ReadonlyArray<readonly [name: string, text: string | null | undefined]>
): string | undefined => {
  for (const [name, text] of fields) {
    if (text !== null && text !== undefined && unstorable.test(text)) return name
  }
  return undefined
}

/** Why PostgreSQL cannot store a session id, when it cannot (`SessionRows`' and `TelemetryRows`' option). */
export const sessionIdProblem = (sessionId: string): string | undefined =>
  unstorable.test(sessionId) ? UNSTORABLE : undefined
