import { describe, expect, it } from "@effect/vitest"
import { TokenEstimator } from "@engram/core"
import { Effect, Layer } from "effect"

describe("TokenEstimator", () => {
  it("estimates ceil(chars / 4) by default", () => {
    const texts = ["", "a", "abcd", "abcde", "x".repeat(4_001)]
    expect(texts.map(TokenEstimator.heuristic.estimate)).toEqual([0, 1, 1, 2, 1_001])
  })

  it.effect("is available without a layer, and the heuristic layer gives the same", () =>
    Effect.gen(function*() {
      expect(yield* TokenEstimator.estimate("hello world")).toBe(3)
      const viaLayer = yield* TokenEstimator.estimate("hello world").pipe(Effect.provide(TokenEstimator.layerHeuristic))
      expect(viaLayer).toBe(3)
    }))

  it.effect("can be swapped for another estimator by layer", () =>
    Effect.gen(function*() {
      const words = TokenEstimator.make((text) => text.split(" ").length)
      const estimate = yield* TokenEstimator.estimate("one two three").pipe(
        Effect.provide(Layer.succeed(TokenEstimator.TokenEstimator, words))
      )
      expect(estimate).toBe(3)
    }))

  it("rounds a custom count up and never goes below zero", () => {
    expect(TokenEstimator.make(() => 2.1).estimate("x")).toBe(3)
    expect(TokenEstimator.make(() => -4).estimate("x")).toBe(0)
    expect(TokenEstimator.make(() => Number.NaN).estimate("x")).toBe(0)
  })
})
