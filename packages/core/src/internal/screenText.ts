/**
 * The poisoning screen's views of a text (`InstructionScreen`): the text folded the way its rules
 * read it, and the other texts it may be hiding — encoded runs decoded, tag characters and
 * variation selectors spelled out, ROT13 and reversed text turned back, leetspeak read as letters.
 * A disguise only hides words from a reader that does not undo it; each view undoes one.
 *
 * @internal
 */
import { visibleText } from "../TextSafety.js"
import { latinWord } from "./confusables.js"

/**
 * How a payload was hidden, when the screen found it only after undoing it.
 */
export type Disguise =
  | "base64"
  | "hex"
  | "percent-encoding"
  | "escapes"
  | "binary"
  | "hidden-characters"
  | "rot13"
  | "reversed"
  | "leetspeak"

// Printable ASCII, tab and line breaks: such text needs none of the Unicode steps of folding.
const plainAscii = /^[\t\n\r\x20-\x7e]*$/
const combiningMarks = /\p{M}+/gu
// Characters that render as nothing or as a joiner inside a word, beyond what `TextSafety` removes
// for a model: the joiners themselves (the screen reads the letters on either side as one word), the
// soft hyphen, the combining grapheme joiner, Hangul fillers and variation selectors.
const wordBreakers = /[\u00AD\u034F\u115F\u1160\u200C\u200D\u3164\uFFA0\uFE00-\uFE0F\u{E0100}-\u{E01EF}]/gu
const singleQuotes = /[\u2018\u2019\u201A\u201B\u2032`´]/g
const doubleQuotes = /[\u201C\u201D\u201E\u201F\u2033\u00AB\u00BB]/g
const negatedContraction = /n't\b/g
// Letters spelled out one by one ("i g n o r e", "i.g.n.o.r.e", "i-g-n-o-r-e"): four or more single
// letters, each apart from the next by one or two separators, read as one word.
const spelledOut = /(?<![a-z0-9])[a-z](?:[ .\-_*·•]{1,2}[a-z]){3,}(?![a-z0-9])/g
const spelledSeparators = /[ .\-_*·•]/g
const nonAsciiWord = /[\p{L}\p{N}]*[^\x00-\x7f][\p{L}\p{N}]*/gu

/**
 * What one pass over a text's characters tells the screen: whether it is printable ASCII (tabs and
 * line breaks allowed), whether it has a run of sixteen characters without a space (room for an
 * encoded sentence), a letter beside a digit or a symbol leetspeak uses, and four letters standing
 * alone in a row ("i g n o r e"). One loop instead of four patterns: most memories are short
 * ASCII text, and the screen's fast path is this pass and one scan for anchors.
 */
export interface Shape {
  readonly ascii: boolean
  readonly longRun: boolean
  readonly leet: boolean
  readonly spelled: boolean
}

const LETTER = 1
const DIGIT = 2
const LEET_SYMBOL = 4
const SPACE = 8
const classes = new Uint8Array(128)
for (let c = 65; c <= 90; c++) classes[c] = LETTER
for (let c = 97; c <= 122; c++) classes[c] = LETTER
for (let c = 48; c <= 57; c++) classes[c] = DIGIT
for (const ch of "@$|+!") classes[ch.charCodeAt(0)] = LEET_SYMBOL
for (const c of [9, 10, 13, 32]) classes[c] = SPACE

export const shapeOf = (text: string): Shape => {
  let ascii = true
  let longRun = false
  let leet = false
  let run = 0
  let alone = 0
  let spelled = false
  let previous = SPACE
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    const kind = code < 128 ? classes[code]! : 0
    if (code >= 127 || (code < 32 && kind !== SPACE)) ascii = false
    run = kind === SPACE ? 0 : run + 1
    if (run >= 16) longRun = true
    if (
      (previous === LETTER && (kind === DIGIT || (kind === LEET_SYMBOL && code !== 33))) ||
      ((previous === DIGIT || previous === LEET_SYMBOL) && kind === LETTER && text.charCodeAt(i - 1) !== 33) ||
      (code === 33 && previous === LETTER && classes[text.charCodeAt(i + 1)] === LETTER)
    ) leet = true
    if (kind === LETTER && (previous & (LETTER | DIGIT)) === 0) {
      const next = text.charCodeAt(i + 1)
      const single = !(next < 128 && (classes[next]! & (LETTER | DIGIT)) !== 0)
      alone = single ? alone + 1 : 0
      if (alone >= 4) spelled = true
    } else if (kind === DIGIT && (previous & (LETTER | DIGIT)) === 0) {
      alone = 0
    }
    previous = kind
  }
  return { ascii, longRun, leet, spelled }
}

const lowerSpecial = (text: string): string =>
  text.replace(/ß/g, "ss").replace(/ı/g, "i").replace(/ſ/g, "s").replace(/ς/g, "σ")

/**
 * The text as the screen's rules read it: compatibility forms folded (NFKC: full-width and
 * mathematical letters), invisible characters removed (as `TextSafety` removes them for a model,
 * and the joiners), lower case, diacritics removed, every word that a confusables table can spell in
 * Latin letters spelled so, typographic quotes made plain, "n't" read as " not", letters spelled out
 * one by one joined. Line breaks are kept.
 */
export const fold = (text: string, shape: Shape = shapeOf(text)): string => {
  let out: string
  if (shape.ascii) {
    out = text.toLowerCase()
    if (out.includes("`")) out = out.replace(/`/g, "'")
  } else {
    out = lowerSpecial(visibleText(text.normalize("NFKC")).replace(wordBreakers, "").toLowerCase())
      .normalize("NFKD")
      .replace(combiningMarks, "")
      .normalize("NFC")
      .replace(nonAsciiWord, latinWord)
      .replace(singleQuotes, "'")
      .replace(doubleQuotes, "\"")
  }
  if (out.includes("n't")) out = out.replace(negatedContraction, " not")
  // Spelled-out letters in non-ASCII text are looked for in the folded text (a space may have been
  // a look-alike).
  return shape.spelled || (!shape.ascii && shapeOf(out).spelled)
    ? out.replace(spelledOut, (run) => run.replace(spelledSeparators, ""))
    : out
}

