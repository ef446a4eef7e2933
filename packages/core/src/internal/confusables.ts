/**
 * Confusable folding: a character that looks like a Latin letter (Cyrillic "а", Greek "ο",
 * Cherokee "Ꭺ", mathematical and letter-like symbols…) read as that letter, by the prototypes of
 * Unicode's confusables table (UTS #39, `confusables.txt`) as the `unhomoglyph` package ships them
 * — a maintained copy of the table with its update script, not a list of our own. A process that
 * screens only ASCII text never calls it; the CLI bundle loads the table on first call.
 *
 * @internal
 */
import unhomoglyph from "unhomoglyph"

const prototypes = new Map<string, string>()

/** The prototype of one character (itself when the table has none), remembered per character. */
const prototypeOf = (ch: string): string => {
  let mapped = prototypes.get(ch)
  if (mapped === undefined) prototypes.set(ch, mapped = unhomoglyph(ch))
  return mapped
}

const nonAscii = /[^\x00-\x7f]/
const asciiWord = /^[a-z0-9]+$/

/**
 * A word (a run of letters, marks and digits, already lowercased) read as Latin: when every
 * character of it is ASCII or has a prototype that, lowercased, is ASCII letters or digits, the
 * word spelled with those prototypes ("іgnоrе" with Cyrillic і, о, е reads "ignore"); otherwise the
 * word as it is, so a Russian or Greek word stays itself and its own language's rules read it.
 */
export const latinWord = (word: string): string => {
  if (!nonAscii.test(word)) return word
  let out = ""
  for (const ch of word) out += ch.charCodeAt(0) < 0x80 ? ch : prototypeOf(ch).toLowerCase()
  return asciiWord.test(out) ? out : word
}
