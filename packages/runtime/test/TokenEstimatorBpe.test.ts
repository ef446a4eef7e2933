import * as AiError from "@effect/ai/AiError"
import * as Tokenizer from "@effect/ai/Tokenizer"
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

  it.effect("layerTokenizer counts with the model's own @effect/ai Tokenizer, and holds the budget by it", () =>
    Effect.gen(function*() {
      // A tokenizer that is neither o200k_base nor chars/4: one token per UTF-16 code unit.
      const perChar = Tokenizer.make({
        tokenize: (prompt) =>
          Effect.succeed(
            Array.from(
              prompt.content.flatMap((m) =>
                typeof m.content === "string"
                  ? [m.content]
                  : m.content.flatMap((p) => p.type === "text" ? [p.text] : [])
              ).join("")
            ).map((_, i) => i)
          )
      })
      const projected = yield* projectOnce.pipe(
        Effect.provide(
          Layer.effect(ContextProjection.ContextProjection, ContextProjection.make({ contextWindowTokens: 50_000 }))
            .pipe(Layer.provideMerge(stores))
        ),
        Effect.provide(
          TokenEstimatorBpe.layerTokenizer().pipe(Layer.provide(Layer.succeed(Tokenizer.Tokenizer, perChar)))
        )
      )
      expect(projected.budget.usedTokens).toBe(Array.from(projected.text).length)
      expect(projected.budget.usedTokens).toBeLessThanOrEqual(projected.budget.budgetTokens!)
      // A tokenizer that fails counts UTF-8 bytes: never an estimate under a byte-level count.
      const failing = TokenEstimatorBpe.fromTokenizer(
        Tokenizer.make({ tokenize: () => Effect.fail(new AiError.UnknownError({ module: "t", method: "tokenize" })) })
      )
      expect(failing.estimate("héllo")).toBe(6)
    }))
})
