/**
 * The normalization placement keys are built from. It is Routing's own, separate from the search
 * tokenizer on purpose: keys are persisted on promotion rows, so this must not change when search
 * tokenization is tuned.
 *
 * Unicode NFKD, combining marks removed (except the kana voiced sound marks, so "ガ" stays distinct
 * from "カ"), lower-cased, recomposed (NFC), split on anything that is not a letter or digit.
 *
 * @internal
 */
const marks = /[^\P{M}\u3099\u309A]+/gu
const separators = /[^\p{L}\p{N}]+/u

export const addressTokens = (text: string): ReadonlyArray<string> =>
  text
    .normalize("NFKD")
    .replace(marks, "")
    .toLowerCase()
    .normalize("NFC")
    .split(separators)
    .filter((token) => token.length > 0)
