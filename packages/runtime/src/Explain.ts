/**
 * Explain: why a memory did or did not reach a model call.
 *
 * Every answer is read from what was recorded when the call was made — never re-guessed from the
 * stores as they are now:
 *
 * - the call's **prompt snapshot**: its mode, the scopes its projection read, the prefix
 *   fragments with their memory ids;
 * - the **projection report** the snapshot holds: the sections that delivered the memory (and
 *   where in the section it sat — for recall, its rank), what was shed for budget, what was
 *   withheld and why, which sections the mode suppressed;
 * - the **overlay report** the prefix was built with (a trajectory blob): composed, or declined
 *   with the overlay's reason;
 * - the **injection log** row of the call's turn.
 *
 * The current record (if it still exists), its promotion rows (routed where: spec, version, key
 * source; promoted or not) and its tombstone (if forgotten) are added as context. Only one thing
 * is computed afresh: the search tokens the call's query shares with the record — the shared
 * tokenizer applied to the stored query and the record's text, which are both fixed.
 *
 * The verdict of a call is the first that applies, in this order: `composed` (in the prefix),
 * `delivered` (by a projection section), `excluded-by-mode`, `excluded-by-scope`, `shed`,
 * `withheld`, `declined` (by the overlay), `not-recalled`.
 *
 * A library function, so the CLI (`engram explain`), the HTTP server and the console give the same
 * answer: the union of these per-call verdicts is the one record of what was delivered
 * ({@link deliveries} lists the calls that reached the model, as every surface names them).
 *
 * @since 0.1.0
 */
