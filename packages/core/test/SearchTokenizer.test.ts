import { describe, expect, it } from "@effect/vitest"
import { SearchTokenizer } from "@engram/core"
import { Either, FastCheck as fc } from "effect"

// Characters where tokenizers usually disagree: accents (precomposed and combining), special
// case mappings, compatibility forms, kana voicing, Hangul, scripts without case, punctuation.
const tricky = [
  "É",
  "é",
  "e\u0301",
  "ß",
  "İ",
  "ı",
  "ς",
  "Σ",
  "σ",
  "ø",
  "Å",
  "ǅ",
  "ﬁ",
  "Ａ",
  "½",
  "①",
  "²",
  "ガ",
  "ｶﾞ",
  "か\u3099",
  "゛",
  "가",
  "\u1100\u1161",
  "東京",
  "٣",
  "Ё",
  "ΐ",
  "-",
  "'",
  "’",
  "@",
  ".",
  " ",
  "\n",
  "\t",
  "\u0000",
  "\u200b",
  "\u0301",
  "\u3099",
  "a",
  "Z",
  "0",
  "9",
  "\u{1F600}",
  "\u{10400}"
]

const text = fc.oneof(
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.array(fc.constantFrom(...tricky), { maxLength: 20 }).map((parts) => parts.join(""))
)

// Kana voiced sound marks are part of their letter ("ガ" is not an accented "カ").
const accent = /[^\P{M}\u3099\u309A]/u

describe("tokenize", () => {
  // The split is idempotent; a stemmer need not be (Snowball English stems "ee가ee" to "ee가e"
  // and that to "ee가"), and nothing stems a token twice: the index stores the tokens verbatim
  // (decision 0001) and a query is tokenized from its own text.
  it.prop("splits its own output, joined by spaces, into the same words (unstemmed)", [text], ([s]) => {
    const split = SearchTokenizer.tokenize(s, "none")
    expect(SearchTokenizer.tokenize(split.join(" "), "none")).toEqual(split)
    expect(SearchTokenizer.words(split.join(" "))).toEqual(split)
  })

  it.prop("yields non-empty, lower-case, accent-free runs of letters and digits only", [text], ([s]) => {
    for (const token of SearchTokenizer.tokenize(s)) {
      expect(token).toMatch(/^[\p{L}\p{N}]+$/u)
      expect(token.toLowerCase()).toBe(token)
      expect(accent.test(token.normalize("NFD"))).toBe(false)
    }
  })

  it.prop("never depends on how the text was composed", [text], ([s]) => {
    expect(SearchTokenizer.tokenize(s.normalize("NFC"))).toEqual(SearchTokenizer.tokenize(s.normalize("NFD")))
  })

  it.prop("splits exactly where the text has no letter or digit", [fc.array(text, { maxLength: 5 })], ([parts]) => {
    // Joining texts with a separator concatenates their tokens.
    expect(SearchTokenizer.tokenize(parts.join(" - "))).toEqual(parts.flatMap((part) => SearchTokenizer.tokenize(part)))
  })

  it("words: folds case and accents and splits on punctuation", () => {
    expect(SearchTokenizer.words("Doug's e-mail: DOUG@Example.com (v2.0)")).toEqual([
      "doug",
      "s",
      "e",
      "mail",
      "doug",
      "example",
      "com",
      "v2",
      "0"
    ])
    expect(SearchTokenizer.words("Crème brûlée in Zürich, Señor")).toEqual([
      "creme",
      "brulee",
      "in",
      "zurich",
      "senor"
    ])
    expect(SearchTokenizer.words("ΦΊΛΟΥΣ Москве 東京")).toEqual(["φιλουσ", "москве", "東京"])
    expect(SearchTokenizer.words("Smørrebrød")).toEqual(["smørrebrød"])
    expect(SearchTokenizer.words("?! … — @#")).toEqual([])
  })

  it("words: keeps substrings apart, a word is never part of a longer one", () => {
    expect(SearchTokenizer.words("My name is Doug")).not.toContain("am")
    expect(SearchTokenizer.words("Doug prefers coffee")).not.toContain("prefer")
  })

  it("tokenize stems each word (English by default); language none keeps the words", () => {
    expect(SearchTokenizer.tokenize("Deploys happen on Tuesdays, deploying weekly")).toEqual(
      SearchTokenizer.tokenize("deploy happens on tuesday deploy week")
    )
    expect(SearchTokenizer.tokenize("Doug prefers coffee")).toContain("prefer")
    expect(SearchTokenizer.tokenize("Doug prefers coffee", "none")).toEqual(["doug", "prefers", "coffee"])
  })

  // ASCII text takes holdsAnyToken's own scan (no regex, no array of words): words of letters,
  // digits and cases next to every kind of separator, ASCII's first and last characters included.
  const ascii = fc.array(
    fc.oneof(
      fc.constantFrom("Deploys", "deployed", "happiness", "v2", "2024", "A", "z", "0", "9", "news", "Maya's"),
      fc.string({ unit: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), maxLength: 12 })
    ),
    { maxLength: 12 }
  ).map((parts) => parts.join(" "))

  it.prop(
    "holdsAnyToken says what distinctTokens says: one of the text's tokens is in the set",
    [
      fc.oneof(text, ascii),
      fc.array(fc.oneof(text, ascii), { maxLength: 4 }),
      fc.constantFrom(...SearchTokenizer.Language.literals)
    ],
    ([s, others, language]) => {
      // Tokens of the text itself (some held, some not) and of other texts.
      const own = SearchTokenizer.distinctTokens(s, language)
      const tokens = new Set([
        ...own.filter((_, i) => i % 2 === 1),
        ...others.flatMap((o) => SearchTokenizer.distinctTokens(o, language))
      ])
      expect(SearchTokenizer.holdsAnyToken(s, tokens, language)).toBe(own.some((t) => tokens.has(t)))
    }
  )

  it("holdsAnyToken reads every ASCII word: each letter and digit, either case, at either end of the text", () => {
    for (const word of ["a", "z", "0", "9", "zz9", "a0z", "Zebra"]) {
      const tokens = new Set(SearchTokenizer.tokenize(word))
      for (const text of [word, `${word}!`, `!${word}`, `x ${word.toUpperCase()} y`, `x\n${word}`]) {
        expect(SearchTokenizer.holdsAnyToken(text, tokens)).toBe(true)
      }
      expect(SearchTokenizer.holdsAnyToken(`x${word}`, tokens)).toBe(false)
    }
  })

  it("holdsAnyToken matches by stem, never by substring", () => {
    expect(SearchTokenizer.holdsAnyToken("Deploys happen weekly", new Set(["deploy"]))).toBe(true)
    expect(SearchTokenizer.holdsAnyToken("My name is Doug", new Set(["am"]))).toBe(false)
    expect(SearchTokenizer.holdsAnyToken("Doug prefers coffee", new Set(["prefers"]), "none")).toBe(true)
    expect(SearchTokenizer.holdsAnyToken("anything", new Set())).toBe(false)
  })

  it("distinctTokens keeps first-seen order without repeats", () => {
    expect(SearchTokenizer.distinctTokens("b a B c A")).toEqual(["b", "a", "c"])
  })

  it("searchableText covers label, content and tags without gluing them together", () => {
    const tokens = SearchTokenizer.words(
      SearchTokenizer.searchableText({ label: "timezone", content: "Lisbon", tags: ["travel-plans", "pt"] })
    )
    expect(tokens).toEqual(["timezone", "lisbon", "travel", "plans", "pt"])
  })
})

