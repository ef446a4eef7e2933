import { describe, expect, it } from "@effect/vitest"
import { TokenEstimator } from "@engram/core"
import { Effect, FastCheck as fc, Layer } from "effect"
import * as BoundedCache from "../src/internal/boundedCache.js"
import * as Bpe from "../src/internal/bpe.js"

const o200k = await Effect.runPromise(TokenEstimator.resolve)
const cl100k = await Effect.runPromise(Effect.provide(TokenEstimator.resolve, TokenEstimator.layerBpe("cl100k_base")))
// gpt-tokenizer's own count of a whole text, which counting piece by piece must equal.
const o200kWhole = await Bpe.loadReference("o200k_base")
const cl100kWhole = await Bpe.loadReference("cl100k_base")

/**
 * Text built from what the encodings' pre-tokenizers split on: case runs, contractions, digit
 * runs, whitespace runs with and without line breaks, symbols, "/", marks, CJK, emoji, a spelled
 * special token, projection tags.
 */
const splitText = fc.array(
  fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 12 }),
    fc.constantFrom(
      "Maya",
      "MAYA",
      "mAYa",
      "don't",
      "WE'LL",
      "'s",
      "'Re",
      "'ve",
      "12345",
      "3.14",
      "  ",
      "\t",
      " \n",
      "\n\n",
      "\r\n",
      "  \n  ",
      "/",
      "//",
      "- [",
      "] ",
      " · ",
      "<recalled_memory>",
      "é",
      "e\u0301",
      "\u0301",
      "字字",
      "😀",
      "🇫🇷",
      "<|endoftext|>",
      "ǅ",
      "ʰ",
      "\u00a0",
      "\u2028",
      "?!",
      "...",
      "x",
      "A",
      " "
    )
  ),
  { maxLength: 40 }
).map((parts) => parts.join(""))

