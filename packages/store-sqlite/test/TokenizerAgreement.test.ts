/**
 * The shared tokenizer against SQLite FTS5's own `unicode61 remove_diacritics 2` tokenizer, read
 * back token by token through an `fts5vocab` instance table.
 *
 * The store never relies on FTS5's tokenizer (it indexes `tokenize()`'s output), so these tests
 * pin where the two agree — the ground a raw FTS5 query over the same text shares with us — and
 * exactly how they differ elsewhere.
 */
import { describe, expect, it } from "@effect/vitest"
import { searchCases, searchCorpus } from "@engram/conformance"
import { SearchTokenizer } from "@engram/core"
import Database from "better-sqlite3"
import { afterAll } from "vitest"

const db = new Database(":memory:")
db.exec(`CREATE VIRTUAL TABLE texts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');
  CREATE VIRTUAL TABLE texts_vocab USING fts5vocab(texts, 'instance');`)
const insert = db.prepare("INSERT INTO texts (rowid, body) VALUES (?, ?)")
const tokensOf = db.prepare<[number], { term: string }>("SELECT term FROM texts_vocab WHERE doc = ? ORDER BY offset")
let nextRowid = 0
afterAll(() => db.close())

/** The tokens FTS5 indexes for `text`, in text order. */
const fts5Tokens = (text: string): ReadonlyArray<string> => {
  const rowid = ++nextRowid
  insert.run(rowid, text)
  return tokensOf.all(rowid).map((row) => row.term)
}

// FTS5 splits and folds; stemming comes after, so the split (`words`) is what must agree.
const { tokenize, words } = SearchTokenizer

describe("tokenize agrees with FTS5 unicode61 remove_diacritics 2", () => {
  const corpusTexts = searchCorpus.flatMap((
    entry
  ) => [entry.content, ...(entry.label ? [entry.label] : []), ...(entry.tags ?? [])])

  it("on every text of the conformance corpus", () => {
    for (const text of corpusTexts) expect([text, words(text)]).toEqual([text, fts5Tokens(text)])
  })

  // Latin with diacritics, Cyrillic, Greek (final sigma, capitals), CJK, kana, Hangul, Thai,
  // punctuation of every kind, digits.
  const samples = [
    "Crème brûlée, café au lait & naïve façade — Ångström, Øresund, Łódź, Dvořák, Straße",
    "Tiếng Việt có dấu: Hà Nội, Đà Nẵng",
    "İSTANBUL ıstakoz Ça va? Señor Muñoz",
    "Привет, МИР! Встреча в Москве, по пятницам; Хорошо, до завтра",
    "ΟΔΥΣΣΕΥΣ οδυσσευς — ΣΟΦΟΣ σοφος ΣΙΣΥΦΟΣ",
    "東京 会議 日本語のテキスト 中文分词 漢字",
    "ガラス カラス パン ハン がぎぐげご ぱぴぷぺぽ",
    "한국어 텍스트 검색",
    "ภาษาไทย",
    "e-mail: doug@example.com, v2.0 (beta) [x] {y} <z> a/b\\c 'q' \"r\" `s` ~t^ u|v",
    "O'Brien’s “quoted” «guillemets» ‹single› — dash – en dash … ellipsis · middle dot",
    "3.14159 1,000,000 2025-03-14T09:26:53Z #42 100% $5 €7 ¥9 +1 -2 =3 *4 _5_",
    "tab\tnew\nline\r\nreturn\u00a0nbsp\u2003em-space\u3000ideographic",
    "emoji 🎉 party 😀 face 👍 thumbs"
  ]

  it("on multi-script samples: Latin with diacritics, Cyrillic, Greek, CJK, kana, Hangul, Thai, punctuation, digits", () => {
    for (const text of samples) expect([text, words(text)]).toEqual([text, fts5Tokens(text)])
  })

  it("on the texts the stores index: tokenize's own output indexes unchanged", () => {
    for (const text of [...corpusTexts, ...samples]) {
      const tokens = tokenize(text)
      expect(fts5Tokens(tokens.join(" "))).toEqual(tokens)
    }
  })
})

