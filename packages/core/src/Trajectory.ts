/**
 * The trajectory of a session: the append-only, content-addressed log that holds the text of
 * what its model calls saw, once. Prompt snapshots (see `PromptSnapshot`) hold references into
 * it, never copies.
 *
 * Two kinds of entry, both addressed by the SHA-256 of their body:
 *
 * - a **message**: one stored session message (operator, assistant, tool), at its position `seq`
 *   in the session's message stream (0, 1, 2, … in the order the session stored them). The
 *   stream only grows; a position is written once, and the first body written there stands.
 * - a **blob**: a stable prefix (`prefix`: the rendered sections with their fragment attribution),
 *   a projection (`projection`: the encoded `ProjectedContext`) or the overlay report the prefix
 *   was built with (`overlay`: ids, addresses and reasons — no content). A blob is stored once per
 *   session however many calls refer to it — a 20-turn session with a stable prefix stores the
 *   prefix once.
 *
 * Bodies are JSON text. {@link contentHash} is the one hash function; a backend refuses an entry
 * whose hash does not match its body.
 *
 * @since 0.1.0
 */
import * as Either from "effect/Either"
import type * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { onFirstCall } from "./internal/onFirstCall.js"
import type { OverlayReport } from "./MemoryOverlay.js"
import { ProjectedContext } from "./ProjectionLayout.js"
import { AgentPromptSectionData } from "./PromptFragment.js"
import { KeySource } from "./Routing.js"
import { SessionMessage } from "./SessionStore.js"
import * as Sha256 from "./Sha256.js"
import { safeLine } from "./TextSafety.js"

/**
 * A content address: `sha256:` and the 64 hex digits of the SHA-256 of the UTF-8 text.
 *
 * @since 0.1.0
 * @category models
 */
export const ContentHash = Schema.String.pipe(
  Schema.pattern(/^sha256:[0-9a-f]{64}$/, { message: () => "a content hash is sha256: and 64 lower-case hex digits" })
).annotations({ identifier: "ContentHash" })
/** @since 0.1.0 @category models */
export type ContentHash = typeof ContentHash.Type

/**
 * The content address of `text`.
 *
 * @since 0.1.0
 * @category hashing
 */
export const contentHash = (text: string): ContentHash => `sha256:${Sha256.hex(text)}`

/**
 * The kinds of blob.
 *
 * @since 0.1.0
 * @category models
 */
export const BlobKind = Schema.Literal("prefix", "projection", "overlay")
/** @since 0.1.0 @category models */
export type BlobKind = typeof BlobKind.Type

/**
 * A session message at position `seq` of the session's message stream.
 *
 * @since 0.1.0
 * @category models
 */
export const MessageEntry = Schema.TaggedStruct("Message", {
  seq: Schema.NonNegativeInt,
  hash: ContentHash,
  body: Schema.String
}).annotations({ identifier: "MessageEntry" })
/** @since 0.1.0 @category models */
export type MessageEntry = typeof MessageEntry.Type

/**
 * A prefix or projection body, stored once per session.
 *
 * @since 0.1.0
 * @category models
 */
export const BlobEntry = Schema.TaggedStruct("Blob", {
  kind: BlobKind,
  hash: ContentHash,
  body: Schema.String
}).annotations({ identifier: "BlobEntry" })
/** @since 0.1.0 @category models */
export type BlobEntry = typeof BlobEntry.Type

/**
 * One trajectory entry.
 *
 * @since 0.1.0
 * @category models
 */
export const TrajectoryEntry = Schema.Union(MessageEntry, BlobEntry).annotations({ identifier: "TrajectoryEntry" })
/** @since 0.1.0 @category models */
export type TrajectoryEntry = typeof TrajectoryEntry.Type

/**
 * A session's trajectory as a backend returns it: the message stream in `seq` order, the blobs
 * in the order they were first stored, and how many stored entries failed to decode.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoredTrajectory {
  readonly messages: ReadonlyArray<MessageEntry>
  readonly blobs: ReadonlyArray<BlobEntry>
  readonly skipped: number
}

/**
 * The empty trajectory.
 *
 * @since 0.1.0
 * @category constants
 */
export const empty: StoredTrajectory = { messages: [], blobs: [], skipped: 0 }

const decodeEntryEither = onFirstCall(() => Schema.decodeUnknownEither(TrajectoryEntry))

/**
 * Decodes a stored entry and checks that its hash is its body's. Backends call this on read.
 *
 * @since 0.1.0
 * @category encoding
 */