describe("TokenEstimator", () => {
  it("the heuristic estimates ceil(chars / 4)", () => {
    const texts = ["", "a", "abcd", "abcde", "x".repeat(4_001)]
    expect(texts.map(TokenEstimator.heuristic.estimate)).toEqual([0, 1, 1, 2, 1_001])
  })

  it.effect("is o200k_base without a layer; the heuristic and cl100k_base are a layer away", () =>
    Effect.gen(function*() {
      expect(yield* TokenEstimator.estimate("hello world")).toBe(2)
      expect(yield* TokenEstimator.estimate("")).toBe(0)
      // o200k_base spends one token on "Здравствуйте" where cl100k_base spends six.
      expect(yield* TokenEstimator.estimate("Здравствуйте")).toBe(1)
      const cl100k = yield* TokenEstimator.estimate("Здравствуйте").pipe(
        Effect.provide(TokenEstimator.layerBpe("cl100k_base"))
      )
      expect(cl100k).toBe(6)
      const viaLayer = yield* TokenEstimator.estimate("hello world").pipe(Effect.provide(TokenEstimator.layerHeuristic))
      expect(viaLayer).toBe(3)
      const resolved = yield* TokenEstimator.resolve
      expect(resolved.joinMargin).toBe(0)
      expect(resolved.load).toBeUndefined()
    }))

  it.prop(
    "before its tables load, a BPE estimator counts UTF-8 bytes: never under the real count",
    [fc.string({ unit: "grapheme", maxLength: 200 })],
    ([text]) => {
      expect(TokenEstimator.o200kBase.estimate(text)).toBe(new TextEncoder().encode(text).length)
      expect(TokenEstimator.o200kBase.estimate(text)).toBeGreaterThanOrEqual(o200k.estimate(text))
    }
  )

  // Why joinMargin is 0 for the BPE encodings (decision 0070): the pre-tokenizer ends a pre-token
  // at a newline followed by anything but whitespace or "/", and merges stay inside a pre-token.
  it.prop(
    "o200k_base and cl100k_base count two texts joined at a line start as the sum of their counts",
    [
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.constantFrom("\n", "\n\n", "\r\n", ".\n", " \n"),
      fc.constantFrom("-", "<", "R", "a", "[", "é", "1", "#", "字", "😀", "'", "\u0301"),
      fc.string({ unit: "grapheme", maxLength: 300 })
    ],
    ([head, end, first, rest]) => {
      const a = head + end
      const b = first + rest
      expect(o200k.estimate(a + b)).toBe(o200k.estimate(a) + o200k.estimate(b))
      expect(cl100k.estimate(a + b)).toBe(cl100k.estimate(a) + cl100k.estimate(b))
    },
    { fastCheck: { numRuns: 2_000 } }
  )

  // Counting piece by piece (each pre-token's count remembered, decision 0116), the pieces of
  // ASCII scanned by hand (decision 0121), is the encoding's count.
  it.prop(
    "o200k_base and cl100k_base count any text as gpt-tokenizer counts it whole",
    [fc.oneof(
      splitText,
      fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)), maxLength: 200 }),
      fc.string({ unit: "grapheme", maxLength: 300 }),
      fc.string({ unit: "binary", maxLength: 100 })
    )],
    ([text]) => {
      expect(o200k.estimate(text)).toBe(o200kWhole(text))
      expect(cl100k.estimate(text)).toBe(cl100kWhole(text))
    },
    { fastCheck: { numRuns: 3_000 } }
  )

  it.prop(
    "a cached estimator answers what its count does, whatever the order and repetition of texts and the bound",
    [fc.array(fc.string({ maxLength: 40 }), { maxLength: 200 }), fc.integer({ min: 0, max: 300 })],
    ([texts, cacheChars]) => {
      let calls = 0
      const count = (text: string) => {
        calls++
        return text.length * 0.7
      }
      const cached = TokenEstimator.make(count, { cacheChars })
      for (const text of texts) expect(cached.estimate(text)).toBe(Math.ceil(text.length * 0.7))
      // Repeating the last text right away is a hit whenever the text fits a generation (half the bound).
      const last = texts.at(-1)
      if (last !== undefined) {
        const before = calls
        cached.estimate(last)
        expect(calls).toBe(cacheChars > 0 && last.length <= Math.floor(cacheChars / 2) ? before : before + 1)
      }
    },
    { fastCheck: { numRuns: 300 } }
  )

  it.prop(
    "a cache holds at most its bound of text, answers only what was set, and keeps a key while the keys used since total half the bound",
    [
      fc.array(fc.tuple(fc.string({ maxLength: 20 }), fc.boolean(), fc.integer({ min: 0, max: 3 })), {
        maxLength: 300
      }),
      fc.integer({ min: 1, max: 120 })
    ],
    ([steps, bound]) => {
      const cache = BoundedCache.make(bound)
      const half = Math.floor(bound / 2)
      // A model: the value last set for each key, and the keys from oldest to newest use.
      const values = new Map<string, number>()
      const uses: Array<string> = []
      const touch = (key: string) => {
        const at = uses.indexOf(key)
        if (at >= 0) uses.splice(at, 1)
        uses.push(key)
      }
      // The characters of the distinct keys used after `key`'s last use, `key` included.
      const usedSince = (key: string) => uses.slice(uses.indexOf(key)).reduce((n, k) => n + k.length, 0)
      for (const [key, write, value] of steps) {
        if (write) {
          cache.set(key, value)
          if (key.length > half) continue
          values.set(key, value)
          touch(key)
        } else {
          const found = cache.get(key)
          const held = uses.includes(key)
          // Never a value that was not the last one set; always there while recently used.
          if (found !== undefined) expect(found).toBe(values.get(key))
          if (held && usedSince(key) <= half) expect(found).toBe(values.get(key))
          if (!held) expect(found).toBeUndefined()
          if (found !== undefined) touch(key)
          else if (held) uses.splice(uses.indexOf(key), 1)
        }
        // It holds at most the bound, and only keys the model holds.
        expect(cache.size()).toBeLessThanOrEqual(bound)
        expect(cache.size()).toBeLessThanOrEqual(uses.reduce((n, k) => n + k.length, 0))
        expect(cache.entries()).toBeLessThanOrEqual(uses.length)
      }
    },
    { fastCheck: { numRuns: 1_000 } }
  )

  it("a cache drops the keys not used for a whole generation, and counts what it holds", () => {
    const cache = BoundedCache.make(20) // generations of 10 characters
    cache.set("aaaa", 1)
    cache.set("bbbb", 2)
    cache.set("cccc", 3) // the young generation would pass 10: it becomes the old one
    expect([cache.size(), cache.entries()]).toEqual([12, 3])
    expect(cache.get("aaaa")).toBe(1) // a hit in the old generation moves the key to the young one
    expect([cache.size(), cache.entries()]).toEqual([12, 3])
    cache.set("dddd", 4) // another turn: "bbbb", unused for a generation, goes
    expect([cache.size(), cache.entries()]).toEqual([12, 3])
    expect([cache.get("bbbb"), cache.get("cccc"), cache.get("aaaa"), cache.get("dddd")]).toEqual([undefined, 3, 1, 4])
    cache.set("x".repeat(11), 5) // longer than a generation: never stored
    expect(cache.get("x".repeat(11))).toBeUndefined()
  })

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