describe("where tokenize folds further than FTS5", () => {
  // FTS5 removes diacritics from Latin letters only and applies no compatibility normalization;
  // tokenize removes accents in every script and normalizes compatibility forms (NFKD). Token
  // boundaries are the same: folding FTS5's tokens with tokenize gives tokenize's tokens.
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
    ["Greek tonos", "Αθήνα άλφα", ["αθήνα", "άλφα"], ["αθηνα", "αλφα"]],
    ["Greek dialytika", "Ϊ ϋ ΐ", ["ϊ", "ϋ", "ΐ"], ["ι", "υ", "ι"]],
    ["Cyrillic breve and diaeresis", "Добрый йод, ёлка, Київ", ["добрый", "йод", "ёлка", "київ"], [
      "добрыи",
      "иод",
      "елка",
      "киів"
    ]],
    ["ligatures", "ﬁne ﬂow", ["ﬁne", "ﬂow"], ["fine", "flow"]],
    ["full-width letters and digits", "ＡＢＣ１２３", ["ａｂｃ１２３"], ["abc123"]],
    ["mathematical letters", "𝐀𝐁𝐂", ["𝐀𝐁𝐂"], ["abc"]],
    ["superscripts and fractions", "x² ½", ["x²", "½"], ["x2", "1", "2"]],
    ["Latin digraph letters", "ǅ ǈ", ["ǆ", "ǉ"], ["dz", "lj"]]
  ]

  for (const [what, text, fts5, ours] of cases) {
    it(`${what}: "${text}"`, () => {
      expect(fts5Tokens(text)).toEqual(fts5)
      expect(words(text)).toEqual(ours)
      expect(words(fts5.join(" "))).toEqual(ours)
    })
  }

  it("the corpus queries that rely on it still find their records through the store's tokens", () => {
    // "Αθήνα" and "φίλους" carry tonos; FTS5 alone would keep it and miss the capitals-only text.
    const athens = searchCorpus.find((entry) => entry.id === "athens")!.content
    for (const query of ["Αθήνα", "φίλους"]) {
      const queryTokens = new Set(tokenize(query))
      expect(searchCases.some((c) => c.query === query && c.expected.includes("athens"))).toBe(true)
      expect(tokenize(athens).some((token) => queryTokens.has(token))).toBe(true)
      expect(fts5Tokens(query).some((token) => new Set(fts5Tokens(athens)).has(token))).toBe(false)
    }
  })
})

describe("where FTS5 works from Unicode 6.1 tables", () => {
  // unicode61 classifies characters by Unicode 6.1: whatever was unassigned then — emoji and
  // modifiers added since, letters of scripts encoded since — and private-use characters are
  // token characters to it. tokenize classifies by the current Unicode version.
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
    ["emoji added after 6.1", "hi 🥰 there", ["hi", "🥰", "there"], ["hi", "there"]],
    ["skin-tone modifiers", "ok 👍🏽 go", ["ok", "🏽", "go"], ["ok", "go"]],
    ["Adlam (encoded in Unicode 9)", "𞤀𞤢", ["𞤀𞤢"], ["𞤢𞤢"]],
    ["private use", "a\uE000b", ["a\uE000b"], ["a", "b"]]
  ]
  for (const [what, text, fts5, ours] of cases) {
    it(`${what}: ${JSON.stringify(text)}`, () => {
      expect(fts5Tokens(text)).toEqual(fts5)
      expect(words(text)).toEqual(ours)
    })
  }
})

describe("where FTS5 splits words that tokenize keeps whole", () => {
  // unicode61 treats combining marks outside U+0300-036F as separators; tokenize removes marks
  // before splitting, so pointed Hebrew and Arabic, and Indic words, stay one token each.
  const cases: ReadonlyArray<readonly [string, string, ReadonlyArray<string>, ReadonlyArray<string>]> = [
    ["Hebrew points", "עִבְרִית", ["ע", "ב", "ר", "ית"], ["עברית"]],
    ["Arabic harakat", "مَرْحَبًا", ["م", "ر", "ح", "ب", "ا"], ["مرحبا"]],
    ["Devanagari vowel signs", "हिन्दी", ["ह", "न", "द"], ["हनद"]]
  ]
  for (const [what, text, fts5, ours] of cases) {
    it(`${what}: "${text}"`, () => {
      expect(fts5Tokens(text)).toEqual(fts5)
      expect(words(text)).toEqual(ours)
    })
  }
})
