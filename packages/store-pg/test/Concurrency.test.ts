import { expect, it } from "@effect/vitest"
import { MemoryRecord, MemoryStore } from "@engram/core"
import { PgDatabase, PgMemoryStore } from "@engram/store-pg"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import { describePg } from "./pgGate.js"
import { dropSchema } from "./utilities.js"

const CLIENTS = 8
const OPS_PER_CLIENT = 150
const SEED_RECORDS = 40
const STATES: ReadonlyArray<MemoryRecord.ReviewState> = ["confirmed", "pending", "rejected"]

// A small deterministic PRNG (mulberry32): the same choices every run, whatever the interleaving.
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Eight stores on one schema, each with its own pool: eight independent clients. */
const openClients = (url: string, schema: string): Effect.Effect<
  ReadonlyArray<MemoryStore.Service>,
  unknown,
  Scope.Scope
> =>
  Effect.forEach(
    Array.from({ length: CLIENTS }, (_, i) => i),
    () =>
      Effect.map(
        Layer.build(PgMemoryStore.layer({ url, schema, maxConnections: 2 })),
        (context) => Context.get(context, MemoryStore.MemoryStore)
      ),
    { concurrency: "unbounded" }
  )

interface Timed<A> {
  readonly start: number
  readonly end: number
  readonly exit: Exit.Exit<A, { readonly _tag: string }>
}

const timed = <A, E extends { readonly _tag: string }>(effect: Effect.Effect<A, E>): Effect.Effect<Timed<A>> =>
  Effect.gen(function*() {
    const start = performance.now()
    const exit = yield* Effect.exit(effect)
    return { start, end: performance.now(), exit }
  })

const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>): string | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error._tag : undefined

/**
 * The state a record may end in if the writes were linearizable: the value of a write that no
 * other write started after (in real time) — any such write can be the last in a serial order.
 */
const possibleFinalStates = (
  initial: MemoryRecord.ReviewState,
  writes: ReadonlyArray<{ readonly start: number; readonly end: number; readonly state: MemoryRecord.ReviewState }>
): ReadonlySet<MemoryRecord.ReviewState> => {
  if (writes.length === 0) return new Set([initial])
  return new Set(writes.filter((w) => !writes.some((other) => other.start > w.end)).map((w) => w.state))
}

