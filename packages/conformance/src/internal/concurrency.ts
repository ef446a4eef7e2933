import { expect, it } from "@effect/vitest"
import type { MemoryRecord, MemoryStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { type Provide, store } from "./harness.js"

const STATES: ReadonlyArray<MemoryRecord.ReviewState> = ["confirmed", "pending", "rejected"]
const SEED_RECORDS = 40
/** Operations aim at the newest dozen ids, so they collide. */
const HOT_SET = 12

/** How many operations the racing fibers run between them, and how many fibers (issue 26: 10,000 × 8). */
export interface RaceSize {
  readonly operations: number
  readonly fibers: number
}

// A small deterministic PRNG (mulberry32): the same choices every run, whatever the interleaving.
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * An operation's place in real time, on a logical clock every invocation and every response
 * ticks: `end < other.start` means it answered before the other one was called.
 */
interface Timed<A> {
  readonly start: number
  readonly end: number
  readonly exit: Exit.Exit<A, { readonly _tag: string }>
}

const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>): string | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : undefined

/**
 * The states a record may end in if the review changes were linearizable: the state of a change
 * that no other change was called after — any such change can be the last in a serial order.
 */
const possibleFinalStates = (
  initial: MemoryRecord.ReviewState,
  writes: ReadonlyArray<{ readonly start: number; readonly end: number; readonly state: MemoryRecord.ReviewState }>
): ReadonlySet<MemoryRecord.ReviewState> => {
  if (writes.length === 0) return new Set([initial])
  return new Set(writes.filter((w) => !writes.some((other) => other.start > w.end)).map((w) => w.state))
}

/** What a race left: every inconsistency found (empty when linearizable) and the operations run. */
export interface RaceReport {
  readonly problems: ReadonlyArray<string>
  readonly operations: number
  readonly superseded: number
  readonly refused: number
}

/**
 * Races supersede, expire and review on the same few records, one fiber per entry of `stores`
 * (the same store several times, or independent clients of one database), `perFiber` operations
 * each, then reads the end state through the last store. Every acknowledged operation must be
 * visible at the end, each record superseded at most once (a loser gets `MemoryConflict` and
 * leaves no successor), the links agree both ways, and each record's review state is one some
 * serial order of the acknowledged changes leaves. Each violation is one entry of `problems`.
 *
 * @since 0.1.0
 * @category conformance
 */
