/**
 * One Snowball stemmer per language, from `snowball-stemmers` (the Snowball project's algorithms
 * compiled to plain JavaScript), behind a bounded memo: stemming a word costs about 10 µs, and
 * text repeats its words (Zipf), so the memo turns most calls into a map lookup.
 *
 * @internal
 */
// The package ships no types: its declaration sits beside this module.
/// <reference path="./snowball-stemmers.d.ts" />
import snowball from "snowball-stemmers"

/** Words longer than this are kept whole: no language's suffixes reach that far into a word. */
const MAX_STEMMED_LENGTH = 48
/** Stems remembered per language; the memo empties when it is full. */
const MEMO_SIZE = 100_000
/** A word the stemmers work on: letters only (a token with a digit, such as "v2", stays whole). */
const lettersOnly = /^\p{L}+$/u

const stemmers = new Map<string, ((word: string) => string) | undefined>()

/** The stemming function of `language`, or `undefined` for `"none"`. */
export const stemmerFor = (language: string): ((word: string) => string) | undefined => {
  if (stemmers.has(language)) return stemmers.get(language)
  if (language === "none") {
    stemmers.set(language, undefined)
    return undefined
  }
  const stemmer = snowball.newStemmer(language)
  const memo = new Map<string, string>()
  const stem = (word: string): string => {
    const known = memo.get(word)
    if (known !== undefined) return known
    const stemmed = word.length > MAX_STEMMED_LENGTH || !lettersOnly.test(word) ? word : stemmer.stem(word)
    // A stem is never empty: a word a stemmer would erase is kept as it is.
    const result = stemmed.length === 0 ? word : stemmed
    if (memo.size >= MEMO_SIZE) memo.clear()
    memo.set(word, result)
    return result
  }
  stemmers.set(language, stem)
  return stem
}
