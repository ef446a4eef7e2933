import { describe, expect, it } from "@effect/vitest"
import { MemoryLimits, type MemoryRecord, type MemoryStoreError } from "@engram/core"
import * as Effect from "effect/Effect"
import * as TestClock from "effect/TestClock"
import { DAY, failure, idsOf, type Provide, store, T0 } from "./harness.js"

const turn = (
  scope: MemoryRecord.Scope,
  thread: string,
  n: number,
  extra: Partial<MemoryRecord.MemoryWriteInput> = {}
): MemoryRecord.MemoryWriteInput => ({
  id: `${scope.replace(/[^a-z0-9]/g, "")}-${thread}-${String(n).padStart(2, "0")}`,
  content: `Turn ${n} of ${thread}`,
  kind: "episode",
  sourceType: "conversation",
  scope,
  position: { thread, turn: n },
  ...extra
})

const A = "project:a" as MemoryRecord.Scope
const B = "project:b" as MemoryRecord.Scope

/**
 * Two threads of ten turns in project:a, the same thread name in project:b, a record of
 * project:a without a position, and — in thread t1 of project:a — a rejected turn (6), a confirmed
 * one (3), an expiring one (2, one day), a superseded one (7) and an on-demand one (8).
 */
const writeConversations = Effect.gen(function*() {
  const s = yield* store
  yield* TestClock.setTime(T0)
  const inputs: Array<MemoryRecord.MemoryWriteInput> = []
  for (let n = 0; n < 10; n++) {
    inputs.push(
      turn(A, "t1", n, {
        ...(n === 2 ? { expiresInDays: 1 } : {}),
        ...(n === 8 ? { deliveryPolicy: "on_demand" as const } : {})
      })
    )
    inputs.push(turn(A, "t2", n))
    inputs.push(turn(B, "t1", n))
  }
  inputs.push({ id: "a-loose", content: "No position", kind: "note", scope: A })
  yield* s.write(inputs)
  yield* s.setReviewState("projecta-t1-06", "rejected")
  yield* s.setReviewState("projecta-t1-03", "confirmed")
  yield* s.supersede("projecta-t1-07", { id: "projecta-t1-07b", content: "Turn 7, corrected", kind: "episode" })
})

const ids = (prefix: string, turns: ReadonlyArray<number>) =>
  turns.map((n) => `${prefix}-${String(n).padStart(2, "0")}`)

const limited = (error: MemoryStoreError.InvalidMemoryQuery | MemoryStoreError.MemoryStoreFailure) =>
  error._tag === "InvalidMemoryQuery" ? error.limit : undefined

