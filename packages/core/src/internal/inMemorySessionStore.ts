import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import { describeParseError } from "../MemoryWrite.js"
import type { Service as SessionStoreService, SessionId } from "../SessionStore.js"
import {
  claimable,
  decodeStoredExtractionRun,
  encodeRunForStore,
  type ExtractionClaim,
  validateClaimForStore
} from "./extractionRuns.js"
import {
  decodeStoredInterrupt,
  decodeStoredMessage,
  encodeInterrupt,
  encodeMessages,
  InvalidSessionData,
  sortSessionIds
} from "./sessionData.js"

/**
 * The in-memory session store. Messages are kept in encoded form and decoded on load, exactly as
 * a database backend would.
 */

/** Decodes each stored row, counting those that fail (kept out of the result, as a SQL store does). */
const decodeAll = <S, A, E>(
  rows: ReadonlyArray<S>,
  decode: (row: S) => Either.Either<A, E>
): { readonly values: ReadonlyArray<A>; readonly skipped: number } => {
  const values: Array<A> = []
  let skipped = 0
  for (const row of rows) {
    const decoded = decode(row)
    if (Either.isRight(decoded)) values.push(decoded.right)
    else skipped++
  }
  return { values, skipped }
}
export const make = (): SessionStoreService => {
  const sessions = new Map<SessionId, Array<unknown>>()
  const interrupts = new Map<SessionId, unknown>()
  const extractions = new Map<SessionId, Array<unknown>>()
  const claims = new Map<SessionId, ExtractionClaim>()
  return {
    append: (sessionId, messages) =>
      Effect.map(encodeMessages(messages), (encoded) => {
        const stored = sessions.get(sessionId) ?? []
        sessions.set(sessionId, [...stored, ...encoded])
      }),
    load: (sessionId) =>
      Effect.sync(() => {
        const { skipped, values } = decodeAll(sessions.get(sessionId) ?? [], decodeStoredMessage)
        return { messages: values, skipped }
      }),
    putInterrupt: (sessionId, interrupt) =>
      Either.match(encodeInterrupt(interrupt), {
        onLeft: (error) => Effect.fail(new InvalidSessionData({ problem: `interrupt: ${describeParseError(error)}` })),
        onRight: (encoded) => Effect.sync(() => void interrupts.set(sessionId, encoded))
      }),
    getInterrupt: (sessionId) =>
      Effect.sync(() => {
        const stored = interrupts.get(sessionId)
        return stored === undefined ? Option.none() : Either.getRight(decodeStoredInterrupt(stored))
      }),
    clearInterrupt: (sessionId) => Effect.sync(() => void interrupts.delete(sessionId)),
    listSessions: () =>
      Effect.sync(() =>
        sortSessionIds([
          ...Array.from(sessions.entries()).filter(([, messages]) => messages.length > 0).map(([id]) => id),
          ...interrupts.keys(),
          ...Array.from(extractions.entries()).filter(([, runs]) => runs.length > 0).map(([id]) => id)
        ])
      ),
    recordExtraction: (sessionId, run) =>
      Effect.map(encodeRunForStore(run), (encoded) => {
        extractions.set(sessionId, [...(extractions.get(sessionId) ?? []), encoded])
      }),
    loadExtractions: (sessionId) =>
      Effect.sync(() => {
        const { skipped, values } = decodeAll(extractions.get(sessionId) ?? [], decodeStoredExtractionRun)
        return { runs: values, skipped }
      }),
    claimExtraction: (sessionId, claim) =>
      Effect.map(validateClaimForStore(claim), (valid) => {
        const current = claims.get(sessionId)
        const stored = current === undefined
          ? undefined
          : { holder: current.holder, untilMillis: DateTime.toEpochMillis(current.until) }
        if (!claimable(stored, { holder: valid.holder, atMillis: DateTime.toEpochMillis(valid.at) })) {
          return { _tag: "Held", claim: current! } as const
        }
        claims.set(sessionId, valid)
        return { _tag: "Claimed" } as const
      }),
    releaseExtraction: (sessionId, holder) =>
      Effect.sync(() => {
        if (claims.get(sessionId)?.holder === holder) claims.delete(sessionId)
      })
  }
}