// ---------------------------------------------------------------------------------------------
// Hidden characters: tag characters and variation selectors that spell text no reader sees

const tagRun = /(?<!\u{1F3F4}[\u{E0020}-\u{E007E}]*)[\u{E0020}-\u{E007E}]{2,}/gu
const selectorRun = /[\uFE00-\uFE0F\u{E0100}-\u{E01EF}]{4,}/gu

/**
 * The text hidden in `text`'s invisible characters, when there is any: runs of Unicode tag
 * characters (each spells one ASCII character; an emoji flag's tag sequence is not hidden text),
 * and runs of variation selectors (each selects a byte; together they can carry UTF-8).
 */
export const hiddenText = (text: string): string | undefined => {
  if (plainAscii.test(text)) return undefined
  const found: Array<string> = []
  for (const [run] of text.matchAll(tagRun)) {
    found.push(String.fromCharCode(...[...run].map((ch) => ch.codePointAt(0)! - 0xe0000)))
  }
  for (const [run] of text.matchAll(selectorRun)) {
    const bytes = [...run].map((ch) => {
      const code = ch.codePointAt(0)!
      return code <= 0xfe0f ? code - 0xfe00 : code - 0xe0100 + 16
    })
    const decoded = utf8(Uint8Array.from(bytes))
    if (decoded !== undefined) found.push(decoded)
  }
  const joined = found.join(" ").trim()
  return /[a-z]{2}/i.test(joined) ? joined : undefined
}

// ---------------------------------------------------------------------------------------------
// Encoded runs

const decoder = new TextDecoder("utf-8", { fatal: true })

const utf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

const printable = /[\p{L}\p{N}\p{P}\p{Zs}\n\t]/u
const letter = /\p{L}/u

/** Decoded text that reads as text: mostly letters, digits, punctuation and spaces, some letters. */
const readable = (text: string | undefined): string | undefined => {
  if (text === undefined || text.length < 4) return undefined
  let good = 0
  let letters = 0
  for (const ch of text) {
    if (printable.test(ch)) good++
    if (letter.test(ch)) letters++
  }
  const length = [...text].length
  return good / length >= 0.9 && letters >= 4 && letters / length >= 0.4 ? text : undefined
}

// A run may be wrapped over lines, as MIME wraps base64 (every 76 characters).
const base64Run = /[A-Za-z0-9+/_-]{16,}(?:\r?\n[A-Za-z0-9+/_-]{4,})*={0,2}/g
const mixedCase = /[a-z].*[A-Z]|[A-Z].*[a-z]/
const fromBase64 = (run: string): string | undefined => {
  if (!mixedCase.test(run) && !/[0-9+/]/.test(run)) return undefined
  const standard = run.replace(/-/g, "+").replace(/_/g, "/").replace(/=+$/, "")
  const padded = standard + "=".repeat((4 - (standard.length % 4)) % 4)
  try {
    const binary = atob(padded)
    return utf8(Uint8Array.from(binary, (ch) => ch.charCodeAt(0)))
  } catch {
    return undefined
  }
}

const hexRun = /(?:\\x|0x)?[0-9a-fA-F]{2}(?:[\s:,-]?(?:\\x|0x)?[0-9a-fA-F]{2}){7,}/g
const hexPairs = /[0-9a-fA-F]{2}/g
const fromHex = (run: string): string | undefined => {
  const digits = run.replace(/\\x|0x/g, "").match(hexPairs) ?? []
  return utf8(Uint8Array.from(digits, (pair) => parseInt(pair, 16)))
}

// A run without spaces holding three or more percent escapes: "Ignore%20all%20previous%20…".
const percentRun = /[^\s%]*(?:%[0-9a-fA-F]{2}[^\s%]*){3,}/g
const fromPercent = (run: string): string | undefined => {
  try {
    return decodeURIComponent(run)
  } catch {
    return undefined
  }
}