describePg("PgMemoryStore under concurrent connections", (url) => {
  const withSchema = <A, E>(f: (schema: string) => Effect.Effect<A, E, Scope.Scope>) =>
    Effect.scoped(
      Effect.gen(function*() {
        const schema = PgDatabase.temporarySchemaName("engram_conc")
        yield* Effect.addFinalizer(() => dropSchema(url, schema))
        return yield* f(schema)
      })
    )

  it.live(
    "eight clients superseding one record at once: exactly one wins, the rest get MemoryConflict",
    () =>
      withSchema((schema) =>
        Effect.gen(function*() {
          const clients = yield* openClients(url, schema)
          for (let round = 0; round < 25; round++) {
            const original = `race-${round}`
            yield* clients[0]!.write([{ id: original, content: `round ${round}`, kind: "fact" }])
            const outcomes = yield* Effect.forEach(
              clients,
              (client, i) =>
                timed(
                  client.supersede(original, { id: `race-${round}-by-${i}`, content: `winner ${i}`, kind: "fact" })
                ),
              { concurrency: "unbounded" }
            )
            const winners = outcomes.flatMap((o, i) => (Exit.isSuccess(o.exit) ? [i] : []))
            expect(winners).toHaveLength(1)
            expect(outcomes.map((o) => failureTag(o.exit)).filter((t) => t !== undefined)).toEqual(
              Array(CLIENTS - 1).fill("MemoryConflict")
            )
            const winner = `race-${round}-by-${winners[0]}`
            const stored = yield* clients[1]!.get([original, ...clients.map((_, i) => `race-${round}-by-${i}`)])
            expect(stored.records.map((r) => r.id)).toEqual([original, winner])
            expect(stored.records[0]!.supersededBy).toBe(winner)
            expect(stored.records[0]!.invalidationReason).toBe(`superseded_by:${winner}`)
            expect(stored.records[1]!.supersedes).toBe(original)
          }
        })
      ),
    60_000
  )

  const operations = CLIENTS * OPS_PER_CLIENT
  it.live(
    `${CLIENTS} clients, ${operations} mixed lifecycle operations: the end state is a serial one`,
    () =>
      withSchema((schema) =>
        Effect.gen(function*() {
          const clients = yield* openClients(url, schema)
          const seedIds = Array.from({ length: SEED_RECORDS }, (_, i) => `seed-${String(i).padStart(3, "0")}`)
          const seeded = yield* clients[0]!.write(
            seedIds.map((id, i) => ({
              id,
              content: `seed record ${i}`,
              kind: "fact" as const,
              sourceType: "extracted" as const
            }))
          )
          const initialState = new Map<string, MemoryRecord.ReviewState>(seeded.map((r) => [r.id, r.reviewState]))
          // Ids any client may target; successors join as they are created, so chains grow.
          const known: Array<string> = [...seedIds]
          const supersedes: Array<
            Timed<MemoryStore.Supersession> & { readonly oldId: string; readonly newId: string }
          > = []
          const reviews: Array<
            Timed<MemoryRecord.MemoryRecord> & { readonly id: string; readonly state: MemoryRecord.ReviewState }
          > = []
          const expiries: Array<Timed<MemoryRecord.MemoryRecord> & { readonly id: string }> = []

          yield* Effect.forEach(
            clients,
            (client, c) =>
              Effect.gen(function*() {
                const random = rng(1000 + c)
                // A hot set: most operations hit the most recent dozen ids, so they collide.
                const pick = () => known[Math.max(0, known.length - 1 - Math.floor(random() * 12))]!
                for (let i = 0; i < OPS_PER_CLIENT; i++) {
                  const roll = random()
                  if (roll < 0.45) {
                    const oldId = pick()
                    const newId = `c${c}-op${i}`
                    const outcome = yield* timed(
                      client.supersede(oldId, {
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
                    reviews.push({ ...(yield* timed(client.setReviewState(id, state))), id, state })
                  } else {
                    const id = pick()
                    expiries.push({ ...(yield* timed(client.expire(id))), id })
                  }
                }
              }),
            { concurrency: "unbounded", discard: true }
          )

          // Every failure is a typed lifecycle outcome, never a backend failure (deadlock, serialization…).
          const tags = [...supersedes, ...reviews, ...expiries].flatMap((o) => {
            const tag = failureTag(o.exit)
            return tag === undefined ? [] : [tag]
          })
          expect(new Set(tags)).toEqual(new Set(["MemoryConflict"]))
          expect(supersedes.length + reviews.length + expiries.length).toBe(CLIENTS * OPS_PER_CLIENT)

          const listing = yield* clients[3]!.list({ includeSuperseded: true, limit: 10_000 })
          expect(listing.skipped).toBe(0)
          const byId = new Map(listing.records.map((r) => [r.id, r]))
          const won = supersedes.filter((s) => Exit.isSuccess(s.exit))
          const lost = supersedes.filter((s) => !Exit.isSuccess(s.exit))
          expect(won.length).toBeGreaterThan(50)
          expect(lost.length).toBeGreaterThan(50)

          // Exactly the winners' successors exist; no loser left a successor behind.
          expect(byId.size).toBe(SEED_RECORDS + won.length)
          for (const s of lost) expect(byId.has(s.newId)).toBe(false)

          // Each record superseded at most once, and the links agree in both directions.
          const winsPerOriginal = new Map<string, number>()
          for (const s of won) winsPerOriginal.set(s.oldId, (winsPerOriginal.get(s.oldId) ?? 0) + 1)
          expect([...winsPerOriginal.values()].every((n) => n === 1)).toBe(true)
          for (const s of won) {
            const original = byId.get(s.oldId)!
            const successor = byId.get(s.newId)!
            expect(original.supersededBy).toBe(s.newId)
            expect(original.invalidationReason).toBe(`superseded_by:${s.newId}`)
            expect(original.invalidatedAt).toEqual(successor.createdAt)
            expect(successor.supersedes).toBe(s.oldId)
          }
          // A loser lost because its original was already superseded by somebody else.
          for (const s of lost) expect(winsPerOriginal.get(s.oldId)).toBe(1)
          // Nothing is invalidated without a successor, and every successor's original is invalidated.
          for (const record of byId.values()) {
            expect(record.invalidatedAt !== undefined).toBe(record.supersededBy !== undefined)
            if (record.supersedes !== undefined) expect(byId.get(record.supersedes)!.supersededBy).toBe(record.id)
          }
          // Chains never fork or loop: following supersededBy from any record ends at a live one.
          for (const record of byId.values()) {
            const seen = new Set<string>()
            let at: MemoryRecord.MemoryRecord = record
            while (at.supersededBy !== undefined) {
              expect(seen.has(at.id)).toBe(false)
              seen.add(at.id)
              at = byId.get(at.supersededBy)!
            }
            expect(at.invalidatedAt).toBeUndefined()
          }

          // Review state: what some serial order of the committed reviews leaves behind.
          for (const record of byId.values()) {
            const writes = reviews.filter((r) => r.id === record.id && Exit.isSuccess(r.exit))
            const possible = possibleFinalStates(initialState.get(record.id)!, writes)
            expect(possible.has(record.reviewState), record.id).toBe(true)
          }
          // Expiry: a record any expire reached carries an expiry.
          for (const e of expiries) if (Exit.isSuccess(e.exit)) expect(byId.get(e.id)!.expiresAt).toBeDefined()
        })
      ),
    120_000
  )
})