describe("the tokenizer fingerprint (decision 0095)", () => {
  it("the pinned fingerprint of every language is what the tokenizer makes of its probe", () => {
    for (const language of SearchTokenizer.Language.literals) {
      expect(SearchTokenizer.fingerprintOf(language), language).toBe(SearchTokenizer.measuredFingerprintOf(language))
    }
    expect(new Set(SearchTokenizer.Language.literals.map(SearchTokenizer.fingerprintOf)).size).toBe(
      SearchTokenizer.Language.literals.length
    )
    expect(SearchTokenizer.fingerprint).toBe(SearchTokenizer.measuredFingerprintOf(SearchTokenizer.DEFAULT_LANGUAGE))
  })

  it("the stemmer is the version the fingerprints were pinned with (a new one: re-measure and re-pin)", async () => {
    const NodeFs = await import("node:fs")
    const { createRequire } = await import("node:module")
    const manifest = createRequire(import.meta.url).resolve("snowball-stemmers/package.json")
    expect(JSON.parse(NodeFs.readFileSync(manifest, "utf8")).version).toBe("0.6.0")
  })
})

describe("SearchTokenizer.chooseLanguage (decision 0196)", () => {
  const language = fc.constantFrom(...SearchTokenizer.Language.literals)

  it.prop(
    "a store opens in the language it records unless asked for another, which fails naming both",
    [language, fc.option(language, { nil: undefined })],
    ([stored, given]) => {
      const chosen = SearchTokenizer.chooseLanguage(stored, given)
      if (given === undefined || given === stored) {
        expect(chosen).toEqual(Either.right(stored))
      } else {
        expect(Either.isLeft(chosen) && chosen.left.stored === stored && chosen.left.given === given).toBe(true)
        expect(Either.isLeft(chosen) && chosen.left.message).toContain(`${stored}, not ${given}`)
      }
    }
  )

  it.prop("a store that records no language opens in the one asked for, English by default", [
    fc.option(language, { nil: undefined })
  ], ([given]) => {
    expect(SearchTokenizer.chooseLanguage(undefined, given)).toEqual(Either.right(given ?? "english"))
  })

  it("the recorded language, else the one the current fingerprint names", () => {
    for (const language of SearchTokenizer.Language.literals) {
      expect(SearchTokenizer.recordedLanguage({ tokenizer: SearchTokenizer.fingerprintOf(language) })).toBe(language)
    }
    expect(SearchTokenizer.recordedLanguage({ language: "german", tokenizer: SearchTokenizer.fingerprint })).toBe(
      "german"
    )
    expect(SearchTokenizer.recordedLanguage({ tokenizer: "an older tokenizer" })).toBeUndefined()
    expect(SearchTokenizer.recordedLanguage({})).toBeUndefined()
  })
})
