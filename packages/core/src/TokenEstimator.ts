/**
 * Token estimates for budgets and reports. Estimates steer decisions at thresholds (how much of a
 * context window a projection takes: a projection's token budget is held to this estimator's count
 * of its whole text); they are not billing figures.
 *
 * The default is a heuristic of one token per four characters, rounded up. A real tokenizer can
 * be swapped in with {@link make} and `Layer.succeed(TokenEstimator, ...)` without touching the
 * code that asks for estimates.
 *
 * "Characters" here, and everywhere Engram budgets text, are UTF-16 code units: JavaScript's
 * `string.length`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TokenEstimator } from "@engram/core"
 *
 * const tokens = Effect.map(TokenEstimator.TokenEstimator, (estimator) => estimator.estimate("hello world"))
 * // 3 with the default heuristic (11 chars / 4, rounded up)
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/**
 * How many characters the heuristic counts as one token.
 *
 * @since 0.1.0
 * @category constants
 */
export const CHARS_PER_TOKEN = 4

/**
 * What a token estimator does: estimate the tokens a text costs. Must be pure and total (no
 * throws, a non-negative integer for every string, 0 for the empty string).
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  readonly estimate: (text: string) => number
  /**
   * Set when `estimate(text)` is exactly `ceil(text.length / charsPerToken)`: a budget of T tokens
   * is then a budget of `floor(charsPerToken × T)` chars, and the projection composer searches it
   * by length, without estimating any text. Leave it out for a real tokenizer.
   */
  readonly charsPerToken?: number
}

/**
 * Builds an estimator from a counting function. The result is rounded up and clamped at zero, so
 * a sloppy counter still yields a valid estimate.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (count: (text: string) => number): Service => ({
  estimate: (text) => {
    const n = count(text)
    return Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0
  }
})

/**
 * The default estimator: `ceil(chars / 4)`. It declares `charsPerToken`, so under it a budget of
 * T tokens is searched as a budget of 4T chars.
 *
 * @since 0.1.0
 * @category constructors
 */
export const heuristic: Service = {
  estimate: (text) => Math.ceil(text.length / CHARS_PER_TOKEN),
  charsPerToken: CHARS_PER_TOKEN
}

/**
 * The token estimator service. Being a `Context.Reference`, it needs no layer: code that asks for
 * it without one gets {@link heuristic}.
 *
 * @since 0.1.0
 * @category tags
 */
export class TokenEstimator extends Context.Reference<TokenEstimator>()("@engram/core/TokenEstimator", {
  defaultValue: (): Service => heuristic
}) {}

/**
 * Provides the chars/4 heuristic explicitly (the same thing the default gives).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHeuristic: Layer.Layer<TokenEstimator> = Layer.succeed(TokenEstimator, heuristic)

/**
 * Estimates the tokens of `text` with the estimator in context.
 *
 * @since 0.1.0
 * @category accessors
 */
export const estimate = (text: string): Effect.Effect<number> =>
  Effect.map(TokenEstimator, (estimator) => estimator.estimate(text))
