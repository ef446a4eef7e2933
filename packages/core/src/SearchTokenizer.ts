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
 * Each word is then reduced to its stem by the store's language's Snowball stemmer (English by
 * default: "deploys", "deployed" and "deploying" all index and query as "deploy"), so a search
 * finds the forms of a word the question did not repeat. Exact and stemmed forms rank alike:
 * only the stem is indexed (decision 0049).
 *
 * @since 0.1.0
 */

import * as Either from "effect/Either"
import * as Schema from "effect/Schema"
import * as ErrorClass from "./ErrorClass.js"
import { fnv1a64 } from "./internal/fnv1a64.js"
import { stemmerFor } from "./internal/stemming.js"

// Every combining mark except the kana voiced sound marks (U+3099, U+309A): "ガ" is a letter of
// its own, not an accented "カ" ("ガラス", glass, must not match "カラス", crow).
const combiningMarks = /[^\P{M}\u3099\u309A]+/gu
const tokenCharacters = /[\p{L}\p{N}]+/gu
// ASCII text needs none of the Unicode steps: it is its own NFKD/NFC, has no marks, and its
// letters and digits are [a-z0-9] once lowercased. Most text takes this much faster path.
const asciiOnly = /^[\x00-\x7f]*$/
const asciiTokenCharacters = /[a-z0-9]+/g

/**
 * Splits text into words, before stemming: Unicode NFKD, diacritics (combining marks) removed, case
 * folded, recomposed (NFC, so Hangul syllables and voiced kana stay whole), split on every
 * character that is not a letter or digit in any script, empty tokens dropped. Order and repeats
 * are kept.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const words = (text: string): ReadonlyArray<string> => {
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
 * The languages a store can stem its words in (Snowball's algorithms), or `"none"` to index every
 * word exactly as {@link words} splits it.
 *
 * @since 0.1.0
 * @category models
 */
export const Language = Schema.Literal(
  "english",
  "arabic",
  "armenian",
  "basque",
  "catalan",
  "czech",
  "danish",
  "dutch",
  "finnish",
  "french",
  "german",
  "hungarian",
  "irish",
  "italian",
  "norwegian",
  "portuguese",
  "romanian",
  "russian",
  "slovene",
  "spanish",
  "swedish",
  "tamil",
  "turkish",
  "none"
).annotations({ identifier: "SearchLanguage" })
/** @since 0.1.0 @category models */
export type Language = typeof Language.Type

/**
 * The language a store stems in when none is configured.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_LANGUAGE: Language = "english"

/**
 * A store opened in one language whose search index was built in another: every stored token is
 * the other stemmer's, so searching it in this one would miss what it holds. Name the store's
 * language (or none, to open it in the language it records), or copy its records into a new
 * store in the other language (`engram migrate`).
 *
 * @since 0.1.0
 * @category errors
 */
export class LanguageMismatch extends ErrorClass.TaggedError<LanguageMismatch>()("LanguageMismatch", {
  stored: Schema.String,
  given: Language
}, {
  errorClass: "Misconfigured",
  message: (self) =>
    `the store's search index was built in ${self.stored}, not ${self.given}: open it in ${self.stored} ` +
    `(or without a language), or copy it into a new store in ${self.given} with \`engram migrate\``
}) {}

/**
 * The language a store opens in, from what it records and what its opener asks for: the language
 * it records (when the opener names none or the same one), else the opener's (or
 * {@link DEFAULT_LANGUAGE}) for a store that records none yet. A store that records another
 * language than the one asked for fails with {@link LanguageMismatch}. The one rule every
 * persistent backend applies when it opens (decision 0196). Pure.
 *
 * @since 0.1.0
 * @category languages
 */
export const chooseLanguage = (
  stored: string | undefined,
  given: Language | undefined
): Either.Either<Language, LanguageMismatch> => {
  if (stored === undefined) return Either.right(given ?? DEFAULT_LANGUAGE)
  if (given === undefined ? Schema.is(Language)(stored) : stored === given) return Either.right(stored as Language)
  return Either.left(new LanguageMismatch({ stored, given: given ?? DEFAULT_LANGUAGE }))
}

/**
 * The language a store's search index was built in, read from what it records beside the index:
 * its `language` when it has one, else the language whose fingerprint ({@link fingerprintOf}) its
 * `tokenizer` is — exact for an index this version of the tokenizer built; `undefined` for an
 * index an older version built without recording its language (it is re-indexed when it opens).
 *
 * @since 0.1.0
 * @category languages
 */
export const recordedLanguage = (recorded: {
  readonly language?: string | undefined
  readonly tokenizer?: string | undefined
}): string | undefined =>
  recorded.language ??
    (recorded.tokenizer === undefined ? undefined : LANGUAGE_OF_FINGERPRINT.get(recorded.tokenizer))

