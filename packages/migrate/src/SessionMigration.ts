/**
 * Copying sessions and the injection log from one backend to another — the companion of
 * `StoreMigration`, which copies memory records and promotion rows.
 *
 * The copy walks every session either store lists (`listSessions`), in one order. Per session it
 * compares what the target already holds with the source and adds only what is missing:
 *
 * - messages: when the target's history is a prefix of the source's, the rest is appended, in
 *   batches (each atomic), so an interrupted copy resumes where it stopped;
 * - the pending interrupt: written when the target has none or another one (an interrupt is the
 *   session's current state, and the source's is the one that counts);
 * - injection rows: when the target's rows are a prefix of the source's, the rest is appended;
 * - the extraction ledger (one record per extraction run): when the target's runs are a prefix of
 *   the source's, the rest is recorded, so a migrated store continues extraction after the last
 *   turn the source extracted, spends the session's token budget from where the source left it,
 *   and never re-extracts a turn. A session whose ledger is all it holds (an ACP session's) is
 *   copied too: `listSessions` names it.
 *
 * Nothing in the target is ever deleted or rewritten: a target whose history is not a prefix of
 * the source's is left alone, and verification reports it. At the end both sides are digested —
 * counts and a SHA-256 over every session's encoded messages, interrupt, injection rows and
 * extraction runs — and
 * the copy fails with {@link SessionMigrationMismatch} unless they agree.
 *
 * @since 0.1.0
 */
import * as ErrorClass from "@engram/core/ErrorClass"
import { InjectionLogRow } from "@engram/core/InjectionLog"
import {
  compareSessionIds,
  ExtractionRun,
  type InvalidSessionData,
  PendingInterrupt,
  type Service as SessionStoreService,
  type SessionId,
  SessionMessage,
  type SessionStoreFailure
} from "@engram/core/SessionStore"
import * as Sha256 from "@engram/core/Sha256"
import type {
  InvalidTelemetryRow,
  Service as TelemetryStoreService,
  TelemetryStoreFailure
} from "@engram/core/TelemetryStore"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"

/**
 * The stores a copy reads from and writes to. Either pair may be left out (a source without
 * sessions, say); the digests then count nothing for it.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionStores {
  readonly sessions?: { readonly from: SessionStoreService; readonly to: SessionStoreService } | undefined
  readonly telemetry?: { readonly from: TelemetryStoreService; readonly to: TelemetryStoreService } | undefined
}

/**
 * The sessions' fingerprint: how many sessions, messages, pending interrupts, injection rows and
 * extraction runs a store holds, how many stored rows it could not read, and a hex SHA-256 over the readable ones'
 * encoded forms, session by session.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionDigest {
  readonly sessions: number
  readonly messages: number
  readonly interrupts: number
  readonly injections: number
  readonly extractions: number
  readonly unreadable: number
  readonly checksum: string
}

/**
 * Where a copy stands: reported after the scan, after every session and before verification.
 * `total` and `done` count sessions; the other figures count what this run wrote.
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionMigrationProgress {
  readonly phase: "scanned" | "copying" | "verifying"
  readonly total: number
  readonly done: number
  readonly messagesCopied: number
  readonly interruptsCopied: number
  readonly injectionsCopied: number
  readonly extractionsCopied: number
}

/**
 * What a finished copy did, with both sides' digests (equal, or the copy would have failed).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionMigrationReport {
  readonly messagesCopied: number
  readonly interruptsCopied: number
  readonly injectionsCopied: number
  readonly extractionsCopied: number
  readonly source: SessionDigest
  readonly target: SessionDigest
}

/** What each side of a session copy holds: its counts and checksum. */
const CopyCounts = Schema.Struct({
  sessions: Schema.Number,
  messages: Schema.Number,
  interrupts: Schema.Number,
  injections: Schema.Number,
  extractions: Schema.Number,
  checksum: Schema.String
})

/**
 * After copying, the target's sessions differ from the source's: the target held other sessions
 * or history, or the source changed during the copy. Nothing was deleted.
 *
 * @since 0.1.0
 * @category errors
 */
export class SessionMigrationMismatch extends ErrorClass.TaggedError<SessionMigrationMismatch>()(
  "SessionMigrationMismatch",
  {
    source: CopyCounts,
    target: CopyCounts
  },
  {
    errorClass: "Conflict",
    message: (self) => {
      const counted = (["sessions", "messages", "interrupts", "injections", "extractions"] as const).find((key) =>
        self.source[key] !== self.target[key]
      )
      const what = counted === "injections"
        ? "injection rows"
        : counted === "interrupts"
        ? "pending interrupts"
        : counted === "extractions"
        ? "extraction runs"
        : counted
      return counted !== undefined
        ? `the target holds ${self.target[counted]} ${what} but the source ${self.source[counted]}; ` +
          `the target had other sessions, or the source changed during the copy`
        : `source and target hold the same number of sessions, messages, interrupts, injection rows and extraction ` +
          `runs but their ` +
          `checksums differ (${self.source.checksum.slice(0, 12)}… vs ${self.target.checksum.slice(0, 12)}…); ` +
          `a session differs — the target had other history, or the source changed during the copy`
    }
  }
) {}