const escapeRun = /(?:\\u[0-9a-fA-F]{4}|\\u\{[0-9a-fA-F]{1,6}\}|&#x[0-9a-fA-F]{1,6};|&#[0-9]{1,7};){3,}/g
const escapeOne = /\\u([0-9a-fA-F]{4})|\\u\{([0-9a-fA-F]{1,6})\}|&#x([0-9a-fA-F]{1,6});|&#([0-9]{1,7});/g
const fromEscapes = (run: string): string | undefined => {
  try {
    return run.replace(
      escapeOne,
      (_, u4?: string, u?: string, x?: string, d?: string) =>
        String.fromCodePoint(
          u4 !== undefined ? parseInt(u4, 16) : u !== undefined ? parseInt(u, 16) : x !== undefined
            ? parseInt(x, 16)
            : parseInt(d!, 10)
        )
    )
  } catch {
    return undefined
  }
}

const binaryRun = /(?:[01]{8}[\s,]?){4,}/g
const binaryHint = /(?:[01]{8}[\s,]?){4}/
const fromBinary = (run: string): string | undefined =>
  utf8(Uint8Array.from(run.match(/[01]{8}/g) ?? [], (byte) => parseInt(byte, 2)))

const decoders: ReadonlyArray<readonly [Disguise, RegExp, (run: string) => string | undefined]> = [
  ["base64", base64Run, fromBase64],
  ["hex", hexRun, fromHex],
  ["percent-encoding", percentRun, fromPercent],
  ["escapes", escapeRun, fromEscapes],
  ["binary", binaryRun, fromBinary]
]

/** True when `text` may hold an encoded run (`decodedRuns` would look). */
export const mayEncode = (text: string, shape: Shape = shapeOf(text)): boolean =>
  shape.longRun || text.includes("\\u") || text.includes("&#") || (text.includes("01") && binaryHint.test(text))

/**
 * The readable texts encoded in `text`: every base64, hex, percent-encoded, escaped or binary run
 * that decodes to text, decoded.
 */
export const decodedRuns = (text: string): ReadonlyArray<{ readonly text: string; readonly disguise: Disguise }> => {
  if (!mayEncode(text)) return []
  const found: Array<{ readonly text: string; readonly disguise: Disguise }> = []
  for (const [disguise, pattern, decode] of decoders) {
    for (const [run] of text.matchAll(pattern)) {
      const decoded = readable(decode(run.replace(/\s+/g, "")))
      if (decoded !== undefined) found.push({ text: decoded, disguise })
      else if (run.includes("\n")) {
        // Lines that were not one wrapped run: each read on its own.
        for (const line of run.split(/\r?\n/)) {
          const one = line.length >= 16 ? readable(decode(line)) : undefined
          if (one !== undefined) found.push({ text: one, disguise })
        }
      }
    }
  }
  return found
}

// ---------------------------------------------------------------------------------------------
// Letter games

/** ROT13 of the (folded, lower-case) text's ASCII letters. */
export const rot13 = (text: string): string =>
  text.replace(/[a-z]/g, (ch) => String.fromCharCode(((ch.charCodeAt(0) - 97 + 13) % 26) + 97))

/** The text read backwards, by code point. */
export const reversed = (text: string): string => [...text].reverse().join("")

const leetSymbols: Readonly<Record<string, string>> = {
  "0": "o",
  "1": "i",
  "3": "e",
  "4": "a",
  "5": "s",
  "6": "g",
  "7": "t",
  "8": "b",
  "9": "g",
  "@": "a",
  "$": "s",
  "!": "i",
  "|": "i",
  "+": "t",
  "€": "e"
}
const leetWord = /[a-z0-9@$!|+€]+/g
const leetChar = /[0-9@$!|+€]/g
const letters = /[a-z]/
const leetOnly = /[@$!|+€]/

/**
 * The (folded) text with leetspeak read as letters, or `undefined` when it holds too little of it
 * to be leetspeak: at least two words that mix letters with the digits and symbols leetspeak uses,
 * four such characters among them ("5pm" or "mp3" alone is not). Every "l" becomes "i" too, as "1"
 * and "|" do: the view is read against a vocabulary folded the same way, so "a11" and "all" meet.
 */
export const leetspeak = (folded: string, shape: Shape = shapeOf(folded)): string | undefined => {
  if (!shape.leet) return undefined
  let words = 0
  let symbols = 0
  for (const [word] of folded.matchAll(leetWord)) {
    if (!letters.test(word)) continue
    const found = word.match(leetChar)?.length ?? 0
    if (found > 0 && found < word.length) {
      words++
      symbols += found
    }
  }
  if (words < 2 || symbols < 4) return undefined
  // A word of symbols and digits alone is leetspeak when a symbol is in it ("+0", "+311"); digits
  // alone are a number.
  return leetFold(
    folded.replace(
      leetWord,
      (word) => letters.test(word) || leetOnly.test(word) ? word.replace(leetChar, (ch) => leetSymbols[ch]!) : word
    )
  )
}

/** The fold `leetspeak` applies to the letters it keeps: "l" read as "i". */
export const leetFold = (word: string): string => word.replace(/l/g, "i")