export const decodeStoredEntry = (encoded: unknown): Either.Either<TrajectoryEntry, string> =>
  Either.flatMap(
    Either.mapLeft(decodeEntryEither(encoded), (error: ParseResult.ParseError) => error.message),
    (entry) =>
      contentHash(entry.body) === entry.hash
        ? Either.right(entry)
        : Either.left(`the body of entry ${entry.hash} does not hash to its address`)
  )

/**
 * Why an entry cannot be stored, or `undefined` when it can: its hash must be its body's.
 *
 * @since 0.1.0
 * @category validation
 */
export const invalidEntry = (entry: TrajectoryEntry): string | undefined =>
  contentHash(entry.body) === entry.hash
    ? undefined
    : `trajectory ${entry._tag === "Message" ? `message #${entry.seq}` : `${entry.kind} blob`}: ` +
      `its hash ${entry.hash} is not the SHA-256 of its body`

const encodeMessageSync = onFirstCall(() => Schema.encodeSync(SessionMessage))
const encodeSectionsSync = onFirstCall(() => Schema.encodeSync(Schema.Array(AgentPromptSectionData)))
const encodeProjectionSync = onFirstCall(() => Schema.encodeSync(ProjectedContext))
const decodeMessageJson = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(SessionMessage)))
const decodeSectionsJson = onFirstCall(() =>
  Schema.decodeUnknownEither(Schema.parseJson(Schema.Array(AgentPromptSectionData)))
)
const decodeProjectionJson = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(ProjectedContext)))

const blob = (kind: BlobKind, body: string): BlobEntry => ({ _tag: "Blob", kind, hash: contentHash(body), body })

/**
 * The entry of message `message` at position `seq`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const messageEntry = (seq: number, message: SessionMessage): MessageEntry => {
  const body = JSON.stringify(encodeMessageSync(message))
  return { _tag: "Message", seq, hash: contentHash(body), body }
}

/**
 * The blob of a stable prefix: its rendered sections, fragment attribution included.
 *
 * @since 0.1.0
 * @category constructors
 */
export const prefixBlob = (sections: ReadonlyArray<AgentPromptSectionData>): BlobEntry =>
  blob("prefix", JSON.stringify(encodeSectionsSync(sections)))

/**
 * The blob of a projection: the encoded `ProjectedContext` (text, section reports, budget).
 *
 * @since 0.1.0
 * @category constructors
 */
export const projectionBlob = (projection: ProjectedContext): BlobEntry =>
  blob("projection", JSON.stringify(encodeProjectionSync(projection)))

const NullableChars = Schema.NullOr(Schema.NonNegativeInt)

const OverlayAddressData = Schema.Struct({
  section: Schema.String,
  key: Schema.String,
  placementKey: Schema.String,
  keySource: Schema.NullOr(KeySource)
})

/**
 * The stored form of a `MemoryOverlay.OverlayReport`: the spec, the budgets (`null` = unlimited)
 * and one outcome per placed record — ids, addresses and reasons, never content.
 *
 * @since 0.1.0
 * @category models
 */
export const OverlayReportData = Schema.Struct({
  specKey: Schema.String,
  specVersion: Schema.String,
  budget: Schema.Struct({
    totalChars: NullableChars,
    sectionChars: NullableChars,
    perSection: Schema.Record({ key: Schema.String, value: NullableChars })
  }),
  outcomes: Schema.Array(Schema.Union(
    Schema.Struct({
      recordId: Schema.String,
      status: Schema.Literal("composed"),
      address: OverlayAddressData,
      supports: Schema.NonNegativeInt,
      chars: Schema.NonNegativeInt
    }),
    Schema.Struct({
      recordId: Schema.String,
      status: Schema.Literal("declined"),
      reason: Schema.String,
      address: Schema.NullOr(OverlayAddressData),
      heldBy: Schema.optional(Schema.String),
      budget: Schema.optional(Schema.Literal("section", "total"))
    })
  ))
}).annotations({ identifier: "OverlayReportData" })
/** @since 0.1.0 @category models */
export type OverlayReportData = typeof OverlayReportData.Type

const encodeOverlaySync = onFirstCall(() => Schema.encodeSync(OverlayReportData))
const decodeOverlayJson = onFirstCall(() => Schema.decodeUnknownEither(Schema.parseJson(OverlayReportData)))
const finite = (n: number): number | null => (Number.isFinite(n) ? Math.max(0, Math.floor(n)) : null)

/**
 * The blob of an overlay report (what `StablePrefix.buildAgent` returned with the prefix).
 *
 * @since 0.1.0
 * @category constructors
 */