export const neighbours = <RExtra, LE>(provide: Provide<RExtra, LE>) => {
  describe("reads", () => {
    it.effect("the records within the window of each position, in conversation order, each once", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const read = yield* s.neighbours({
          positions: [{ scope: A, thread: "t2", turn: 5 }, { scope: A, thread: "t1", turn: 4 }, {
            scope: A,
            thread: "t2",
            turn: 6
          }],
          window: 1
        })
        // t1 before t2 (thread order), overlapping windows of t2 merged: 4–7 once.
        expect(idsOf(read.records)).toEqual([...ids("projecta-t1", [3, 4, 5]), ...ids("projecta-t2", [4, 5, 6, 7])])
        expect(read.skipped).toBe(0)
      })))

    it.effect("window 0 reads the position's own turn; the window stops at turn 0", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const own = yield* s.neighbours({ positions: [{ scope: A, thread: "t2", turn: 3 }], window: 0 })
        expect(idsOf(own.records)).toEqual(["projecta-t2-03"])
        const start = yield* s.neighbours({ positions: [{ scope: A, thread: "t2", turn: 1 }], window: 3 })
        expect(idsOf(start.records)).toEqual(ids("projecta-t2", [0, 1, 2, 3, 4]))
        const none = yield* s.neighbours({ positions: [], window: 2 })
        expect(none.records).toEqual([])
        const elsewhere = yield* s.neighbours({ positions: [{ scope: A, thread: "t9", turn: 1 }], window: 2 })
        expect(elsewhere.records).toEqual([])
      })))

    it.effect("a thread of another scope is another conversation; the scopes filter applies on top", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const inB = yield* s.neighbours({ positions: [{ scope: B, thread: "t1", turn: 5 }], window: 1 })
        expect(idsOf(inB.records)).toEqual(ids("projectb-t1", [4, 5, 6]))
        const filtered = yield* s.neighbours({
          positions: [{ scope: B, thread: "t1", turn: 5 }, { scope: A, thread: "t2", turn: 5 }],
          window: 1,
          scopes: [A]
        })
        expect(idsOf(filtered.records)).toEqual(ids("projecta-t2", [4, 5, 6]))
        const foreign = yield* s.neighbours({
          positions: [{ scope: B, thread: "t1", turn: 5 }],
          window: 1,
          scopes: [A]
        })
        expect(foreign.records).toEqual([])
      })))

    it.effect("deliverable, review, policy and expiry filters apply exactly as in search", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const around = { positions: [{ scope: A, thread: "t1", turn: 5 }], window: 3 } as const
        // Invalidated records are left out unless asked for, as in a listing.
        const all = yield* s.neighbours(around)
        expect(idsOf(all.records)).toEqual(ids("projecta-t1", [2, 3, 4, 5, 6, 8]))
        const withSuperseded = yield* s.neighbours({ ...around, includeSuperseded: true })
        expect(idsOf(withSuperseded.records)).toEqual(ids("projecta-t1", [2, 3, 4, 5, 6, 7, 8]))
        const deliverable = yield* s.neighbours({ ...around, deliverable: true })
        expect(idsOf(deliverable.records)).toEqual(ids("projecta-t1", [2, 3, 4, 5, 8]))
        const projected = yield* s.neighbours({
          ...around,
          deliverable: true,
          deliveryPolicies: ["always", "retrieved"]
        })
        expect(idsOf(projected.records)).toEqual(ids("projecta-t1", [2, 3, 4, 5]))
        const confirmed = yield* s.neighbours({ ...around, reviewStates: ["confirmed"] })
        expect(idsOf(confirmed.records)).toEqual(ids("projecta-t1", [3]))
        const episodes = yield* s.neighbours({ ...around, kinds: ["fact"] })
        expect(episodes.records).toEqual([])
        // A minute past the day: a batch's records are stamped a millisecond apart (decision 0173).
        yield* TestClock.adjust(DAY + 60_000)
        const later = yield* s.neighbours({ ...around, deliverable: true })
        expect(idsOf(later.records)).toEqual(ids("projecta-t1", [3, 4, 5, 8]))
        // The successor has no position of its own: it is no neighbour.
        expect(idsOf(later.records)).not.toContain("projecta-t1-07b")
      })))

    it.effect("at most limit records, the first in conversation order", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const read = yield* s.neighbours({
          positions: [{ scope: A, thread: "t2", turn: 8 }, { scope: A, thread: "t2", turn: 1 }],
          window: 1,
          limit: 4
        })
        expect(idsOf(read.records)).toEqual(ids("projecta-t2", [0, 1, 2, 7]))
      })))

    it.effect("exclude leaves ids out before the limit counts; an empty exclude leaves none out", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const around = {
          positions: [{ scope: A, thread: "t2", turn: 8 }, { scope: A, thread: "t2", turn: 1 }],
          window: 1
        } as const
        const read = yield* s.neighbours({
          ...around,
          // The hits themselves, an id of another thread, and one no record has.
          exclude: ["projecta-t2-01", "projecta-t2-08", "projecta-t1-02", "nothing-here"],
          limit: 3
        })
        expect(idsOf(read.records)).toEqual(ids("projecta-t2", [0, 2, 7]))
        const all = yield* s.neighbours({ ...around, exclude: [] })
        expect(idsOf(all.records)).toEqual(ids("projecta-t2", [0, 1, 2, 7, 8, 9]))
        // An id that is a SQL or JSON metacharacter is refused by the id schema, not read as syntax.
        const error = yield* failure(s.neighbours({ ...around, exclude: ["a') OR 1=1 --"] }))
        expect(error._tag).toBe("InvalidMemoryQuery")
        expect(error.message).toContain("exclude")
      })))
  })

  describe("write order (decision 0233)", () => {
    const episode = (id: string, scope: MemoryRecord.Scope = A): MemoryRecord.MemoryWriteInput => ({
      id,
      content: `Said ${id}`,
      kind: "episode",
      scope
    })
    /**
     * Episodes of project:a written without positions, one at a time and in batches, between
     * writes to project:b, a positioned episode, a fact and a note: only project:a's episodes
     * without a position are its write order (w0 … w5), places given in item order.
     */
    const writeOrder = Effect.gen(function*() {
      const s = yield* store
      yield* TestClock.setTime(T0)
      yield* s.write([episode("w0"), episode("x0", B), episode("w1")])
      yield* s.write([{ id: "f0", content: "A fact", kind: "fact", scope: A }])
      yield* s.write([{ ...episode("p0"), position: { thread: "t1", turn: 0 } }, episode("w2")])
      yield* s.write([episode("x1", B)])
      yield* s.write([episode("w3"), { id: "n0", content: "A note", kind: "note", scope: A }, episode("w4")])
      yield* s.supersede("w4", { id: "w5", content: "Said w4, corrected", kind: "episode" })
    })

    it.effect("an episode without a position has its scope's write order as its thread; its record keeps no position", () =>
      provide(Effect.gen(function*() {
        yield* writeOrder
        const s = yield* store
        const read = yield* s.neighbours({ positions: [], around: ["w2"], window: 1, includeSuperseded: true })
        expect(idsOf(read.records)).toEqual(["w1", "w2", "w3"])
        expect(read.records.map((r) => r.position)).toEqual([undefined, undefined, undefined])
        expect(read.places).toEqual([
          { id: "w2", scope: A, thread: "", turn: 2 },
          { id: "w1", scope: A, thread: "", turn: 1 },
          { id: "w2", scope: A, thread: "", turn: 2 },
          { id: "w3", scope: A, thread: "", turn: 3 }
        ])
        // A successor is written after everything else: it takes the next place, not its original's.
        const wide = yield* s.neighbours({ positions: [], around: ["w0", "x1"], exclude: ["w0"], window: 9 })
        expect(idsOf(wide.records)).toEqual(["w1", "w2", "w3", "w5", "x0", "x1"])
        expect(wide.places.map((p) => [p.id, p.turn])).toEqual([
          ["w0", 0],
          ["x1", 1],
          ["w1", 1],
          ["w2", 2],
          ["w3", 3],
          ["w5", 5],
          ["x0", 0],
          ["x1", 1]
        ])
      })))

    it.effect("a record with a position keeps its thread; other kinds and a forgotten place are no neighbours", () =>
      provide(Effect.gen(function*() {
        yield* writeOrder
        const s = yield* store
        const positioned = yield* s.neighbours({ positions: [], around: ["p0"], window: 3 })
        expect(idsOf(positioned.records)).toEqual(["p0"])
        expect(positioned.places[0]).toEqual({ id: "p0", scope: A, thread: "t1", turn: 0 })
        const placeless = yield* s.neighbours({ positions: [], around: ["f0", "n0", "ghost"], window: 3 })
        expect(placeless).toEqual({ records: [], skipped: 0, places: [] })
        // Places are never reused: a forgotten turn leaves a gap, the next write goes on after.
        yield* s.forget({ ids: ["w5"] }, { by: "test" })
        yield* s.write([episode("w6")])
        const after = yield* s.neighbours({ positions: [], around: ["w6"], window: 1, includeSuperseded: true })
        expect(after.places.map((p) => [p.id, p.turn])).toEqual([["w6", 6], ["w6", 6]])
        // The explicit form reads the write order too, by its thread.
        const explicit = yield* s.neighbours({ positions: [{ scope: A, thread: "t1", turn: 0 }], window: 1 })
        expect(idsOf(explicit.records)).toEqual(["p0"])
      })))

    it.effect("records around count against maxNeighbourPositions together with the positions", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const { maxNeighbourPositions } = MemoryLimits.defaults
        const error = yield* failure(s.neighbours({
          positions: [{ scope: A, thread: "t", turn: 0 }],
          around: Array.from({ length: maxNeighbourPositions }, (_, i) => `id-${i}`),
          window: 1
        }))
        expect(limited(error)).toEqual({
          name: "maxNeighbourPositions",
          max: maxNeighbourPositions,
          size: maxNeighbourPositions + 1
        })
      })))
  })

  describe("hostile input", () => {
    it.effect("a window over maxNeighbourWindow is refused, naming the limit", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const { maxNeighbourWindow } = MemoryLimits.defaults
        const at = { positions: [{ scope: A, thread: "t1", turn: 5 }] }
        expect((yield* s.neighbours({ ...at, window: maxNeighbourWindow })).records.length).toBeGreaterThan(0)
        for (const window of [maxNeighbourWindow + 1, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
          const error = yield* failure(s.neighbours({ ...at, window }))
          expect(error._tag).toBe("InvalidMemoryQuery")
          expect(limited(error)).toEqual({ name: "maxNeighbourWindow", max: maxNeighbourWindow, size: window })
          expect(error.message).toContain("MemoryLimits.maxNeighbourWindow")
        }
        for (const window of [-1, 1.5, Number.NaN]) {
          const error = yield* failure(s.neighbours({ ...at, window }))
          expect(error._tag).toBe("InvalidMemoryQuery")
          expect(error.message).toContain("window")
        }
      })))

    it.effect("more positions than maxNeighbourPositions are refused, naming the limit", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const { maxNeighbourPositions } = MemoryLimits.defaults
        const positions = Array.from(
          { length: maxNeighbourPositions + 1 },
          (_, i) => ({ scope: A, thread: "t", turn: i })
        )
        const error = yield* failure(s.neighbours({ positions, window: 1 }))
        expect(limited(error)).toEqual({
          name: "maxNeighbourPositions",
          max: maxNeighbourPositions,
          size: maxNeighbourPositions + 1
        })
        expect(error.message).toContain("MemoryLimits.maxNeighbourPositions")
        // At the limit, one call answers for all of them.
        const read = yield* s.neighbours({ positions: positions.slice(1), window: 1 })
        expect(read.records).toEqual([])
      })))

    it.effect("more ids left out than maxNeighbourExcluded are refused, naming the limit", () =>
      provide(Effect.gen(function*() {
        const s = yield* store
        const { maxNeighbourExcluded } = MemoryLimits.defaults
        const exclude = Array.from({ length: maxNeighbourExcluded + 1 }, (_, i) => `id-${i}`)
        const positions = [{ scope: A, thread: "t", turn: 1 }]
        const error = yield* failure(s.neighbours({ positions, window: 1, exclude }))
        expect(limited(error)).toEqual({
          name: "maxNeighbourExcluded",
          max: maxNeighbourExcluded,
          size: maxNeighbourExcluded + 1
        })
        expect(error.message).toContain("MemoryLimits.maxNeighbourExcluded")
        const read = yield* s.neighbours({ positions, window: 1, exclude: exclude.slice(1) })
        expect(read.records).toEqual([])
      })))

    it.effect("a position that is not one is refused with InvalidMemoryQuery naming the field", () =>
      provide(Effect.gen(function*() {
        yield* writeConversations
        const s = yield* store
        const bad: ReadonlyArray<readonly [unknown, string]> = [
          [{ scope: A, thread: "", turn: 1 }, "thread"],
          [{ scope: A, thread: "t".repeat(201), turn: 1 }, "thread"],
          [{ scope: A, thread: "t\u0000x", turn: 1 }, "thread"],
          [{ scope: A, thread: "t1\n", turn: 1 }, "thread"],
          [{ scope: A, thread: "\uD800", turn: 1 }, "thread"],
          [{ scope: A, thread: "t1", turn: -1 }, "turn"],
          [{ scope: A, thread: "t1", turn: 2 ** 40 }, "turn"],
          [{ scope: "nowhere", thread: "t1", turn: 1 }, "scope"],
          [{ scope: A, thread: 7, turn: 1 }, "thread"]
        ]
        for (const [position, field] of bad) {
          const error = yield* failure(
            s.neighbours({
              positions: [position as MemoryRecord.ConversationPosition & { scope: MemoryRecord.Scope }],
              window: 1
            })
          )
          expect(error._tag).toBe("InvalidMemoryQuery")
          expect(error.message).toContain(field)
        }
        // SQL and LIKE metacharacters in a thread are text like any other.
        const quoted = yield* s.neighbours({ positions: [{ scope: A, thread: "t1' OR '1'='1", turn: 1 }], window: 2 })
        expect(quoted.records).toEqual([])
        const wild = yield* s.neighbours({ positions: [{ scope: A, thread: "t%", turn: 1 }], window: 2 })
        expect(wild.records).toEqual([])
      })))
  })
}
