/**
 * Token budgets counted in a real model's tokens: a `TokenEstimator` backed by the byte-pair
 * encodings OpenAI's models use (`o200k_base` for the GPT-4o/GPT-4.1/o-series family,
 * `cl100k_base` for GPT-4/GPT-3.5), from the `gpt-tokenizer` package. The default estimator
 * (chars/4) needs no layer; provide this one where budgets should match what a model bills.
 *
 * The encoding's tables (a few MB) load when the layer is built, not when the runtime is
 * imported. Text that spells a special token (`<|endoftext|>`) is counted as ordinary text: an
 * estimate never fails.
 *
 * @example
 * ```ts
 * import { TokenEstimatorBpe } from "@engram/runtime"
 *
 * const program = myAgent.pipe(Effect.provide(TokenEstimatorBpe.layer("o200k_base")))
 * ```
 *
 * @since 0.1.0
 */
import { TokenEstimator } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * The encodings on offer.
 *
 * @since 0.1.0
 * @category models
 */
export type Encoding = "o200k_base" | "cl100k_base"

// Special-token text is plain text to an estimate (the default would throw on it).
const asText = { disallowedSpecial: new Set<string>() }

/**
 * Builds a BPE estimator for `encoding`, loading its tables.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (encoding: Encoding = "o200k_base"): Effect.Effect<TokenEstimator.Service> =>
  Effect.promise(() =>
    encoding === "o200k_base"
      ? import("gpt-tokenizer/encoding/o200k_base")
      : import("gpt-tokenizer/encoding/cl100k_base")
  ).pipe(Effect.map((bpe) => TokenEstimator.make((text) => (text === "" ? 0 : bpe.countTokens(text, asText)))))

/**
 * Provides `TokenEstimator` counting `encoding`'s tokens.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (encoding: Encoding = "o200k_base"): Layer.Layer<TokenEstimator.TokenEstimator> =>
  Layer.effect(TokenEstimator.TokenEstimator, make(encoding))
