/**
 * Token budgets counted in a particular model's tokens. `@engram/core`'s default estimator is
 * already a real tokenizer (`o200k_base`, decision 0070); this module picks another one:
 *
 * - {@link layer}: one of OpenAI's byte-pair encodings by name (`cl100k_base` for GPT-4/GPT-3.5),
 *   the same estimators as core's `TokenEstimator.layerBpe`.
 * - {@link layerTokenizer}: the model's own tokenizer, from `@effect/ai`'s `Tokenizer` service where
 *   a provider offers one (e.g. `@effect/ai-openai`'s `OpenAiTokenizer.layer`,
 *   `@effect/ai-anthropic`'s `AnthropicTokenizer.layer`).
 *
 * @example
 * ```ts
 * import { TokenEstimatorBpe } from "@engram/runtime"
 * import { OpenAiTokenizer } from "@effect/ai-openai"
 *
 * const program = myAgent.pipe(
 *   Effect.provide(TokenEstimatorBpe.layerTokenizer().pipe(Layer.provide(OpenAiTokenizer.layer({ model: "gpt-4o" }))))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Tokenizer from "@effect/ai/Tokenizer"
import { TokenEstimator } from "@engram/core"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"

/**
 * The encodings on offer.
 *
 * @since 0.1.0
 * @category models
 */
export type Encoding = TokenEstimator.Encoding

/**
 * Builds a BPE estimator for `encoding`, loading its tables.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (encoding: Encoding = "o200k_base"): Effect.Effect<TokenEstimator.Service> =>
  Effect.provide(TokenEstimator.resolve, TokenEstimator.layerBpe(encoding))

/**
 * Provides `TokenEstimator` counting `encoding`'s tokens.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (encoding: Encoding = "o200k_base"): Layer.Layer<TokenEstimator.TokenEstimator> =>
  TokenEstimator.layerBpe(encoding)

/**
 * Options of {@link fromTokenizer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface TokenizerOptions {
  /**
   * The tokenizer's bound on what joining two lines adds (see core's `TokenEstimator.Service`
   * `joinMargin`). Leave it out unless it is proven for that tokenizer: projections are then held
   * to the tokenizer's count of their whole text.
   */
  readonly joinMargin?: number
}

/**
 * An estimator from an `@effect/ai` `Tokenizer`: the length of `tokenize(text)`, cached by text.
 * An estimate is synchronous, so a tokenizer that answers asynchronously (a remote count) or fails
 * is not waited for: that text is counted as its UTF-8 bytes, a bound no byte-level tokenizer
 * exceeds.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromTokenizer = (tokenizer: Tokenizer.Service, options: TokenizerOptions = {}): TokenEstimator.Service =>
  TokenEstimator.make((text) => {
    if (text === "") return 0
    const exit = Effect.runSyncExit(tokenizer.tokenize(text))
    return Exit.isSuccess(exit) ? exit.value.length : TokenEstimator.utf8Bytes(text)
  }, {
    cacheChars: TokenEstimator.DEFAULT_CACHE_CHARS,
    ...(options.joinMargin !== undefined ? { joinMargin: options.joinMargin } : {})
  })

/**
 * Provides `TokenEstimator` from the `Tokenizer` in context (the model's own).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTokenizer = (
  options: TokenizerOptions = {}
): Layer.Layer<TokenEstimator.TokenEstimator, never, Tokenizer.Tokenizer> =>
  Layer.effect(TokenEstimator.TokenEstimator, Effect.map(Tokenizer.Tokenizer, (t) => fromTokenizer(t, options)))
