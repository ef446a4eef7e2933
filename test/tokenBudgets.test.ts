/**
 * Budgets in tokens, on the path users call: `ContextProjection.project` at its default budget
 * (8% of a 200k-token window: 16,000 tokens) over a real store, with the recall cap raised so the
 * budget, not the cap, bounds recall. By default (no layer: o200k_base, counted line by line) and
 * with `TokenEstimatorBpe.layer` provided, the projection fits the budget as o200k_base counts it —
 * on token-dense memories (digits, CJK, emoji: about 2.3 o200k_base tokens for every chars/4 token)
 * where the same budget counted at chars/4 (`TokenEstimator.layerHeuristic`), as a composer
 * measuring characters would count it, delivers a projection far over it.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryQuery,
  MemoryStore,
  PromotionStore,
  TelemetryStore,
  TokenEstimator
} from "@engram/core"
import { TokenEstimatorBpe } from "@engram/runtime"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"

const o200k = (text: string) => countTokens(text, { disallowedSpecial: new Set() })

/** ~76 chars, 45 o200k_base tokens, 19 at chars/4. */
const dense = (i: number) =>
  `Ferry ${i}: 渡船は${i % 9}番桟橋から出航 ⛴️🌊 ticket ${String(7919 * (i + 11)).padStart(8, "0")}-${
    String((104729 * (i + 3)) % 1e6).padStart(6, "0")
  } 🎫 gate ${(i * 37) % 97} 東京→大阪 ${String((31337 * (i + 5)) % 1e7).padStart(7, "0")} 🚢`

const project = Effect.gen(function*() {
  const projection = yield* ContextProjection.ContextProjection
  return yield* projection.project({
    sessionId: "s-1",
    turn: 0,
    query: "ferry ticket",
    scopes: ["global"],
    mode: "native",
    workingState: "goal: book the ferry",
    record: false
  })
})

const stores = {
  "in-memory": Layer.mergeAll(MemoryStore.layerMemory, PromotionStore.layerMemory, TelemetryStore.layerMemory),
  SQLite: Layer.mergeAll(SqlitePromotionStore.layer, SqliteTelemetryStore.layer).pipe(
    Layer.provideMerge(
      SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
    )
  )
} as const

describe("token budgets", () => {
  for (const [name, store] of Object.entries(stores)) {
    it.effect(`${name}: by default and with TokenEstimatorBpe, project() fits the budget as o200k_base counts it`, () =>
      Effect.gen(function*() {
        yield* Effect.flatMap(
          MemoryStore.MemoryStore,
          (s) => s.write(Array.from({ length: 1_000 }, (_, i) => ({ content: dense(i), kind: "fact" as const })))
        )

        const bpe = yield* project.pipe(Effect.provide(TokenEstimatorBpe.layer("o200k_base")))
        expect(bpe.budget.budgetTokens).toBe(16_000)
        expect(bpe.budget.budgetChars).toBeNull()
        expect(bpe.budget.usedTokens).toBe(o200k(bpe.text))
        expect(o200k(bpe.text)).toBeLessThanOrEqual(16_000)
        expect(bpe.budget.warnings).toEqual([])
        // Recall was shed to fit, and still fills most of the budget.
        expect(bpe.section("recalled_memory")?.status).toBe("truncated")
        expect(o200k(bpe.text)).toBeGreaterThan(15_000)

        // No layer: the default is o200k_base, the same projection, counted line by line.
        const byDefault = yield* project
        expect(byDefault.text).toBe(bpe.text)
        expect(byDefault.budget).toEqual(bpe.budget)

        // The same 16,000 tokens counted at chars/4 (64,000 chars) let through what o200k_base
        // counts far over the budget: measuring characters would not do.
        const quarter = yield* project.pipe(Effect.provide(TokenEstimator.layerHeuristic))
        expect(quarter.budget.budgetTokens).toBe(16_000)
        expect(quarter.budget.usedTokens).toBeLessThanOrEqual(16_000)
        expect(o200k(quarter.text)).toBeGreaterThan(20_000)
        expect(quarter.section("recalled_memory")!.items).toBeGreaterThan(bpe.section("recalled_memory")!.items)
      }).pipe(
        Effect.provide(
          Layer.effect(
            ContextProjection.ContextProjection,
            ContextProjection.make({ recallLimit: MemoryQuery.MAX_LIMIT })
          ).pipe(Layer.provideMerge(store))
        ),
        Effect.provide(IdGenerator.sequential("tok"))
      ))
  }
})
