/**
 * What happens to a candidate, and to a proposal under review: the write through the save path
 * (corroborated, proposed or saved), an operator's approval and review.
 */
import {
  IdGenerator,
  MemoryRecord,
  MemoryStore,
  type PromotionStore,
  Slot,
  StatedTime,
  TurnProvenance
} from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import type { Outcome } from "../Extraction.js"
import { ApprovalRefused, type ReviewError } from "../ExtractionError.js"
import * as MemoryTools from "../MemoryTools.js"
import * as Promotion from "../Promotion.js"
import { type Candidate, proposalTag, proposedHolder } from "./extractionModel.js"
import { nearDuplicateOf, type NearDuplicates, sameWords } from "./nearDuplicates.js"

/**
 * When a candidate's value starts to hold (decision 0173): the time of the newest turn it rests on,
 * when the session recorded one.
 */
const validFromOf = (
  turns: ReadonlyArray<number>,
  times: ReadonlyMap<number, DateTime.Utc> | undefined
): DateTime.Utc | undefined => {
  let newest: DateTime.Utc | undefined
  for (const turn of turns) {
    const at = times?.get(turn)
    if (at !== undefined && (newest === undefined || DateTime.greaterThan(at, newest))) newest = at
  }
  return newest
}

/** A record's world time, to carry onto the value that replaces it with the same statement. */
const worldTimeOf = (record: MemoryRecord.MemoryRecord) => ({
  ...(record.validFrom !== undefined ? { validFrom: record.validFrom } : {}),
  ...(record.validTo !== undefined ? { validTo: record.validTo } : {})
})

/**
 * A record's value written again as a new link of its slot's chain: its statement, world time,
 * kind, label, source and scope, with `tags` (its origin marked) and its delivery unless one is given.
 */
const linkOf = (
  record: MemoryRecord.MemoryRecord,
  tags: ReadonlyArray<string>,
  deliveryPolicy: MemoryRecord.DeliveryPolicy = record.deliveryPolicy
): MemoryRecord.MemoryWriteInput => ({
  ...worldTimeOf(record),
  content: record.content,
  kind: record.kind,
  ...(record.label !== undefined ? { label: record.label } : {}),
  tags,
  sourceType: record.sourceType,
  scope: record.scope,
  deliveryPolicy
})

/**
 * Writes one candidate through the save path (see the module description). `shown` are the live
 * memories the model was shown, by id.
 *
 * @since 0.1.0
 * @category writing
 */
