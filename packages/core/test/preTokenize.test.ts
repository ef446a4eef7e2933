import { describe, expect, it, vi } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { CL100K_TOKEN_SPLIT_REGEX, O200K_TOKEN_SPLIT_REGEX } from "gpt-tokenizer/esm/encodingParams/constants"
import * as PreTokenize from "../src/internal/preTokenize.js"

const encodings = [
  ["o200k_base", PreTokenize.o200k(O200K_TOKEN_SPLIT_REGEX), O200K_TOKEN_SPLIT_REGEX],
  ["cl100k_base", PreTokenize.cl100k(CL100K_TOKEN_SPLIT_REGEX), CL100K_TOKEN_SPLIT_REGEX]
] as const

const piecesOf = (split: PreTokenize.PreTokenizer, text: string): Array<string> => {
  const pieces: Array<string> = []
  split(text, (piece) => pieces.push(piece))
  return pieces
}

/** The pattern's own pieces, by `String.prototype.match`. */
const matched = (pattern: RegExp, text: string): Array<string> => text.match(new RegExp(pattern.source, "gu")) ?? []

/**
 * Mostly the characters the scan handles, in the combinations where the patterns' alternatives
 * compete (a prefix before a letter run, case changes, contractions, digit runs, a blank before
 * symbols, "/" and line breaks after symbols, whitespace runs before text and at the end), any
 * code below 256, and now and then a character it hands to the pattern: a Latin letter, a mark,
 * CJK, an emoji, non-ASCII whitespace, a non-ASCII digit and symbol, a lone surrogate.
 */
const scanned = fc.array(
  fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom(..."aAbBzZqQsStTlLmMdDrReEvV0123456789") },
    { weight: 3, arbitrary: fc.integer({ min: 0, max: 255 }).map((code) => String.fromCharCode(code)) },
    { weight: 6, arbitrary: fc.constantFrom(" ", " ", "  ", "\t", "\n", "\r", "\r\n", "\v", "\f", " \n", "\n ") },
    { weight: 6, arbitrary: fc.constantFrom(..."'!?.,;:-_()[]<>|#@&*\"/\\`~^%$+=", "\u0000", "\u001f", "\u007f") },
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        "'s",
        "'S",
        "'LL",
        "'ll",
        "'lL",
        "'re",
        "'Re",
        "'ve",
        "'VE",
        "'d",
        "'m",
        "'t",
        "'l",
        "'v",
        "'r",
        "n't",
        "''",
        "//",
        "/\n",
        "!\n/",
        "Maya",
        "MAYA",
        "mAYa",
        "McDonald",
        "I'm",
        "WE'LL",
        "7 May 2023",
        "12345",
        "3.14",
        " · ",
        "·",
        "- [",
        "] "
      )
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "é",
        "É",
        "e\u0301",
        "\u0301",
        "ǅ",
        "ʰ",
        "字字",
        "😀",
        "\u00a0",
        "\u2028",
        "\u3000",
        "\ufeff",
        "\u0085",
        "²",
        "٣",
        "—",
        "’",
        "\ud800"
      )
    }
  ),
  { maxLength: 40 }
).map((parts) => parts.join(""))

describe("preTokenize", () => {
  for (const [name, split, pattern] of encodings) {
    it.prop(
      `${name}: the scan yields the pattern's pieces`,
      [fc.oneof({ weight: 4, arbitrary: scanned }, fc.string({ unit: "grapheme", maxLength: 60 }))],
      ([text]) => {
        expect(piecesOf(split, text)).toEqual(matched(pattern, text))
      },
      { fastCheck: { numRuns: 4_000 } }
    )

    it(`${name}: the pattern decides around a character the scan does not handle`, () => {
      for (
        const text of [
          "",
          "Caroline: I went to the LGBTQ support group yesterday and it was so powerful!",
          "- [turn-12 · episode · unconfirmed] Maya: we'll meet on 7 May 2023, won't we?",
          "café au lait",
          "naïve",
          "Émile",
          "1²3",
          "a\u00a0 b",
          "end  \n  ",
          "end \u00a0",
          "x—y",
          "it’s",
          "😀😀 ok"
        ]
      ) expect(piecesOf(split, text)).toEqual(matched(pattern, text))
    })
    it(`${name}: text the scan handles never runs the pattern`, () => {
      const exec = vi.spyOn(RegExp.prototype, "exec")
      try {
        const text = "- [turn-12 · episode] Caroline: I'LL go on 7 May 2023, won't I?\n\t/path/ok  \r\n  "
        expect(piecesOf(split, text).join("")).toBe(text)
        expect(exec).not.toHaveBeenCalled()
        piecesOf(split, "café")
        expect(exec).toHaveBeenCalled()
      } finally {
        exec.mockRestore()
      }
    })
  }
})
