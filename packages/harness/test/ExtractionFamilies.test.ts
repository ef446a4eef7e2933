/**
 * The extraction families notice what they guard: each one below is run with the guarantee it
 * checks taken away, and must fail.
 */
import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, PromotionStore } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { families, nearDuplicateFamily } from "../src/internal/extractionFamilies.js"

/** In-memory stores built once and shared by every session of one family (they remember). */
const runFamily = (family: (typeof families)[number]) =>
  Effect.scoped(
    Effect.gen(function*() {
      const context = yield* Layer.build(Layer.merge(MemoryStore.layerMemory, PromotionStore.layerMemory))
      const { cases } = yield* family.run((self) => Effect.provide(self, context), {})
      return cases
    })
  )

describe("the extract-near-duplicate family", () => {
  it.effect("passes with the test embedder: the paraphrase corroborates, the other value is a proposal", () =>
    Effect.gen(function*() {
      const cases = yield* runFamily(families.find((f) => f.name === "extract-near-duplicate")!)
      expect(cases).toEqual([{ family: "extract-near-duplicate", name: "extract-near-duplicate", passed: true }])
    }))

  it.effect("fails when the near-duplicate check is bypassed (no embedder): the paraphrase is written", () =>
    Effect.gen(function*() {
      const [result] = yield* runFamily(nearDuplicateFamily(false))
      expect(result).toMatchObject({ passed: false, detail: "the paraphrase was written" })
    }))
})