export const writeCandidate = (
  candidate: Candidate,
  options: {
    readonly sessionId: string
    readonly memory: MemoryTools.MemoryToolsConfig
    readonly shown: ReadonlyMap<string, MemoryRecord.MemoryRecord>
    readonly turns: ReadonlyArray<number>
    readonly nearDuplicates?: NearDuplicates | undefined
    /** When each turn was said (decision 0173): the candidate is valid from its newest cited turn. */
    readonly turnTimes?: ReadonlyMap<number, DateTime.Utc> | undefined
  }
) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const { memory } = options
    const turns = candidate.turns.filter((t) => options.turns.includes(t))
    // When it was said (the newest cited turn's time), unless its words name when it began:
    // "since March 2025", read against that time (decision 0176); and when it ends, if its words
    // say: "until Monday" (decision 0178). The start is always before the end.
    const said = validFromOf(turns.length > 0 ? turns : options.turns, options.turnTimes)
    const { validFrom, validTo } = StatedTime.boundsIn(candidate.content, said ?? (yield* DateTime.now), said)
    const provenance = TurnProvenance.tags(options.sessionId, turns.length > 0 ? turns : options.turns)
    // The second screen, asked once per candidate (whichever way it is written): its mark, if any.
    const marked = memory.modelScreen === undefined ? [] : yield* memory.modelScreen.classify(candidate)
    const tags = [...new Set([...provenance, ...(memory.provenanceTags ?? []), ...marked])]
    // An exact duplicate of a live memory of the scope: nothing is written.
    const found = yield* memories.search(candidate.content, {
      scopes: [memory.scope],
      deliverable: true,
      limit: 50
    })
    // A restatement writes nothing: the holder counts it, with this session (decision 0174).
    const corroborate = (holder: string) =>
      Effect.as(
        memories.corroborate(holder, { session: options.sessionId }),
        { _tag: "Corroborated", holder } satisfies Outcome as Outcome
      )
    const exact = found.hits.find((hit) => sameWords(hit.record.content, candidate.content))
    if (exact !== undefined) return yield* corroborate(exact.record.id)

    const propose = (holder: MemoryRecord.MemoryRecord) =>
      Effect.gen(function*() {
        const tag = proposalTag(holder.id)
        if (!Schema.is(MemoryRecord.Tag)(tag)) {
          return { _tag: "Refused", problem: `memory ${holder.id}'s id is too long to propose against` } as Outcome
        }
        const id = yield* (yield* IdGenerator.IdGenerator).next
        const [written] = yield* memories.write([{
          id,
          content: candidate.content,
          kind: candidate.kind,
          ...(candidate.label !== undefined ? { label: candidate.label } : {}),
          tags: [...tags, tag],
          sourceType: "extracted",
          scope: memory.scope,
          deliveryPolicy: "on_demand",
          ...(validFrom !== undefined ? { validFrom } : {}),
          ...(validTo !== undefined ? { validTo } : {})
        }])
        return { _tag: "Proposed", id: written!.id, supersedes: holder.id, flagged: written!.flagged } as Outcome
      })

    const named = candidate.supersedes === undefined ? undefined : options.shown.get(candidate.supersedes)
    if (named !== undefined) {
      // A "correction" that states the value already held is a restatement (decision 0171).
      if (Slot.restates(candidate.content, named.content)) return yield* corroborate(named.id)
      return yield* propose(named)
    }

    // A near-duplicate by embedding (a paraphrase of a live memory in the same scope and slot,
    // stating the same values): nothing is written, as for an exact duplicate. After a named
    // correction (the model said it replaces something), before the save gate (a paraphrase of
    // the holder is no conflict). An embedder that fails makes the check find nothing.
    if (options.nearDuplicates !== undefined) {
      const near = yield* nearDuplicateOf(candidate, found.hits.map((hit) => hit.record), {
        ...options.nearDuplicates,
        spec: memory.spec
      }).pipe(
        Effect.catchAll((error) =>
          Effect.as(
            Effect.logWarning("near-duplicate check skipped").pipe(Effect.annotateLogs({ problem: error.message })),
            undefined
          )
        )
      )
      if (near !== undefined) {
        yield* Effect.annotateCurrentSpan({ "engram.extraction.near_duplicate": near.similarity })
        return yield* corroborate(near.record.id)
      }
    }

    const tools = yield* MemoryTools.make({
      ...memory,
      sourceType: "extracted",
      provenanceTags: tags,
      modelScreen: undefined,
      validFrom,
      validTo,
      sessionId: options.sessionId
    })
    const saved = yield* tools.memory_save({
      content: candidate.content,
      kind: candidate.kind,
      ...(candidate.label !== undefined ? { label: candidate.label } : {})
    }).pipe(Effect.either)
    if (saved._tag === "Left") return { _tag: "Refused", problem: saved.left.message } satisfies Outcome as Outcome
    const result = saved.right
    // memory_save counted it on the holder already.
    if (result.status === "corroborated") {
      return { _tag: "Corroborated", holder: result.holder } satisfies Outcome as Outcome
    }
    if (result.status === "saved") {
      const [record] = (yield* memories.get([result.id])).records
      return { _tag: "Saved", id: result.id, flagged: record?.flagged ?? false } satisfies Outcome as Outcome
    }
    // The holder as stored: the conflict reply names a held holder without its words.
    const [holder] = (yield* memories.get([result.holder.id], { scopes: [memory.scope] })).records
    if (holder === undefined) return { _tag: "Refused", problem: `memory ${result.holder.id} is gone` } as Outcome
    if (sameWords(holder.content, candidate.content)) return yield* corroborate(holder.id)
    // The same new value said again while its proposal waits for review corroborates that
    // proposal: one proposal per value (decision 0171).
    const waiting = found.hits.find((hit) =>
      proposedHolder(hit.record) !== undefined && hit.record.reviewState === "pending" &&
      Slot.sameSlot(memory.spec, hit.record, candidate) && Slot.restates(candidate.content, hit.record.content)
    )
    if (waiting !== undefined) return yield* corroborate(waiting.record.id)
    return yield* propose(holder)
  })