/**
 * Copy options: `batchSize` messages per append (default 500), and `onProgress`, called as the
 * copy advances (a failure there stops the copy; what was copied stays, and a rerun resumes).
 *
 * @since 0.1.0
 * @category models
 */
export interface SessionCopyOptions<E = never, R = never> {
  readonly batchSize?: number | undefined
  readonly onProgress?: ((progress: SessionMigrationProgress) => Effect.Effect<void, E, R>) | undefined
}

/**
 * The errors a copy can fail with (besides the progress callback's own).
 *
 * @since 0.1.0
 * @category errors
 */
export type SessionCopyError =
  | SessionStoreFailure
  | InvalidSessionData
  | TelemetryStoreFailure
  | InvalidTelemetryRow
  | SessionMigrationMismatch

const DEFAULT_BATCH = 500
// Lines hashed per digest step: the checksum chains SHA-256 over groups of this many lines.
const DIGEST_GROUP = 1_000

// Each item in its encoded JSON text: what the digest hashes and what the copy compares.
const encodedAs = <A, I>(schema: Schema.Schema<A, I>) => {
  const encode = Schema.encodeSync(schema)
  return (item: A): string => JSON.stringify(encode(item))
}
const encodedMessage = encodedAs(SessionMessage)
const encodedInterrupt = encodedAs(PendingInterrupt)
const encodedInjection = encodedAs(InjectionLogRow)
const encodedRun = encodedAs(ExtractionRun)

/** Everything one store holds for one session, each item in its encoded JSON text. */
interface SessionContents {
  readonly messages: ReadonlyArray<string>
  readonly interrupt: string | undefined
  readonly injections: ReadonlyArray<string>
  readonly extractions: ReadonlyArray<string>
  readonly unreadable: number
}

type Side = "from" | "to"

const sessionIds = (stores: SessionStores, side: Side) =>
  Effect.map(
    Effect.all([
      stores.sessions === undefined ? Effect.succeed([]) : stores.sessions[side].listSessions(),
      stores.telemetry === undefined ? Effect.succeed([]) : stores.telemetry[side].listSessions()
    ]),
    ([a, b]): ReadonlyArray<SessionId> => Array.from(new Set([...a, ...b])).sort(compareSessionIds)
  )

const contentsOf = (stores: SessionStores, side: Side, sessionId: SessionId) =>
  Effect.gen(function*() {
    const sessions = stores.sessions?.[side]
    const telemetry = stores.telemetry?.[side]
    const history = sessions === undefined ? { messages: [], skipped: 0 } : yield* sessions.load(sessionId)
    const interrupt = sessions === undefined ? Option.none() : yield* sessions.getInterrupt(sessionId)
    const log = telemetry === undefined ? { rows: [], skipped: 0 } : yield* telemetry.listInjections(sessionId)
    const ledger = sessions === undefined ? { runs: [], skipped: 0 } : yield* sessions.loadExtractions(sessionId)
    const contents: SessionContents = {
      messages: history.messages.map(encodedMessage),
      interrupt: Option.getOrUndefined(Option.map(interrupt, encodedInterrupt)),
      injections: log.rows.map(encodedInjection),
      extractions: ledger.runs.map(encodedRun),
      unreadable: history.skipped + log.skipped + ledger.skipped
    }
    return contents
  })

/**
 * The sessions' {@link SessionDigest} on one side of `stores`. Two backends holding the same
 * sessions digest the same.
 *
 * @since 0.1.0
 * @category verifying
 */
export const digest = (
  stores: SessionStores,
  side: Side
): Effect.Effect<SessionDigest, SessionStoreFailure | TelemetryStoreFailure> =>
  Effect.gen(function*() {
    let chain = ""
    let group: Array<string> = []
    const counts = { sessions: 0, messages: 0, interrupts: 0, injections: 0, extractions: 0, unreadable: 0 }
    const push = (line: string) =>
      Effect.suspend(() => {
        group.push(line)
        return group.length >= DIGEST_GROUP ? flush : Effect.void
      })
    const flush = Effect.sync(() => {
      chain = Sha256.hex(`${chain}\n${group.join("\n")}`)
      group = []
    })
    for (const sessionId of yield* sessionIds(stores, side)) {
      const contents = yield* contentsOf(stores, side, sessionId)
      counts.sessions++
      counts.messages += contents.messages.length
      counts.injections += contents.injections.length
      counts.extractions += contents.extractions.length
      counts.unreadable += contents.unreadable
      yield* push(`session ${JSON.stringify(sessionId)}`)
      for (const message of contents.messages) yield* push(`message ${message}`)
      if (contents.interrupt !== undefined) {
        counts.interrupts++
        yield* push(`interrupt ${contents.interrupt}`)
      }
      for (const row of contents.injections) yield* push(`injection ${row}`)
      for (const run of contents.extractions) yield* push(`extraction ${run}`)
    }
    if (group.length > 0 || chain === "") yield* flush
    return { ...counts, checksum: chain }
  })

