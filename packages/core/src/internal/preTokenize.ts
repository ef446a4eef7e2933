/**
 * The o200k_base and cl100k_base pre-tokenizers: a text split into the pieces the encoding's split
 * pattern (`gpt-tokenizer`'s `O200K_TOKEN_SPLIT_REGEX` / `CL100K_TOKEN_SPLIT_REGEX`) matches, in
 * order, one callback per piece.
 *
 * Conversation is mostly ASCII, and on ASCII the patterns' Unicode classes are a few ranges, so a
 * piece made of ASCII (and `·`, U+00B7, punctuation like `!`) is found by a hand-written scan of
 * char codes, which spares the pattern's match objects: ~1.4× the pattern's speed on conversation
 * lines (decision 0121). A piece whose extent depends on any other character — the character is in
 * it, or the scan had to look at it to know where the piece ends — is matched by the pattern
 * itself, from where the piece starts: the patterns have no look-behind, so a match depends only on
 * the text from its start, and the scan resumes where the pattern's piece ends. A test holds the
 * pieces equal to the pattern's on arbitrary text.
 *
 * @internal
 */

/** Calls `onPiece` with each piece of `text`, in order. */
export type PreTokenizer = (text: string, onPiece: (piece: string) => void) => void

// What the patterns distinguish among the characters the scan handles. `\s` on ASCII is
// \t \n \v \f \r and space; of those only \r and \n are `[\r\n]`, the rest can begin a letter
// piece as `[^\r\n\p{L}\p{N}]` does.
const SYMBOL = 0 // [^\s\p{L}\p{N}]: ASCII punctuation and controls, and U+00B7
const UPPER = 1 // A-Z: \p{Lu}
const LOWER = 2 // a-z: \p{Ll}
const DIGIT = 3 // 0-9: \p{N}
const NEWLINE = 4 // \r \n
const SPACE = 5 // \t \v \f and space
const OTHER = 6 // any other character: the pattern decides
const END = 7 // past the end of the text

const APOSTROPHE = 39
const SLASH = 47
const BLANK = 32

/** The class of each code below 256, built by the first pre-tokenizer (importing core builds nothing). */
let classes = new Uint8Array(0)

const buildClasses = (): void => {
  if (classes.length > 0) return
  const table = new Uint8Array(256).fill(OTHER)
  for (let code = 0; code < 128; code++) {
    table[code] = code >= 65 && code <= 90
      ? UPPER
      : code >= 97 && code <= 122
      ? LOWER
      : code >= 48 && code <= 57
      ? DIGIT
      : code === 10 || code === 13
      ? NEWLINE
      : code === 32 || (code >= 9 && code <= 12)
      ? SPACE
      : SYMBOL
  }
  table[0xb7] = SYMBOL
  classes = table
}

// Every read is bounds-checked: `charCodeAt` past the end is measurably slower, even once a text.
const classAt = (text: string, at: number): number => {
  if (at >= text.length) return END
  const code = text.charCodeAt(at)
  return code < 256 ? classes[code]! : OTHER
}

/**
 * The end of a contraction (`'s 'd 'm 't 'll 've 're`, either case) starting at `at`, or `at` when
 * there is none. Its letters are ASCII, so any other character just ends it.
 */
const contractionEnd = (text: string, at: number): number => {
  if (at + 1 >= text.length || text.charCodeAt(at) !== APOSTROPHE) return at
  // | 32 folds an ASCII capital to its small letter.
  const a = text.charCodeAt(at + 1) | 32
  if (a === 115 || a === 100 || a === 109 || a === 116) return at + 2 // s d m t
  if (at + 2 >= text.length) return at
  const b = text.charCodeAt(at + 2) | 32
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return at + 3 // ll ve re
  return at
}

/** Whether the scan must hand the piece to the pattern for a character that ends a run: a non-ASCII one. */
const undecided = (code: number): boolean => code >= 128 && code !== 0xb7

/**
 * o200k's letter run from `at`: `[\p{Lu}…]*[\p{Ll}…]+` or `[\p{Lu}…]+[\p{Ll}…]*`, then an optional
 * contraction. On ASCII the capitals and the small letters do not overlap, so it is the capitals,
 * then the small letters, and neither part gives anything back. -1 when the run meets a character
 * the scan does not handle (it may be a letter or a mark).
 */
const casedLetters = (text: string, at: number): number => {
  const n = text.length
  let end = at
  let code = 0
  while (end < n && (code = text.charCodeAt(end)) >= 65 && code <= 90) end++
  if (end < n && code >= 97 && code <= 122) {
    end++
    while (end < n && (code = text.charCodeAt(end)) >= 97 && code <= 122) end++
  }
  if (end >= n) return end
  return undecided(code) ? -1 : code === APOSTROPHE ? contractionEnd(text, end) : end
}

/** cl100k's letter run from `at`: `\p{L}+`, no contraction. */
const letters = (text: string, at: number): number => {
  const n = text.length
  let end = at
  let code = 0
  while (end < n && (((code = text.charCodeAt(end)) >= 97 && code <= 122) || (code >= 65 && code <= 90))) end++
  return end < n && undecided(code) ? -1 : end
}