export const overlayBlob = (report: OverlayReport): BlobEntry =>
  blob(
    "overlay",
    JSON.stringify(encodeOverlaySync({
      specKey: report.specKey,
      specVersion: report.specVersion,
      budget: {
        totalChars: finite(report.budget.totalChars),
        sectionChars: finite(report.budget.sectionChars),
        perSection: Object.fromEntries(Object.entries(report.budget.perSection).map(([k, v]) => [k, finite(v)]))
      },
      outcomes: report.outcomes.map((o) =>
        o.status === "composed"
          ? { recordId: o.recordId, status: o.status, address: o.address, supports: o.supports, chars: o.chars }
          : {
            recordId: o.recordId,
            status: o.status,
            reason: o.reason,
            address: o.address,
            ...(o.heldBy !== undefined ? { heldBy: o.heldBy } : {}),
            ...(o.budget !== undefined ? { budget: o.budget } : {})
          }
      )
    }))
  )

/**
 * The overlay report an overlay blob holds.
 *
 * @since 0.1.0
 * @category decoding
 */
export const overlayOf = (entry: BlobEntry): Either.Either<OverlayReportData, string> =>
  Either.mapLeft(decodeOverlayJson(entry.body), (error) => `overlay ${entry.hash}: ${error.message}`)

/**
 * The message a message entry holds.
 *
 * @since 0.1.0
 * @category decoding
 */
export const messageOf = (entry: MessageEntry): Either.Either<SessionMessage, string> =>
  Either.mapLeft(decodeMessageJson(entry.body), (error) => `message #${entry.seq}: ${error.message}`)

/**
 * The prefix sections a prefix blob holds.
 *
 * @since 0.1.0
 * @category decoding
 */
export const prefixOf = (entry: BlobEntry): Either.Either<ReadonlyArray<AgentPromptSectionData>, string> =>
  Either.mapLeft(decodeSectionsJson(entry.body), (error) => `prefix ${entry.hash}: ${error.message}`)

/**
 * The projection a projection blob holds.
 *
 * @since 0.1.0
 * @category decoding
 */
export const projectionOf = (entry: BlobEntry): Either.Either<ProjectedContext, string> =>
  Either.mapLeft(decodeProjectionJson(entry.body), (error) => `projection ${entry.hash}: ${error.message}`)

/**
 * An entry as SQL columns: `address` is unique per session (`message:<seq>` for a message,
 * `<kind>:<hash>` for a blob), so "store unless present" is an insert that ignores conflicts.
 *
 * @since 0.1.0
 * @category encoding
 */
export interface EntryColumns {
  readonly address: string
  readonly kind: "message" | BlobKind
  readonly seq: number | null
  readonly hash: ContentHash
  readonly body: string
}

/**
 * The columns of an entry (see {@link EntryColumns}).
 *
 * @since 0.1.0
 * @category encoding
 */
export const toColumns = (entry: TrajectoryEntry): EntryColumns =>
  entry._tag === "Message"
    ? { address: `message:${entry.seq}`, kind: "message", seq: entry.seq, hash: entry.hash, body: entry.body }
    : { address: `${entry.kind}:${entry.hash}`, kind: entry.kind, seq: null, hash: entry.hash, body: entry.body }

/**
 * Reads stored columns back into an entry, checking its hash.
 *
 * @since 0.1.0
 * @category encoding
 */
export const fromColumns = (row: {
  readonly kind: unknown
  readonly seq: unknown
  readonly hash: unknown
  readonly body: unknown
}): Either.Either<TrajectoryEntry, string> =>
  decodeStoredEntry(
    row.kind === "message"
      ? { _tag: "Message", seq: row.seq === null ? row.seq : Number(row.seq), hash: row.hash, body: row.body }
      : { _tag: "Blob", kind: row.kind, hash: row.hash, body: row.body }
  )

/**
 * Sorts decoded entries into a {@link StoredTrajectory}: messages by position, blobs in the
 * given (storing) order.
 *
 * @since 0.1.0
 * @category constructors
 */
export const collect = (entries: ReadonlyArray<TrajectoryEntry>, skipped: number): StoredTrajectory => {
  const messages: Array<MessageEntry> = []
  const blobs: Array<BlobEntry> = []
  for (const entry of entries) {
    if (entry._tag === "Message") messages.push(entry)
    else blobs.push(entry)
  }
  messages.sort((a, b) => a.seq - b.seq)
  return { messages, blobs, skipped }
}

// ---------------------------------------------------------------------------------------------
// Forgetting
// ---------------------------------------------------------------------------------------------

/**
 * A forgotten memory: its id and the content it had, so its text can be found and removed.
 *
 * @since 0.1.0
 * @category forgetting
 */
export interface ForgottenText {
  readonly id: string
  readonly content: string
}