/**
 * What a ledger copy appends: the items `read` finds on the source past those it finds on the
 * target, when the target's are a prefix of the source's (compared by `encoded`); none otherwise —
 * a ledger is never rewritten, so a target that went another way is left alone and verification
 * reports it.
 */
const missingTail = <S, A, E>(
  stores: { readonly from: S; readonly to: S },
  read: (store: S) => Effect.Effect<ReadonlyArray<A>, E>,
  encoded: (item: A) => string
): Effect.Effect<ReadonlyArray<A>, E> =>
  Effect.map(
    Effect.all([read(stores.from), read(stores.to)]),
    ([source, target]) =>
      target.length <= source.length && target.every((item, i) => encoded(item) === encoded(source[i]!))
        ? source.slice(target.length)
        : []
  )

/**
 * Copies every session of `stores` from `from` to `to` (see the module description), then
 * verifies.
 *
 * @since 0.1.0
 * @category copying
 */
export const copySessions = <E = never, R = never>(
  stores: SessionStores,
  options: SessionCopyOptions<E, R> = {}
): Effect.Effect<SessionMigrationReport, SessionCopyError | E, R> =>
  Effect.gen(function*() {
    const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_BATCH))
    const report = options.onProgress ?? (() => Effect.void)
    const source = yield* digest(stores, "from")
    const ids = yield* sessionIds(stores, "from")
    let done = 0
    let messagesCopied = 0
    let interruptsCopied = 0
    let injectionsCopied = 0
    let extractionsCopied = 0
    const progress = (phase: SessionMigrationProgress["phase"]): SessionMigrationProgress => ({
      phase,
      total: ids.length,
      done,
      messagesCopied,
      interruptsCopied,
      injectionsCopied,
      extractionsCopied
    })
    yield* report(progress("scanned"))
    for (const sessionId of ids) {
      const sessions = stores.sessions
      if (sessions !== undefined) {
        const messages = yield* missingTail(
          sessions,
          (store) => Effect.map(store.load(sessionId), (history) => history.messages),
          encodedMessage
        )
        for (let i = 0; i < messages.length; i += batchSize) {
          const batch = messages.slice(i, i + batchSize)
          yield* sessions.to.append(sessionId, batch)
          messagesCopied += batch.length
        }
        const interrupt = yield* sessions.from.getInterrupt(sessionId)
        if (Option.isSome(interrupt)) {
          const current = yield* sessions.to.getInterrupt(sessionId)
          const same = Option.isSome(current) && encodedInterrupt(current.value) === encodedInterrupt(interrupt.value)
          if (!same) {
            yield* sessions.to.putInterrupt(sessionId, interrupt.value)
            interruptsCopied++
          }
        }
        // The ledger: what the target has not recorded yet, in record order (runs are never rewritten).
        const runs = yield* missingTail(
          sessions,
          (store) => Effect.map(store.loadExtractions(sessionId), (ledger) => ledger.runs),
          encodedRun
        )
        for (const run of runs) {
          yield* sessions.to.recordExtraction(sessionId, run)
          extractionsCopied++
        }
      }
      const telemetry = stores.telemetry
      if (telemetry !== undefined) {
        const rows = yield* missingTail(
          telemetry,
          (store) => Effect.map(store.listInjections(sessionId), (log) => log.rows),
          encodedInjection
        )
        for (const row of rows) {
          yield* telemetry.to.appendInjection(row)
          injectionsCopied++
        }
      }
      done++
      yield* report(progress("copying"))
    }
    yield* report(progress("verifying"))
    const target = yield* digest(stores, "to")
    const compared = ["sessions", "messages", "interrupts", "injections", "extractions", "checksum"] as const
    const differs = compared.some((key) => source[key] !== target[key])
    if (differs) {
      const fields = ({ checksum, extractions, injections, interrupts, messages, sessions }: SessionDigest) => ({
        sessions,
        messages,
        interrupts,
        injections,
        extractions,
        checksum
      })
      return yield* new SessionMigrationMismatch({ source: fields(source), target: fields(target) })
    }
    return { messagesCopied, interruptsCopied, injectionsCopied, extractionsCopied, source, target }
  })