export const raceLifecycle = (
  stores: ReadonlyArray<MemoryStore.Service>,
  perFiber: number
) =>
  Effect.gen(function*() {
    const operations = perFiber * stores.length
    const seedIds = Array.from({ length: SEED_RECORDS }, (_, i) => `seed-${String(i).padStart(3, "0")}`)
    const seeded = yield* stores[0]!.write(
      seedIds.map((id, i) => ({
        id,
        content: `seed record ${i}`,
        kind: "fact" as const,
        sourceType: "extracted" as const
      }))
    )
    const initialState = new Map<string, MemoryRecord.ReviewState>(seeded.map((r) => [r.id, r.reviewState]))
    const known: Array<string> = [...seedIds]
    const supersedes: Array<Timed<MemoryStore.Supersession> & { readonly oldId: string; readonly newId: string }> = []
    const reviews: Array<
      Timed<MemoryRecord.MemoryRecord> & { readonly id: string; readonly state: MemoryRecord.ReviewState }
    > = []
    const expiries: Array<Timed<MemoryRecord.MemoryRecord> & { readonly id: string }> = []
    let tick = 0
    const timed = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>) =>
      Effect.suspend(() => {
        const start = tick++
        return Effect.map(Effect.exit(effect), (exit): Timed<A> => ({ start, end: tick++, exit }))
      })

    yield* Effect.forEach(
      stores,
      (s, f) =>
        Effect.gen(function*() {
          const random = rng(1000 + f)
          const pick = () => known[Math.max(0, known.length - 1 - Math.floor(random() * HOT_SET))]!
          for (let i = 0; i < perFiber; i++) {
            const roll = random()
            if (roll < 0.45) {
              const oldId = pick()
              const newId = `f${f}-op${i}`
              const outcome = yield* timed(
                s.supersede(oldId, {
                  id: newId,
                  content: `successor of ${oldId}`,
                  kind: "fact",
                  sourceType: "extracted"
                })
              )
              supersedes.push({ ...outcome, oldId, newId })
              if (Exit.isSuccess(outcome.exit)) {
                known.push(newId)
                initialState.set(newId, outcome.exit.value.successor.reviewState)
              }
            } else if (roll < 0.9) {
              const id = pick()
              const state = STATES[Math.floor(random() * STATES.length)]!
              reviews.push({ ...(yield* timed(s.setReviewState(id, state))), id, state })
            } else {
              const id = pick()
              expiries.push({ ...(yield* timed(s.expire(id))), id })
            }
          }
        }),
      { concurrency: "unbounded", discard: true }
    )

    const problems: Array<string> = []
    const check = (ok: boolean, problem: () => string) => {
      if (!ok) problems.push(problem())
    }
    // Every failure is a lost race (MemoryConflict), never a backend failure or a defect.
    const exits: Array<Exit.Exit<unknown, { readonly _tag: string }>> = [
      ...supersedes.map((o) => o.exit),
      ...reviews.map((o) => o.exit),
      ...expiries.map((o) => o.exit)
    ]
    for (const exit of exits) {
      if (Exit.isFailure(exit)) {
        const tag = failureTag(exit)
        check(tag === "MemoryConflict", () => `an operation failed with ${tag ?? "a defect"}`)
      }
    }
    const reader = stores[stores.length - 1]!
    const listing = yield* reader.list({ includeSuperseded: true, limit: 1_000 })
    const all: Array<MemoryRecord.MemoryRecord> = [...listing.records]
    let cursor = listing.nextCursor
    while (cursor !== undefined) {
      const page: MemoryStore.ListPage = yield* reader.list({ includeSuperseded: true, limit: 1_000, cursor })
      all.push(...page.records)
      cursor = page.nextCursor
    }
    const byId = new Map(all.map((r) => [r.id, r]))
    const won = supersedes.filter((o) => Exit.isSuccess(o.exit))
    const lost = supersedes.filter((o) => !Exit.isSuccess(o.exit))

    // Exactly the winners' successors exist; no loser left a successor behind.
    check(
      byId.size === SEED_RECORDS + won.length,
      () => `${byId.size} records, expected ${SEED_RECORDS + won.length}`
    )
    for (const o of lost) check(!byId.has(o.newId), () => `losing successor ${o.newId} was stored`)
    const winsPerOriginal = new Map<string, number>()
    for (const o of won) winsPerOriginal.set(o.oldId, (winsPerOriginal.get(o.oldId) ?? 0) + 1)
    for (const [id, n] of winsPerOriginal) check(n === 1, () => `${id} was superseded ${n} times`)
    for (const o of won) {
      const original = byId.get(o.oldId)
      const successor = byId.get(o.newId)
      check(successor?.supersedes === o.oldId, () => `acknowledged successor ${o.newId} is missing or unlinked`)
      check(original?.supersededBy === o.newId, () => `${o.oldId} lost its acknowledged supersession by ${o.newId}`)
      check(
        original?.invalidationReason === `superseded_by:${o.newId}`,
        () => `${o.oldId} has invalidation reason ${original?.invalidationReason}`
      )
    }
    // A loser lost to a winner: its original was superseded by somebody else.
    for (const o of lost) {
      check(winsPerOriginal.get(o.oldId) === 1, () => `${o.oldId} refused a supersession but has no successor`)
    }
    for (const record of byId.values()) {
      check(
        (record.invalidatedAt !== undefined) === (record.supersededBy !== undefined),
        () => `${record.id} is invalidated without a successor (or the reverse)`
      )
      const writes = reviews.filter((r) => r.id === record.id && Exit.isSuccess(r.exit))
      const possible = possibleFinalStates(initialState.get(record.id) ?? record.reviewState, writes)
      check(
        possible.has(record.reviewState),
        () => `${record.id} ended ${record.reviewState}, no serial order gives that`
      )
    }
    for (const o of expiries) {
      if (Exit.isSuccess(o.exit)) {
        check(byId.get(o.id)?.expiresAt !== undefined, () => `acknowledged expiry of ${o.id} lost`)
      }
    }
    // Enough collisions happened for the check to mean something.
    check(
      won.length > 0 && (operations < 200 || lost.length > 0),
      () => `only ${won.length} won, ${lost.length} lost`
    )

    return {
      problems,
      operations: supersedes.length + reviews.length + expiries.length,
      superseded: won.length,
      refused: lost.length
    } satisfies RaceReport
  })

/**
 * The concurrency tier: `size.fibers` fibers racing lifecycle operations on one store
 * ({@link raceLifecycle}); `inconsistent` counts every violation, so a failure reports how many.
 */
export const concurrency = <RExtra, LE>(provide: Provide<RExtra, LE>, size: RaceSize) => {
  const { fibers, operations } = size
  const perFiber = Math.ceil(operations / fibers)
  it.effect(
    `${fibers} fibers, ${perFiber * fibers} racing lifecycle operations on one store: 0 inconsistent outcomes`,
    () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const report = yield* raceLifecycle(Array.from({ length: fibers }, () => s), perFiber)
        expect({ inconsistent: report.problems.length, first: report.problems.slice(0, 5) }).toEqual({
          inconsistent: 0,
          first: []
        })
        expect(report.operations).toBe(perFiber * fibers)
      })),
    // Generous: the full 10,000 on a loaded 2-core machine, a server-backed store included.
    600_000
  )
}