/** The tag a value carries when it was approved from a proposal (or restored): where it was stated. */
const ORIGIN = "approved-from:"

/** The record whose statement a value is: the proposal it was approved from, or itself. */
const originOf = (record: MemoryRecord.MemoryRecord): string =>
  record.tags.find((tag) => tag.startsWith(ORIGIN))?.slice(ORIGIN.length) ?? record.id

const withOrigin = (tags: ReadonlyArray<string>, origin: string): ReadonlyArray<string> => {
  const tag = `${ORIGIN}${origin}`
  return Schema.is(MemoryRecord.Tag)(tag) ? [...tags.filter((t) => !t.startsWith(ORIGIN)), tag] : tags
}

/** When a value was stated: its origin's creation, in epoch milliseconds. */
const statedAt = (record: MemoryRecord.MemoryRecord) =>
  Effect.gen(function*() {
    const origin = originOf(record)
    if (origin === record.id) return record.createdAt.epochMillis
    const [stated] = (yield* (yield* MemoryStore.MemoryStore).get([origin])).records
    return (stated ?? record).createdAt.epochMillis
  })

/** At most this many links are followed along a slot's chain of values. */
const MAX_CHAIN = 256

/** The last record of `record`'s supersession chain: the slot's value now (or its last, if none is live). */
const chainEnd = (record: MemoryRecord.MemoryRecord) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    let at = record
    for (let i = 0; i < MAX_CHAIN && at.supersededBy !== undefined; i++) {
      const [next] = (yield* memories.get([at.supersededBy])).records
      if (next === undefined) break
      at = next
    }
    return at
  })

/** Every earlier value of `record`'s chain, newest link first. */
const chainBefore = (record: MemoryRecord.MemoryRecord) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const earlier: Array<MemoryRecord.MemoryRecord> = []
    let at = record
    for (let i = 0; i < MAX_CHAIN && at.supersedes !== undefined; i++) {
      const [previous] = (yield* memories.get([at.supersedes])).records
      if (previous === undefined) break
      earlier.push(previous)
      at = previous
    }
    return earlier
  })

/** Supersedes `current` with `value` in `state`; the successor takes `current`'s slot. */
const replaceValue = (
  current: MemoryRecord.MemoryRecord,
  value: MemoryRecord.MemoryWriteInput,
  state: MemoryRecord.ReviewState
) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const { successor } = yield* memories.supersede(current.id, value)
    const stated = state === successor.reviewState ? successor : yield* memories.setReviewState(successor.id, state)
    yield* Promotion.inherit(current.id, stated)
    return stated
  })

/**
 * Rejecting a slot's current value restores the one before it: among the chain's earlier values
 * whose statement no one rejected, the newest stated takes the slot again (decision 0172).
 */
const rejectValue = (record: MemoryRecord.MemoryRecord) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const rejected = yield* memories.setReviewState(record.id, "rejected")
    if (record.supersedes === undefined || record.invalidatedAt !== undefined) return rejected
    const earlier = yield* chainBefore(record)
    const refused = new Set([originOf(record), ...earlier.filter((r) => r.reviewState === "rejected").map(originOf)])
    let restore: { readonly record: MemoryRecord.MemoryRecord; readonly at: number } | undefined
    for (const candidate of earlier) {
      if (refused.has(originOf(candidate)) || candidate.reviewState === "rejected") continue
      const at = yield* statedAt(candidate)
      if (restore === undefined || at > restore.at) restore = { record: candidate, at }
    }
    if (restore === undefined) return rejected
    const previous = restore.record
    yield* replaceValue(
      rejected,
      linkOf(previous, withOrigin(previous.tags, originOf(previous))),
      previous.reviewState
    )
    return rejected
  })

/**
 * The approval of a pending memory, by an operator — the one approval path: `engram memory review
 * <id> confirmed`, the HTTP API's review, the MCP operator tool `memory_review` and the extraction
 * service all come here (through {@link review}). For a supersede proposal: the value in force in
 * the holder's slot now (the end of its supersession chain: another approval may have moved it on)
 * is superseded by a record with the proposal's content (provenance kept, delivery `retrieved`,
 * tagged `approved-from:<proposal>`), that record is confirmed, takes the slot's promotion rows
 * (`Promotion.inherit`) and — with `promote` (an agent config at hand) — is promoted under that
 * spec too; the proposal itself is expired (its work is done). When the value in force was stated
 * after the proposal, it is written back after the confirmed one, which becomes history (decision
 * 0172). For any other pending memory: it is confirmed. Fails with {@link ApprovalRefused} when the
 * memory is unknown, not pending, already approved, or its holder is gone. Returns the confirmed
 * record (for a proposal, the successor).
 *
 * @since 0.1.0
 * @category review
 */
