import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  TelemetryStore,
  TokenEstimator
} from "@engram/core"
import { TokenEstimatorBpe } from "@engram/runtime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"

const stores = Layer.mergeAll(
  MemoryStore.layerMemory,
  PromotionStore.layerMemory,
  TelemetryStore.layerMemory,
  IdGenerator.sequential("bpe")
)

const projectOnce = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  yield* store.write([
    { content: "Deploys to Zürich go through the blue-green pipeline on Tuesdays", kind: "fact" },
    { content: "The on-call rotation changes every Monday at 09:00 UTC <|endoftext|> 東京の会議は月曜日", kind: "fact" }
  ])
  const projection = yield* ContextProjection.ContextProjection
  return yield* projection.project({
    sessionId: "s-1",
    turn: 0,
    query: "when do deploys and on-call change",
    scopes: ["global"],
    mode: "native"
  })
})

describe("TokenEstimatorBpe", () => {
  it.effect("project() reports its size, and holds its budget, in o200k_base tokens when the BPE layer is provided", () =>
    Effect.gen(function*() {
      const projected = yield* projectOnce
      expect(projected.text).toContain("blue-green")
      expect(projected.budget.usedTokens).toBe(countTokens(projected.text, { disallowedSpecial: new Set() }))
      // Not the default heuristic: chars/4 gives another figure on this text.
      expect(projected.budget.usedTokens).not.toBe(Math.ceil(projected.text.length / 4))
      // The budget is in those tokens (test/tokenBudgets.test.ts fills it with token-dense memories).
      expect(projected.budget.budgetTokens).toBe(16_000)
    }).pipe(
      Effect.provide(ContextProjection.layer.pipe(Layer.provideMerge(stores))),
      Effect.provide(TokenEstimatorBpe.layer("o200k_base"))
    ))

  it.effect("counts special-token text as text, never fails, and 0 for empty", () =>
    Effect.gen(function*() {
      for (const encoding of ["o200k_base", "cl100k_base"] as const) {
        const estimator = yield* TokenEstimatorBpe.make(encoding)
        expect(estimator.estimate("")).toBe(0)
        expect(estimator.estimate("<|endoftext|><|im_start|>")).toBeGreaterThan(2)
        expect(estimator.estimate("hello world")).toBe(2)
      }
      const withLayer = yield* TokenEstimator.estimate("hello world").pipe(Effect.provide(TokenEstimatorBpe.layer()))
      expect(withLayer).toBe(2)
    }))
})