/** `[^\s\p{L}\p{N}]+` from `at`, then `[\r\n/]*` (o200k) or `[\r\n]*` (cl100k). */
const symbols = (text: string, at: number, slash: boolean): number => {
  const n = text.length
  let end = at + 1
  let next = classAt(text, end)
  while (next === SYMBOL) next = classAt(text, ++end)
  if (next === OTHER) return -1 // it may be a symbol too
  // Whatever ends the tail is not \r, \n or "/", so it need not be known.
  for (; end < n; end++) {
    const code = text.charCodeAt(end)
    if (code !== 10 && code !== 13 && !(slash && code === SLASH)) break
  }
  return end
}

/** `\p{N}{1,3}` from `at`: a run shorter than three ends at a character that must not be a digit. */
const digits = (text: string, at: number): number => {
  let end = at + 1
  while (end < at + 3 && classAt(text, end) === DIGIT) end++
  return end < at + 3 && classAt(text, end) === OTHER ? -1 : end
}

/**
 * The whitespace alternatives from `at`, where no letter or symbol piece starts: through the run's
 * last line break (o200k's `\s*[\r\n]+`, cl100k's `\s*[\r\n]`), else all of it at the end of the
 * text, all but its last character before more text (`\s+(?!\S)`), a lone one whole (`\s+`, `\s`).
 * cl100k tries `\s+$` first: a run that ends the text is one piece, line breaks and all.
 */
const whitespace = (text: string, at: number, wholeAtEnd: boolean): number => {
  let end = at
  let lastNewline = -1
  let next = classAt(text, end)
  while (next === SPACE || next === NEWLINE) {
    if (next === NEWLINE) lastNewline = end
    next = classAt(text, ++end)
  }
  if (next === OTHER) return -1 // it may be whitespace too
  if (next === END && wholeAtEnd) return end
  if (lastNewline >= 0) return lastNewline + 1
  return next === END || end - at === 1 ? end : end - 1
}

/** Where o200k's piece starting at `at` ends, or -1 when the pattern must decide it. */
const scanO200k = (text: string, at: number): number => {
  const first = classAt(text, at)
  if (first === LOWER || first === UPPER) return casedLetters(text, at)
  if (first === SYMBOL || first === SPACE) {
    // [^\r\n\p{L}\p{N}]? before a letter run: one symbol or whitespace character but \r \n.
    const second = classAt(text, at + 1)
    if (second === LOWER || second === UPPER) return casedLetters(text, at + 1)
    if (second === OTHER) return -1
    if (first === SYMBOL) return symbols(text, at, true)
    if (second === SYMBOL && text.charCodeAt(at) === BLANK) return symbols(text, at + 1, true)
  }
  if (first === DIGIT) return digits(text, at)
  if (first === SPACE || first === NEWLINE) return whitespace(text, at, false)
  return -1
}

/** Where cl100k's piece starting at `at` ends, or -1 when the pattern must decide it. */
const scanCl100k = (text: string, at: number): number => {
  const first = classAt(text, at)
  if (first === LOWER || first === UPPER) return letters(text, at)
  if (first === SYMBOL || first === SPACE) {
    // The contraction is an alternative of its own, before the rest.
    const contraction = contractionEnd(text, at)
    if (contraction > at) return contraction
    const second = classAt(text, at + 1)
    if (second === LOWER || second === UPPER) return letters(text, at + 1)
    if (second === OTHER) return -1
    if (first === SYMBOL) return symbols(text, at, false)
    if (second === SYMBOL && text.charCodeAt(at) === BLANK) return symbols(text, at + 1, false)
  }
  if (first === DIGIT) return digits(text, at)
  if (first === SPACE || first === NEWLINE) return whitespace(text, at, true)
  return -1
}

/** Pieces scanned by `scan` where it decides them, matched by `split` where it does not. */
const make = (split: RegExp, scan: (text: string, at: number) => number): PreTokenizer => {
  buildClasses()
  const pattern = new RegExp(split.source, "gu")
  return (text, onPiece) => {
    const n = text.length
    let at = 0
    while (at < n) {
      // -1 (and an empty piece, which no alternative matches) is the pattern's to decide.
      const end = scan(text, at)
      if (end > at) {
        onPiece(text.slice(at, end))
        at = end
        continue
      }
      // Where the previous piece ended, as the pattern's own pass would be.
      pattern.lastIndex = at
      const match = pattern.exec(text)
      if (match === null) return
      onPiece(match[0])
      at = pattern.lastIndex
    }
  }
}

/** o200k_base's pre-tokenizer; `split` is `gpt-tokenizer`'s `O200K_TOKEN_SPLIT_REGEX`. */
export const o200k = (split: RegExp): PreTokenizer => make(split, scanO200k)

/** cl100k_base's pre-tokenizer; `split` is `gpt-tokenizer`'s `CL100K_TOKEN_SPLIT_REGEX`. */
export const cl100k = (split: RegExp): PreTokenizer => make(split, scanCl100k)
