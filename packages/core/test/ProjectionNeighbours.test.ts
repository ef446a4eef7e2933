/**
 * `project()` at default settings delivers a recall hit's conversation neighbours (decision 0090):
 * the turns up to `DEFAULT_NEIGHBOUR_WINDOW` (2) before and after it in its thread, each as its own
 * line attributed to the hit, none farther away, none from another thread.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  type MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  PromotionStore,
  TelemetryStore
} from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const layer = ContextProjection.layer.pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      MemoryStore.layerMemory,
      PromotionStore.layerMemory,
      TelemetryStore.layerMemory,
      IdGenerator.sequential("mem")
    )
  )
)

/** One conversation of seven turns; the question's words are in turn 3 only. */
const turns = [
  "Mel: How was the weekend?",
  "Caroline: Busy, we went up north.",
  "Mel: Anywhere nice?",
  "Caroline: The pottery workshop at Lakeside was great.",
  "Mel: Did you make anything?",
  "Caroline: A blue bowl for my mum.",
  "Mel: Lovely, see you Monday."
]

const seed = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  const written = yield* store.write(
    turns.map((content, turn): MemoryRecord.MemoryWriteInput => ({
      content,
      kind: "episode",
      sourceType: "conversation",
      position: { thread: "session-1", turn }
    }))
  )
  // The same words in another thread, far from anything else: a hit with no neighbours.
  yield* store.write([{
    content: "Mel: pottery workshop again?",
    kind: "episode",
    sourceType: "conversation",
    position: { thread: "session-2", turn: 40 }
  }])
  return written
})

// The question whose hit is turn 3 of the seeded conversation.
const lakesideQuestion = {
  sessionId: "s-1",
  turn: 0,
  query: "pottery workshop Lakeside",
  scopes: ["global"],
  mode: "native"
} as const

describe("project() with conversation neighbours at default settings", () => {
  it.effect("the default window is the measured one", () =>
    Effect.sync(() => {
      expect(ContextProjection.DEFAULT_NEIGHBOUR_WINDOW).toBe(2)
      expect(ContextProjection.defaultSettings.neighbourWindow).toBe(2)
      expect(ContextProjection.defaultSettings.neighbourShed).toBe("before-hits")
    }))

  it.effect("delivers the two turns either side of the hit, attributed to it, and nothing farther", () =>
    Effect.gen(function*() {
      const written = yield* seed
      const projection = yield* ContextProjection.ContextProjection
      const projected = yield* projection.project(lakesideQuestion)
      const recall = projected.section("recalled_memory")!
      const hit = written[3]!.id
      const neighbours = recall.neighbours ?? {}
      expect(Object.keys(neighbours).sort()).toEqual([1, 2, 4, 5].map((i) => written[i]!.id).sort())
      for (const id of Object.keys(neighbours)) expect(neighbours[id]).toBe(hit)
      expect(projected.injection.memoryIds).not.toContain(written[0]!.id)
      expect(projected.injection.memoryIds).not.toContain(written[6]!.id)
      // In conversation order around the hit.
      const at = (i: number) => projected.text.indexOf(turns[i]!)
      expect(at(1)).toBeLessThan(at(2))
      expect(at(2)).toBeLessThan(at(3))
      expect(at(3)).toBeLessThan(at(4))
      expect(at(4)).toBeLessThan(at(5))
    }).pipe(Effect.provide(layer)))

  it.effect("delivers the turns written next to the hit when they were written without positions (decision 0233)", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const episode = (content: string): MemoryRecord.MemoryWriteInput => ({
        content,
        kind: "episode",
        sourceType: "conversation"
      })
      // One turn a write, as an application storing each message would; a fact saved between
      // turns 3 and 4 takes no place in the write order.
      const written: Array<MemoryRecord.MemoryRecord> = []
      for (const [i, content] of turns.entries()) {
        written.push(...(yield* store.write([episode(content)])))
        if (i === 3) yield* store.write([{ content: "The user prefers tea", kind: "fact" }])
      }
      const projection = yield* ContextProjection.ContextProjection
      const projected = yield* projection.project(lakesideQuestion)
      const recall = projected.section("recalled_memory")!
      const neighbours = recall.neighbours ?? {}
      expect(Object.keys(neighbours).sort()).toEqual([1, 2, 4, 5].map((i) => written[i]!.id).sort())
      for (const id of Object.keys(neighbours)) expect(neighbours[id]).toBe(written[3]!.id)
      expect(written.every((record) => record.position === undefined)).toBe(true)
      // In write order around the hit.
      const at = (i: number) => projected.text.indexOf(turns[i]!)
      expect(at(1)).toBeLessThan(at(2))
      expect(at(2)).toBeLessThan(at(3))
      expect(at(3)).toBeLessThan(at(4))
      expect(at(4)).toBeLessThan(at(5))
      expect(projected.text).not.toContain("prefers tea")
    }).pipe(Effect.provide(layer)))

  it.effect("reads the neighbours without the hits it holds", () => {
    const reads: Array<{ readonly query: MemoryQuery.NeighbourQuery; readonly ids: ReadonlyArray<string> }> = []
    // The memory store, its neighbour reads recorded with what they returned.
    const recording = Layer.effect(
      MemoryStore.MemoryStore,
      Effect.map(MemoryStore.MemoryStore, (store): MemoryStore.Service => ({
        ...store,
        neighbours: (query) =>
          Effect.tap(store.neighbours(query), (read) => {
            reads.push({ query, ids: read.records.map((record) => record.id) })
          })
      }))
    ).pipe(Layer.provide(MemoryStore.layerMemory))
    return Effect.gen(function*() {
      const written = yield* seed
      const projection = yield* ContextProjection.ContextProjection
      const projected = yield* projection.project(lakesideQuestion)
      const neighbours = projected.section("recalled_memory")!.neighbours ?? {}
      const hits = projected.injection.memoryIds.filter((id) => !(id in neighbours))
      expect(hits).toContain(written[3]!.id)
      expect(reads).toHaveLength(1)
      expect([...(reads[0]!.query.exclude ?? [])].sort()).toEqual([...hits].sort())
      expect(reads[0]!.ids.filter((id) => hits.includes(id))).toEqual([])
      expect([...reads[0]!.ids].sort()).toEqual(Object.keys(neighbours).sort())
    }).pipe(Effect.provide(
      ContextProjection.layer.pipe(
        Layer.provideMerge(
          Layer.mergeAll(
            recording,
            PromotionStore.layerMemory,
            TelemetryStore.layerMemory,
            IdGenerator.sequential("mem")
          )
        )
      )
    ))
  })
})