export const approve = (
  memoryId: string,
  promote?: Pick<MemoryTools.MemoryToolsConfig, "background" | "spec">
): Effect.Effect<
  MemoryRecord.MemoryRecord,
  ReviewError,
  MemoryStore.MemoryStore | PromotionStore.PromotionStore
> =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const refuse = (message: string) => new ApprovalRefused({ memoryId, message })
    if (!Schema.is(MemoryRecord.MemoryId)(memoryId)) return yield* refuse("that is not a memory id")
    const [record] = (yield* memories.get([memoryId])).records
    if (record === undefined) return yield* refuse(`there is no memory ${memoryId}`)
    if (record.reviewState !== "pending") {
      return yield* refuse(`memory ${memoryId} is ${record.reviewState}, not pending`)
    }
    if (record.invalidatedAt !== undefined) return yield* refuse(`memory ${memoryId} was superseded`)
    const holderId = proposedHolder(record)
    if (holderId === undefined) return yield* memories.setReviewState(memoryId, "confirmed")
    // An approved proposal is expired: its work is done, and a second approval is refused.
    if (record.expiresAt !== undefined && DateTime.lessThanOrEqualTo(record.expiresAt, yield* DateTime.now)) {
      return yield* refuse(`memory ${memoryId} was already approved, or has expired`)
    }
    const [holder] = (yield* memories.get([holderId], { scopes: [record.scope] })).records
    if (holder === undefined) return yield* refuse(`memory ${holderId}, which it proposes to supersede, is gone`)
    // The slot's value now: the end of the holder's chain (another approval may have moved it on).
    const live = yield* chainEnd(holder)
    if (live.invalidatedAt !== undefined) {
      return yield* refuse(`memory ${holderId}, which it proposes to supersede, is no longer live`)
    }
    const value = linkOf(
      record,
      withOrigin(record.tags.filter((tag) => !tag.startsWith("supersede-proposal:")), record.id),
      "retrieved"
    )
    const confirmed = yield* replaceValue(live, value, "confirmed")
    yield* memories.expire(memoryId)
    if (live.reviewState !== "rejected" && (yield* statedAt(live)) > record.createdAt.epochMillis) {
      // A newer value was confirmed first: this one is history. The newer value is written back
      // after it, so the chain holds both and the newest stated stays current (decision 0172).
      yield* replaceValue(confirmed, linkOf(live, withOrigin(live.tags, originOf(live))), live.reviewState)
      return confirmed
    }
    if (promote !== undefined) yield* Promotion.promoteNew([confirmed], promote)
    return confirmed
  }).pipe(Effect.withSpan("engram.extraction.approve", { attributes: { memoryId } }))

/**
 * An operator's review of one memory, what every review entry point calls (the CLI's `memory
 * review`, the HTTP API's `POST /memories/:id/review`, the MCP tool `memory_review`): confirming a
 * supersede proposal carries it out ({@link approve}); every other review sets the state. Model
 * tools and extraction have no path here: no write path confirms its own proposal.
 *
 * @since 0.1.0
 * @category review
 */
export const review = (
  memoryId: string,
  state: MemoryRecord.ReviewState,
  promote?: Pick<MemoryTools.MemoryToolsConfig, "background" | "spec">
): Effect.Effect<MemoryRecord.MemoryRecord, ReviewError, MemoryStore.MemoryStore | PromotionStore.PromotionStore> =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const [record] = Schema.is(MemoryRecord.MemoryId)(memoryId) ? (yield* memories.get([memoryId])).records : []
    if (state === "confirmed" && record !== undefined && proposedHolder(record) !== undefined) {
      return yield* approve(memoryId, promote)
    }
    // Rejecting a slot's current value that replaced another restores the one before it.
    if (state === "rejected" && record !== undefined && record.supersedes !== undefined) {
      return yield* rejectValue(record)
    }
    return yield* memories.setReviewState(memoryId, state)
  })
