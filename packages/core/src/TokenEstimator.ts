/**
 * Token estimates for budgets and reports. Estimates steer decisions at thresholds (how much of a
 * context window a projection takes: a projection's token budget is held to this estimator's count
 * of its whole text); they are not billing figures.
 *
 * The default is a real tokenizer: OpenAI's `o200k_base` byte-pair encoding (the GPT-4o, GPT-4.1,
 * o-series and GPT-5 family), from `gpt-tokenizer`, its tables loaded on first use (decision 0070).
 * It counts each text once and remembers the count by content (a bounded cache: the prefix,
 * always-on memory and recalled records repeat from turn to turn), and it declares that its count
 * of a text is the sum of its lines' counts ({@link Service.joinMargin} 0), so a projection is
 * budgeted line by line and never tokenized whole. `cl100k_base` is on offer with {@link bpe};
 * the chars/4 {@link heuristic} (about 15% under a real count on conversational text) with
 * {@link layerHeuristic}; any other count with {@link make} and `Layer.succeed(TokenEstimator, ...)`
 * (for a model's own tokenizer, `@engram/runtime`'s `TokenEstimatorBpe.layerTokenizer`).
 *
 * "Characters" here, and everywhere Engram budgets text, are UTF-16 code units: JavaScript's
 * `string.length`.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TokenEstimator } from "@engram/core"
 *
 * const tokens = TokenEstimator.estimate("hello world")
 * // 2 with the default (o200k_base)
 * ```
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as BoundedCache from "./internal/boundedCache.js"
import * as Bpe from "./internal/bpe.js"

/**
 * How many characters the heuristic counts as one token.
 *
 * @since 0.1.0
 * @category constants
 */
export const CHARS_PER_TOKEN = 4

/**
 * Characters of text whose counts a caching estimator remembers (the total length of the texts
 * held; the texts unused for a generation of 2M evicted together): 4M code units, 8 MB of keys at
 * most.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_CACHE_CHARS = 4_000_000

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
  /**
   * Set when the estimator's count of two texts joined at a line start is at most the sum of their
   * counts plus `joinMargin`: `estimate(a + b) <= estimate(a) + estimate(b) + joinMargin` whenever
   * `a` ends with a newline and `b` starts with a character that is neither whitespace nor `/`.
   * The projection composer then counts a text as the sum of its lines' counts plus the margin per
   * line joined — an upper bound of `estimate(text)`, so a budget held by it is held by the
   * estimator — and never estimates a whole text. OpenAI's encodings declare 0: their
   * pre-tokenizer never joins a newline to a following letter, digit, mark or symbol other than
   * `/`, and byte-pair merges stay inside a pre-token, so the count is exactly additive there
   * (decision 0070). Leave it out when unknown: the composer then estimates whole texts.
   */
  readonly joinMargin?: number
  /**
   * Loads what the estimator needs (a tokenizer's tables) and gives the loaded estimator;
   * {@link resolve} runs it. Until then `estimate` must still be total (the BPE estimators count
   * UTF-8 bytes, an upper bound of any byte-level encoding's count).
   */
  readonly load?: Effect.Effect<Service>
}

/**
 * Options of {@link make}.
 *
 * @since 0.1.0
 * @category models
 */
export interface MakeOptions {
  /** See {@link Service.joinMargin}: declare it only when the count provably has that bound. */
  readonly joinMargin?: number
  /**
   * Remember counts by text, up to this many characters of text, in two generations of half as
   * many each: the texts not used for a whole generation are evicted together; a text longer than
   * half of it is counted every call. 0 or absent: count every call.
   */
  readonly cacheChars?: number
}