/**
 * Splits text into search tokens: {@link words}, each reduced to its stem in `language` (English
 * by default). Order and repeats are kept.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const tokenize = (text: string, language: Language = DEFAULT_LANGUAGE): ReadonlyArray<string> => {
  const split = words(text)
  const stem = stemmerFor(language)
  return stem === undefined ? split : split.map(stem)
}

/**
 * True when a token of `text` is one of `tokens`: what `distinctTokens(text, language)` holding one
 * of them says, stopping at the first word whose stem is found (no array, no set of the text's
 * tokens). The projection's relevance step asks it of every recalled record (decision 0144).
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const holdsAnyToken = (
  text: string,
  tokens: ReadonlySet<string>,
  language: Language = DEFAULT_LANGUAGE
): boolean => {
  if (tokens.size === 0) return false
  const stem = stemmerFor(language)
  const held = (word: string) => tokens.has(stem === undefined ? word : stem(word))
  if (!asciiOnly.test(text)) return words(text).some(held)
  // ASCII: the words of `words`' fast path ([a-z0-9]+ of the lowercased text), read in place up to
  // the first one held, with no regex match and no array of every word.
  const lower = text.toLowerCase()
  let start = -1
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0
    if ((c >= 97 && c <= 122) || (c >= 48 && c <= 57)) {
      if (start < 0) start = i
    } else if (start >= 0) {
      if (held(lower.slice(start, i))) return true
      start = -1
    }
  }
  return false
}

/**
 * The distinct tokens of a text, in first-seen order.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const distinctTokens = (text: string, language: Language = DEFAULT_LANGUAGE): ReadonlyArray<string> => [
  ...new Set(tokenize(text, language))
]

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
// The second line exercises the stemmers (inflections, derivations, long words left whole).
const fingerprintProbe = "Ǆemal Straße İstanbul ıi Ωmega ΆΘΗΝΑ σοφός ﬁne ①②³ ｶﾀｶﾅ ガラス カラス 한국어 東京タワー " +
  "Ёлка Café-crème O'Brien v2.0 e-mail 😀 ௰ a৴b ٣٤ ǅ ℌ ㎏ ﹫ Ⅻ\n" +
  "Deploys deployed happiness generously running ponies caresses Häuser häuslich maisons cantando книги " +
  "x".repeat(80)

/**
 * What the tokenizer makes of its probe text in a language, hashed: computed by tokenizing (it
 * loads and runs the stemmer). {@link fingerprintOf} answers the same value from a table, without
 * stemming; core's tests hold the two equal for every language, so a change to the rules or the
 * stemmer that alters any token of the probe fails them until the table is re-pinned (decision 0095).
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const measuredFingerprintOf = (language: Language): string =>
  fnv1a64(JSON.stringify([language, tokenize(fingerprintProbe, language)]))

// The fingerprints of this version of the tokenizer (with snowball-stemmers 0.6.0), one per
// language: {@link measuredFingerprintOf} pinned, so that opening a store needs no stemming.
const FINGERPRINTS: { readonly [L in Language]: string } = {
  english: "8454716f8d22c582",
  arabic: "fa4cc835c704987b",
  armenian: "774f80d07b644db2",
  basque: "16a994808946a9e2",
  catalan: "5808a6538439d8cf",
  czech: "79335fee7c6ea4e2",
  danish: "813095f671106119",
  dutch: "552e1dc5d0afb4ba",
  finnish: "1763a44573f3dd0f",
  french: "c4118037a97e9202",
  german: "f9e68c7e05e916ab",
  hungarian: "004ac34097aff702",
  irish: "c894a60b0031fbe4",
  italian: "40b440433af33f30",
  norwegian: "87fab877ac8250d1",
  portuguese: "b9ab973a0d88f91f",
  romanian: "8cce35f02dd32da0",
  russian: "b377861ec7b7f4ac",
  slovene: "a06a5159b9942cba",
  spanish: "cd4c1c26a278d45f",
  swedish: "c2c2e03de9f7a4e0",
  tamil: "e849d86e988404e6",
  turkish: "eaa540763254c375",
  none: "3707cdce3e064425"
}

/**
 * Identifies the tokenizer's behaviour in a language. Backends store it beside their index and
 * re-index stored records once when it changes (a new version of the tokenizer or the stemmer),
 * so an upgrade never leaves old rows matching by old rules; a store opened in another language
 * than its index's fails instead ({@link chooseLanguage}). A constant per
 * language ({@link measuredFingerprintOf} pinned, decision 0095): reading it loads no stemmer.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const fingerprintOf = (language: Language): string => FINGERPRINTS[language]

const LANGUAGE_OF_FINGERPRINT: ReadonlyMap<string, Language> = new Map(
  Object.entries(FINGERPRINTS).map(([language, fingerprint]) => [fingerprint, language as Language])
)

/**
 * The fingerprint of the tokenizer in {@link DEFAULT_LANGUAGE}.
 *
 * @since 0.1.0
 * @category tokenizing
 */
export const fingerprint: string = fingerprintOf(DEFAULT_LANGUAGE)