import { ErrorClass } from "@engram/core"
import {
  InjectionLog,
  InstructionScreen,
  MemoryQuery,
  MemoryRecord,
  MemoryStore,
  type MemoryStoreError,
  type ProjectionLayout,
  PromotionStore,
  type PromptSnapshot,
  SearchTokenizer,
  TelemetryStore,
  Trajectory,
  TurnProvenance
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import { proposedHolder } from "./Extraction.js"
import { SnapshotUnreadable } from "./Inspect.js"

/**
 * The verdict of one call (see the module documentation for the order they are checked in).
 *
 * @since 0.1.0
 * @category models
 */
export type Verdict =
  | "composed"
  | "delivered"
  | "excluded-by-mode"
  | "excluded-by-scope"
  | "shed"
  | "withheld"
  | "declined"
  | "not-recalled"

/**
 * What one stored call says about the memory.
 *
 * - `reached`: the memory's bytes were in the request.
 * - `prefix`: the prefix section that carried it (composed by the overlay).
 * - `overlay`: the overlay report's outcome for it (`null`: the report names it not, or none was
 *   stored — `overlayStored` says which).
 * - `projection`: the projection section that delivered it, and its position there (1-based; for
 *   `recalled_memory` the recall rank among hits — for a conversation neighbour, its hit's rank,
 *   with `neighbourOf` naming the hit).
 * - `shed`, `withheld`: what the projection's budget report says of it.
 * - `suppressed`: the memory sections the call's mode did not compose.
 * - `inScope`: whether the record's scope was among those the projection read (`null`: unknown).
 * - `queryTokens`: the words of the call's query (case and accents folded) whose word form the
 *   record's text shares (`null` when the record is gone or the call had no query).
 * - `injectionLogged`: an injection-log row of the call's turn names the memory.
 *
 * @since 0.1.0
 * @category models
 */
export interface CallExplanation {
  readonly sessionId: string
  readonly turn: number
  readonly call: number
  readonly mode: ProjectionLayout.ProjectionMode
  readonly reached: boolean
  readonly verdict: Verdict
  readonly reason: string
  readonly prefix: { readonly section: string } | null
  readonly overlayStored: boolean
  readonly overlay: Trajectory.OverlayReportData["outcomes"][number] | null
  readonly projection: {
    readonly section: ProjectionLayout.SectionLabel
    readonly position: number
    /** Set when it was delivered as a conversation neighbour: the recall hit it sat beside. */
    readonly neighbourOf?: string
  } | null
  readonly shed: ProjectionLayout.ShedItem | null
  readonly withheld: ProjectionLayout.WithheldItem | null
  readonly suppressed: ReadonlyArray<ProjectionLayout.SectionLabel>
  readonly inScope: boolean | null
  readonly queryTokens: ReadonlyArray<string> | null
  readonly injectionLogged: boolean
}

/**
 * A promotion row as explain reports it: routed where, by which spec and version, with which key
 * source, and whether it placed the record (promoted) or declined to.
 *
 * @since 0.1.0
 * @category models
 */
export interface RoutingExplanation {
  readonly specKey: string
  readonly specVersion: string
  readonly promoted: boolean
  readonly section: string | null
  readonly key: string | null
  readonly placementKey: string | null
  readonly keySource: string | null
  readonly tier: string | null
}

/**
 * The whole answer: the record now (without its content), its tombstone if forgotten, its
 * routing, and one explanation per stored call asked about — every stored call of the session
 * given, or of every session without one. `sessions` lists the sessions and turns in which the
 * memory reached the model, read from the same calls (and, for a turn no snapshot was stored for,
 * from its injection-log row), so the calls and the summary never disagree.
 *
 * @since 0.1.0
 * @category models
 */
export interface Explanation {
  readonly memoryId: string
  readonly record: {
    readonly scope: string
    readonly kind: string
    readonly reviewState: string
    readonly deliveryPolicy: string
    readonly deliverableNow: boolean
    /** Who wrote it (`extracted` for the extraction pass). */
    readonly sourceType: string
    /** Whether the poisoning screen flags it (`InstructionScreen`), and why. */
    readonly flagged: boolean
    readonly flaggedFor: ReadonlyArray<string>
    /** The session and turns it was drawn from (`TurnProvenance`), when it names them. */
    readonly source: TurnProvenance.TurnSource | null
    /** The memory it proposes to supersede, when it is a supersede proposal waiting for review. */
    readonly proposesToSupersede: string | null
    /** When the fact holds (`MemoryQuery.describeValidity`, decision 0173), or null when unbounded. */
    readonly validity: string | null
    /**
     * How often its value was said again (decision 0174): the count, the sessions (newest kept),
     * when last (ISO), and the line `MemoryQuery.describeCorroboration` prints; null when never.
     */
    readonly corroboration: {
      readonly count: number
      readonly sessions: ReadonlyArray<string>
      readonly lastAt: string
      readonly text: string
    } | null
  } | null
  readonly tombstone: { readonly forgottenAt: string; readonly forgottenBy: string } | null
  readonly routing: ReadonlyArray<RoutingExplanation>
  readonly promoted: boolean
  readonly sessionId: string | null
  readonly calls: ReadonlyArray<CallExplanation>
  readonly sessions: ReadonlyArray<{ readonly sessionId: string; readonly turns: ReadonlyArray<number> }>
}

/**
 * The memory id is not a memory id.
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidMemoryId extends ErrorClass.TaggedError<InvalidMemoryId>()("InvalidMemoryId", {
  memoryId: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `"${self.memoryId}" is not a memory id`
}) {}

/**
 * What an explanation needs to read.
 *
 * @since 0.1.0
 * @category models
 */
export type ExplainRequirements =
  | TelemetryStore.TelemetryStore
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore

/**
 * What an explanation can fail with.
 *
 * @since 0.1.0
 * @category errors
 */
export type ExplainError =
  | InvalidMemoryId
  | SnapshotUnreadable
  | TelemetryStore.TelemetryStoreFailure
  | MemoryStoreError.MemoryStoreFailure
  | PromotionStore.PromotionStoreFailure

const memoryFree: ReadonlyArray<ProjectionLayout.ProjectionMode> = ["incognito", "subagent"]

const describeOverlay = (outcome: Extract<Trajectory.OverlayReportData["outcomes"][number], { status: "declined" }>) =>
  `the overlay declined it (${outcome.reason}` +
  (outcome.heldBy !== undefined ? `: ${outcome.heldBy} holds ${outcome.address?.placementKey ?? "the address"}` : "") +
  (outcome.budget !== undefined
    ? `: the ${outcome.budget} budget was full of more important entries — admitted by the vocabulary's order, ` +
      `then newest`
    : "") +
  ")"

/**
 * How a neighbour sat next to its hit: in the same thread when it was written with a position,
 * else in its scope's write order (decision 0233: an episode written without a position).
 */
const neighbourhood = (record: MemoryRecord.MemoryRecord | null): string =>
  record !== null && record.position === undefined
    ? "written next to it in its scope's write order (neither carries a conversation position)"
    : "a turn next to it in the same thread"

/** Where a section delivered a memory: its line, or in recall its rank among hits (a neighbour: its hit's). */
const projectionPlace = (
  section: ProjectionLayout.SectionReport,
  id: string
): NonNullable<CallExplanation["projection"]> => {
  if (section.label !== "recalled_memory") {
    return { section: section.label, position: section.memoryIds.indexOf(id) + 1 }
  }
  const neighbourOf = section.neighbours ?? {}
  const hits = section.memoryIds.filter((memory) => neighbourOf[memory] === undefined)
  const hit = neighbourOf[id]
  return hit === undefined
    ? { section: section.label, position: hits.indexOf(id) + 1 }
    : { section: section.label, position: hits.indexOf(hit) + 1, neighbourOf: hit }
}

/**
 * Explains one call from its snapshot, the blobs it names, its turn's injection rows, the record
 * (if it still exists) and the call's query. Pure.
 *
 * @since 0.1.0
 * @category explaining
 */
export const explainCall = (options: {
  readonly memoryId: string
  readonly snapshot: PromptSnapshot.PromptSnapshot
  readonly overlay: Trajectory.OverlayReportData | null
  readonly injections: ReadonlyArray<InjectionLog.InjectionLogRow>
  readonly record: MemoryRecord.MemoryRecord | null
  readonly query: string | null
}): CallExplanation => {
  const { memoryId: id, record, snapshot } = options
  const projection = snapshot.projection
  const prefixSection = snapshot.prefix.sections.find((section) =>
    section.fragments.some((f) => f.source === "memory" && f.memoryIds.includes(id))
  )
  const overlay = options.overlay?.outcomes.find((o) => o.recordId === id) ?? null
  const delivering = projection.sections.find((s) => s.memoryIds.includes(id))
  const shed = projection.shed.find((item) => item.ref === id) ?? null
  const withheld = projection.withheld.find((item) => item.ref === id) ?? null
  const suppressed = projection.suppressed
  const inScope = snapshot.scopes === null || record === null ? null : snapshot.scopes.includes(record.scope)
  const queryTokens = record === null || options.query === null
    ? null
    : (() => {
      // Matching is by word form; an operator reads the query's own words ("staging", not "stage").
      const own = new Set(SearchTokenizer.tokenize(SearchTokenizer.searchableText(record)))
      const words = [...new Set(SearchTokenizer.words(options.query))]
      return words.filter((word) => SearchTokenizer.tokenize(word).some((form) => own.has(form)))
    })()
  const injectionLogged = options.injections.some((row) => row.turn === snapshot.turn && row.memoryIds.includes(id))
  const base = {
    sessionId: snapshot.sessionId,
    turn: snapshot.turn,
    call: snapshot.call,
    mode: snapshot.mode,
    prefix: prefixSection === undefined ? null : { section: prefixSection.name },
    overlayStored: options.overlay !== null,
    overlay,
    projection: delivering === undefined ? null : projectionPlace(delivering, id),
    shed,
    withheld,
    suppressed,
    inScope,
    queryTokens,
    injectionLogged
  }
  const verdict = (v: Verdict, reached: boolean, reason: string): CallExplanation => ({
    ...base,
    verdict: v,
    reached,
    reason
  })
  if (prefixSection !== undefined) {
    const where = overlay?.address
    return verdict(
      "composed",
      true,
      `composed into the prefix section "${prefixSection.name}"${placedAt(where)}`
    )
  }
  if (delivering !== undefined) {
    // Recall ranks count hits only: a conversation neighbour sits beside its hit, unranked.
    const { neighbourOf, position } = projectionPlace(delivering, id)
    const hits = delivering.memoryIds.length - Object.keys(delivering.neighbours ?? {}).length
    return verdict(
      "delivered",
      true,
      delivering.label === "recalled_memory" && neighbourOf !== undefined
        ? `delivered as a conversation neighbour of hit ${neighbourOf} (recalled at rank ${position} of ${hits}): ` +
          `${neighbourhood(record)}, in the same budget`
        : delivering.label === "recalled_memory"
        ? `recalled at rank ${position} of ${hits} delivered` +
          (queryTokens !== null && queryTokens.length > 0 ? ` (query tokens matched: ${queryTokens.join(", ")})` : "")
        : `delivered in the projection's ${delivering.label} section (line ${position})` +
          (delivering.label === "identity_memory" ? placedAt(overlay?.address) : "")
    )
  }
  if (memoryFree.includes(snapshot.mode)) {
    return verdict(
      "excluded-by-mode",
      false,
      `the call ran in ${snapshot.mode} mode, which composes no memory` +
        (suppressed.length > 0 ? ` (suppressed: ${suppressed.join(", ")})` : "")
    )
  }
  if (inScope === false) {
    return verdict(
      "excluded-by-scope",
      false,
      `its scope ${record!.scope} is not among the scopes the call read (${snapshot.scopes!.join(", ") || "none"})`
    )
  }
  if (shed !== null) {
    const ofSection = projection.shed.filter((item) => item.section === shed.section).length
    const budget = projection.budgetTokens !== null
      ? `${projection.budgetTokens} tokens`
      : projection.budgetChars !== null
      ? `${projection.budgetChars} chars`
      : "unbounded"
    return verdict(
      "shed",
      false,
      `shed from ${shed.section} for budget (${shed.chars} chars; ${ofSection} line(s) of that section shed, ` +
        (shed.section === "identity_memory"
          ? "the least important key first, by the vocabulary's order"
          : "lowest priority first") +
        `; budget ${budget})` +
        (shed.neighbourOf !== undefined
          ? `; it was a conversation neighbour of hit ${shed.neighbourOf} (${neighbourhood(record)}), and ` +
            "neighbours are shed before stronger hits"
          : "")
    )
  }
  if (withheld !== null) {
    return verdict(
      "withheld",
      false,
      `withheld from ${withheld.section}: ${withheld.reason}` +
        (withheld.reason === "scope-shadowed" ? " (a record of a more specific scope holds its address)" : "")
    )
  }
  // `spec-declined` is not a refusal: the spec placed the record nowhere, so only recall can deliver it.
  if (overlay !== null && overlay.status === "declined" && overlay.reason !== "spec-declined") {
    return verdict("declined", false, `${describeOverlay(overlay)}, and no projection section delivered it`)
  }
  const why = record === null
    ? "the record is no longer stored"
    : record.deliveryPolicy === "on_demand"
    ? "its delivery policy is on_demand: only a memory_recall tool call can fetch it"
    : !MemoryQuery.isDeliverable(record, snapshot.at)
    ? "it was not deliverable at the time of the call (rejected, expired or superseded)"
    : (overlay !== null && overlay.status === "declined"
      ? "the routing spec placed it nowhere (recall only), and "
      : "") +
      (queryTokens === null
        ? "the call had no query to recall by"
        : queryTokens.length === 0
        ? "the call's query shares no search token with it"
        : `the query shares ${
          queryTokens.join(", ")
        } with it, but the search did not return it among the hits the budget allowed`)
  return verdict("not-recalled", false, `not recalled: ${why}`)
}

const routingOf = (row: PromotionStore.PromotionRow): RoutingExplanation => ({
  specKey: row.specKey,
  specVersion: row.specVersion,
  promoted: row.placement !== null,
  section: row.placement?.section ?? null,
  key: row.placement?.key ?? null,
  placementKey: row.placementKey,
  keySource: row.keySource,
  tier: row.tier
})

/** How a placement key was derived, in words (see `Routing.KeySource`). */
const keySourceWords = {
  canonical: "the label is the key's canonical name",
  alias: "the label is a declared alias of the key",
  label: "key derived from the label",
  statement: "the content states this declared key, whatever key the label names",
  content: "key derived from the content"
} as const

/** " at <address> (<how the key was derived>)", or nothing without an address. */
const placedAt = (address: Trajectory.OverlayReportData["outcomes"][number]["address"] | undefined): string =>
  address === undefined || address === null
    ? ""
    : ` at ${address.placementKey}${address.keySource === null ? "" : ` (${keySourceWords[address.keySource]})`}`

/**
 * Explains memory `memoryId` for each stored call of session `sessionId` (optionally one turn /
 * one call), or of every session when none is given: one verdict per call, each naming its
 * session, turn and call.
 *
 * @since 0.1.0
 * @category explaining
 */
export const explain = (options: {
  readonly memoryId: string
  readonly sessionId?: string | undefined
  readonly turn?: number | undefined
  readonly call?: number | undefined
}): Effect.Effect<Explanation, ExplainError, ExplainRequirements> =>
  Effect.gen(function*() {
    const { memoryId } = options
    if (!Schema.is(MemoryRecord.MemoryId)(memoryId)) return yield* new InvalidMemoryId({ memoryId })
    const memories = yield* MemoryStore.MemoryStore
    const telemetry = yield* TelemetryStore.TelemetryStore
    const promotions = yield* PromotionStore.PromotionStore
    const record = (yield* memories.get([memoryId])).records[0] ?? null
    const tombstone = (yield* memories.tombstones({ ids: [memoryId] }))[0]
    const rows = (yield* promotions.getByRecords([memoryId])).rows
    const now = yield* DateTime.now
    const routing = rows.map(routingOf)
    const calls: Array<CallExplanation> = []
    const sessions: Array<{ sessionId: string; turns: ReadonlyArray<number> }> = []
    // One record of deliveries: every stored call of the session asked about, or of every session.
    const sessionIds = options.sessionId !== undefined ? [options.sessionId] : yield* telemetry.listSessions()
    for (const sessionId of sessionIds) {
      const { snapshots } = yield* telemetry.listSnapshots(sessionId, { turn: options.turn, call: options.call })
      const trajectory = snapshots.length === 0 ? Trajectory.empty : yield* telemetry.readTrajectory(sessionId)
      const injections = (yield* telemetry.listInjections(sessionId)).rows
      const ofSession: Array<CallExplanation> = []
      for (const snapshot of snapshots) {
        const unreadable = (problem: string) =>
          new SnapshotUnreadable({ sessionId, turn: snapshot.turn, call: snapshot.call, problem })
        const blob = <A>(
          kind: Trajectory.BlobKind,
          hash: string | null,
          read: (entry: Trajectory.BlobEntry) => Either.Either<A, string>
        ) => {
          if (hash === null) return Effect.succeed(null)
          const found = trajectory.blobs.find((b) => b.kind === kind && b.hash === hash)
          return found === undefined
            ? Effect.fail(unreadable(`the ${kind} ${hash} is not in the trajectory`))
            : Either.match(read(found), { onLeft: (p) => Effect.fail(unreadable(p)), onRight: Effect.succeed })
        }
        const overlay = yield* blob("overlay", snapshot.overlay, Trajectory.overlayOf)
        const inputEntry = snapshot.messages.input === null
          ? undefined
          : trajectory.messages.find((m) => m.seq === snapshot.messages.input)
        const input = inputEntry === undefined ? undefined : Either.getOrUndefined(Trajectory.messageOf(inputEntry))
        ofSession.push(explainCall({
          memoryId,
          snapshot,
          overlay,
          injections,
          record,
          query: input !== undefined && input._tag === "OperatorMessage" ? input.text : null
        }))
      }
      calls.push(...ofSession)
      // A turn reached the memory when one of its stored calls did; a turn with no stored call
      // (a producer that logs injections but keeps no snapshots) is read from the injection log.
      const stored = new Set(snapshots.map((snapshot) => snapshot.turn))
      const turns = new Set([
        ...ofSession.filter((c) => c.reached).map((c) => c.turn),
        ...(options.turn === undefined ? injections : injections.filter((row) => row.turn === options.turn))
          .filter((row) => !stored.has(row.turn) && row.memoryIds.includes(memoryId))
          .map((row) => row.turn)
      ])
      if (turns.size > 0) sessions.push({ sessionId, turns: [...turns].sort((a, b) => a - b) })
    }
    return {
      memoryId,
      record: record === null ? null : {
        scope: record.scope,
        kind: record.kind,
        reviewState: record.reviewState,
        deliveryPolicy: record.deliveryPolicy,
        deliverableNow: MemoryQuery.isDeliverable(record, now),
        sourceType: record.sourceType,
        flagged: record.flagged,
        flaggedFor: InstructionScreen.reasonsFor(record),
        source: TurnProvenance.of(record) ?? null,
        proposesToSupersede: proposedHolder(record) ?? null,
        validity: MemoryQuery.describeValidity(record),
        corroboration: record.corroboration === undefined ? null : {
          count: record.corroboration.count,
          sessions: record.corroboration.sessions,
          lastAt: DateTime.formatIso(record.corroboration.lastAt),
          text: MemoryQuery.describeCorroboration(record) ?? ""
        }
      },
      tombstone: tombstone === undefined
        ? null
        : { forgottenAt: DateTime.formatIso(tombstone.forgottenAt), forgottenBy: tombstone.forgottenBy },
      routing,
      promoted: routing.some((r) => r.promoted),
      sessionId: options.sessionId ?? null,
      calls,
      sessions
    } satisfies Explanation
  }).pipe(
    Effect.withSpan("engram.explain", {
      attributes: { memoryId: options.memoryId, sessionId: options.sessionId ?? "" }
    })
  )

/**
 * The calls that reached the model (`composed` or `delivered`), as `session/turn.call` keys in
 * stored order: what every surface reports as "delivered in". Pure.
 *
 * @since 0.1.0
 * @category explaining
 */
export const deliveries = (explanation: Explanation): ReadonlyArray<string> =>
  explanation.calls.filter((c) => c.reached).map((c) => `${c.sessionId}/${c.turn}.${c.call}`)

/**
 * How many calls got each verdict. Pure.
 *
 * @since 0.1.0
 * @category explaining
 */
export const verdictCounts = (explanation: Explanation): Readonly<Partial<Record<Verdict, number>>> => {
  const counts: Partial<Record<Verdict, number>> = {}
  for (const c of explanation.calls) counts[c.verdict] = (counts[c.verdict] ?? 0) + 1
  return counts
}

/**
 * True when nothing at all is known of the memory: no record, no tombstone, no promotion row and
 * no call or session that mentions it.
 *
 * @since 0.1.0
 * @category explaining
 */
export const isUnknown = (explanation: Explanation): boolean =>
  explanation.record === null && explanation.tombstone === null && explanation.routing.length === 0 &&
  explanation.sessions.length === 0 &&
  explanation.calls.every((c) => !c.reached && c.overlay === null && c.shed === null && c.withheld === null)