/**
 * Builds an estimator from a counting function. The result is rounded up and clamped at zero, so
 * a sloppy counter still yields a valid estimate. With `cacheChars`, each distinct text is counted
 * once while it stays in the bounded cache.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (count: (text: string) => number, options: MakeOptions = {}): Service => {
  const clamped = (text: string) => {
    const n = count(text)
    return Number.isFinite(n) && n > 0 ? Math.ceil(n) : 0
  }
  const cacheChars = options.cacheChars ?? 0
  let estimate = clamped
  if (cacheChars > 0) {
    const cache = BoundedCache.make(cacheChars)
    estimate = (text) => {
      let n = cache.get(text)
      if (n === undefined) cache.set(text, n = clamped(text))
      return n
    }
  }
  const joinMargin = options.joinMargin
  return joinMargin !== undefined && Number.isFinite(joinMargin) && joinMargin >= 0
    ? { estimate, joinMargin: Math.ceil(joinMargin) }
    : { estimate }
}

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
 * The byte-pair encodings on offer: `o200k_base` (GPT-4o, GPT-4.1, o-series, GPT-5) and
 * `cl100k_base` (GPT-4, GPT-3.5).
 *
 * @since 0.1.0
 * @category models
 */
export type Encoding = Bpe.Encoding

/**
 * UTF-8 bytes of `text`: no byte-level encoding spends more tokens than that (every token is at
 * least one byte), so it is what a BPE estimator counts before its tables load.
 *
 * @since 0.1.0
 * @category constructors
 */
export const utf8Bytes = (text: string): number => {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}

const loaders = new Map<Encoding, Effect.Effect<Service>>()

/** Loads `encoding`'s tables once per process and gives its caching estimator. */
const loaderOf = (encoding: Encoding): Effect.Effect<Service> => {
  let loader = loaders.get(encoding)
  if (loader === undefined) {
    loader = Effect.runSync(Effect.cached(
      Effect.promise(() => Bpe.load(encoding)).pipe(
        Effect.map((count) => make(count, { joinMargin: 0, cacheChars: DEFAULT_CACHE_CHARS }))
      )
    ))
    loaders.set(encoding, loader)
  }
  return loader
}

/**
 * `encoding`'s token count, as an estimator whose tables load when it is first resolved (once per
 * process): counts cached by text ({@link DEFAULT_CACHE_CHARS}), join margin 0. Before it is
 * resolved its `estimate` counts UTF-8 bytes (a bound, never an undercount).
 *
 * @since 0.1.0
 * @category constructors
 */
export const bpe = (encoding: Encoding): Service => ({ estimate: utf8Bytes, joinMargin: 0, load: loaderOf(encoding) })

/**
 * The default estimator: `o200k_base`, loaded on first use (see {@link bpe}).
 *
 * @since 0.1.0
 * @category constructors
 */
export const o200kBase: Service = bpe("o200k_base")

/**
 * The token estimator service. Being a `Context.Reference`, it needs no layer: code that asks for
 * it without one gets {@link o200kBase}. Ask through {@link resolve}, which loads its tables.
 *
 * @since 0.1.0
 * @category tags
 */
export class TokenEstimator extends Context.Reference<TokenEstimator>()("@engram/core/TokenEstimator", {
  defaultValue: (): Service => o200kBase
}) {}

/**
 * The estimator in context, loaded (its `load` run, if it has one).
 *
 * @since 0.1.0
 * @category accessors
 */
export const resolve: Effect.Effect<Service> = Effect.flatMap(
  TokenEstimator,
  (estimator) => estimator.load ?? Effect.succeed(estimator)
)

/**
 * Provides the chars/4 heuristic (a guess, about 15% under a real tokenizer on conversational
 * text: a budget held by it can be exceeded by the model's count).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerHeuristic: Layer.Layer<TokenEstimator> = Layer.succeed(TokenEstimator, heuristic)

/**
 * Provides `encoding`'s count, its tables loaded when the layer is built.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerBpe = (encoding: Encoding): Layer.Layer<TokenEstimator> =>
  Layer.effect(TokenEstimator, loaderOf(encoding))

/**
 * Estimates the tokens of `text` with the estimator in context (loading it first).
 *
 * @since 0.1.0
 * @category accessors
 */
export const estimate = (text: string): Effect.Effect<number> =>
  Effect.map(resolve, (estimator) => estimator.estimate(text))
