/**
 * The one tokenizer every backend indexes and queries with, so that no backend has search
 * semantics of its own: in-memory, SQLite and PostgreSQL all match on these tokens.
 *
 * On most text it splits and folds exactly like SQLite FTS5's `unicode61 remove_diacritics 2`
 * tokenizer (pinned in `@engram/store-sqlite`'s tests). Where they differ, this one folds further
 * (accents in every script, such as Greek tonos and Cyrillic breve; compatibility forms such as
 * ligatures and full-width letters), keeps pointed Hebrew and Arabic and Indic words whole where
 * FTS5 splits them at their marks, and classifies characters by current Unicode rather than
 * Unicode 6.1. Stores index and query these tokens, never a native tokenizer's, so those
 * differences never reach a search.
 *
 * @since 0.1.0
 */

// Every combining mark except the kana voiced sound marks (U+3099, U+309A): "ガ" is a letter of
// its own, not an accented "カ" ("ガラス", glass, must not match "カラス", crow).
import { fnv1a64 } from "./internal/fnv1a64.js"

const combiningMarks = /[^\P{M}\u3099\u309A]+/gu
const tokenCharacters = /[\p{L}\p{N}]+/gu
// ASCII text needs none of the Unicode steps: it is its own NFKD/NFC, has no marks, and its
// letters and digits are [a-z0-9] once lowercased. Most text takes this much faster path.
const asciiOnly = /^[\x00-\x7f]*$/
const asciiTokenCharacters = /[a-z0-9]+/g

/**
 * Splits text into search tokens: Unicode NFKD, diacritics (combining marks) removed, case
 * folded, recomposed (NFC, so Hangul syllables and voiced kana stay whole), split on every
 * character that is not a letter or digit in any script, empty tokens dropped. Order and repeats
 * are kept.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const tokenize = (text: string): ReadonlyArray<string> => {
  if (asciiOnly.test(text)) return text.toLowerCase().match(asciiTokenCharacters) ?? []
  return text
    .normalize("NFKD")
    .replace(combiningMarks, "")
    .toLowerCase()
    // Case folding maps the Greek final sigma onto sigma, as FTS5 does.
    .replace(/ς/g, "σ")
    .normalize("NFC")
    .match(tokenCharacters) ?? []
}

/**
 * The distinct tokens of a text, in first-seen order.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const distinctTokens = (text: string): ReadonlyArray<string> => [...new Set(tokenize(text))]

/**
 * The text a record is searched by: its label, content and tags.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const searchableText = (record: {
  readonly label?: string | undefined
  readonly content: string
  readonly tags: ReadonlyArray<string>
}): string => [record.label ?? "", record.content, ...record.tags].join("\n")

// Text that exercises every rule of the tokenizer (folding, diacritics, compatibility forms, kana
// voicing, Hangul, final sigma, punctuation, emoji, digits of other scripts): when a new version
// splits or folds any of it differently, the fingerprint changes.
const fingerprintProbe = "Ǆemal Straße İstanbul ıi Ωmega ΆΘΗΝΑ σοφός ﬁne ①②³ ｶﾀｶﾅ ガラス カラス 한국어 東京タワー " +
  "Ёлка Café-crème O'Brien v2.0 e-mail 😀 ௰ a৴b ٣٤ ǅ ℌ ㎏ ﹫ Ⅻ"

/**
 * Identifies this tokenizer's behaviour. Backends store it beside their index and re-index stored
 * records once when it changes, so an upgrade never leaves old rows matching by old rules.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const fingerprint: string = fnv1a64(JSON.stringify(tokenize(fingerprintProbe)))