/**
 * What a forgotten memory's text is replaced with.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const FORGOTTEN = "[forgotten]"

const formsOf = (content: string): ReadonlyArray<string> =>
  [...new Set([content, content.trim(), safeLine(content).trim()])].filter((form) => form.length > 0)

/** Replaces every form of the forgotten contents in every string of a JSON value. */
const scrub = (value: unknown, forms: ReadonlyArray<readonly [string, string]>, hit: Set<string>): unknown => {
  if (typeof value === "string") {
    let out = value
    for (const [id, form] of forms) {
      if (out.includes(form)) {
        out = out.split(form).join(FORGOTTEN)
        hit.add(id)
      }
    }
    return out
  }
  if (Array.isArray(value)) return value.map((v) => scrub(v, forms, hit))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, scrub(v, forms, hit)]))
  }
  return value
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Strings whose presence in a stored body (JSON text) marks it as possibly holding a forgotten
 * memory: the ids, and each form of the content as JSON writes it. Backends use them to narrow
 * the rows they read before {@link redactEntry} decides.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const needlesOf = (forgotten: ReadonlyArray<ForgottenText>): ReadonlyArray<string> => [
  ...new Set(forgotten.flatMap((f) => [f.id, ...formsOf(f.content).map((form) => JSON.stringify(form).slice(1, -1))]))
]

/**
 * Replaces every form of the forgotten contents in `text`, returning the ids found (empty: none).
 *
 * @since 0.1.0
 * @category forgetting
 */
export const scrubText = (
  text: string,
  forgotten: ReadonlyArray<ForgottenText>
): { readonly text: string; readonly ids: ReadonlyArray<string> } => {
  const hit = new Set<string>()
  const out = scrub(text, forgotten.flatMap((f) => formsOf(f.content).map((form) => [f.id, form] as const)), hit)
  return { text: out as string, ids: [...hit].sort() }
}

/**
 * The entry with the forgotten memories' text removed, and which of them it held — or `undefined`
 * when it held none. Every string in the body loses the memories' content (as written, and as a
 * prompt renders it on one line); besides, a prefix fragment attributed to a forgotten memory
 * becomes {@link FORGOTTEN}, and a projection line naming one (by id, or by the handle the
 * projection's `handles` maps to it) becomes `- [<id or handle> · forgotten]`. The
 * entry keeps its position (a message) or gets the hash of its new body (a blob). Pure.
 *
 * @since 0.1.0
 * @category forgetting
 */
export const redactEntry = (
  entry: TrajectoryEntry,
  forgotten: ReadonlyArray<ForgottenText>
): { readonly entry: TrajectoryEntry; readonly ids: ReadonlyArray<string> } | undefined => {
  let parsed: unknown
  try {
    parsed = JSON.parse(entry.body)
  } catch {
    return undefined
  }
  const hit = new Set<string>()
  const ids = new Set(forgotten.map((f) => f.id))
  if (entry._tag === "Blob" && entry.kind === "prefix" && Array.isArray(parsed)) {
    parsed = parsed.map((section) =>
      !isRecord(section) || !Array.isArray(section.fragments) ? section : {
        ...section,
        fragments: section.fragments.map((fragment: unknown) => {
          if (!isRecord(fragment) || !Array.isArray(fragment.memoryIds)) return fragment
          const named = fragment.memoryIds.filter((id): id is string => typeof id === "string" && ids.has(id))
          if (named.length === 0) return fragment
          for (const id of named) hit.add(id)
          return { ...fragment, text: FORGOTTEN }
        })
      }
    )
  }
  if (entry._tag === "Blob" && entry.kind === "projection" && isRecord(parsed) && typeof parsed.text === "string") {
    // A line names its memory by id or by the short handle the projection's `handles` maps to it.
    const names: Array<readonly [string, string]> = [...ids].map((id) => [id, id] as const)
    if (isRecord(parsed.handles)) {
      for (const [handle, id] of Object.entries(parsed.handles)) {
        if (typeof id === "string" && ids.has(id)) names.push([handle, id])
      }
    }
    parsed = {
      ...parsed,
      text: parsed.text.split("\n").map((line) => {
        const named = names.find(([name]) => line.startsWith(`- [${name} ·`) || line.startsWith(`- [${name}]`))
        if (named === undefined) return line
        hit.add(named[1])
        return `- [${named[0]} · forgotten]`
      }).join("\n")
    }
  }
  const forms = forgotten.flatMap((f) => formsOf(f.content).map((form) => [f.id, form] as const))
  const body = JSON.stringify(scrub(parsed, forms, hit))
  if (hit.size === 0 || body === entry.body) return undefined
  const redacted: TrajectoryEntry = entry._tag === "Message"
    ? { _tag: "Message", seq: entry.seq, hash: contentHash(body), body }
    : { _tag: "Blob", kind: entry.kind, hash: contentHash(body), body }
  return { entry: redacted, ids: [...hit].sort() }
}
