/**
 * The o200k_base and cl100k_base pre-tokenizers: a text split into the pieces the encoding's split
 * pattern (`gpt-tokenizer`'s `O200K_TOKEN_SPLIT_REGEX` / `CL100K_TOKEN_SPLIT_REGEX`) matches, in
 * order, one callback per piece.
 *
 * Conversation is mostly ASCII, and on ASCII the patterns' Unicode classes are a few ranges, so a
 * piece made of ASCII (and `·`, U+00B7, punctuation like `!`) is found by a hand-written scan of
 * char codes, several times faster than the pattern (decision 0121). A piece whose extent depends
 * on any other character — the character is in it, or the scan had to look at it to know where the
 * piece ends — is matched by the pattern itself, from where the piece starts: the patterns have no
 * look-behind, so a match depends only on the text from its start, and the scan resumes where the
 * pattern's piece ends. A test holds the pieces equal to the pattern's on arbitrary text.
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

type CharClass = typeof SYMBOL | typeof UPPER | typeof LOWER | typeof DIGIT | typeof NEWLINE | typeof SPACE

let asciiClasses: Uint8Array | undefined

/** The class of each ASCII code, built on first use (importing core builds nothing it may not use). */
const classes = (): Uint8Array => {
  if (asciiClasses === undefined) {
    const table = new Uint8Array(128)
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
    asciiClasses = table
  }
  return asciiClasses
}

const APOSTROPHE = 39
const SLASH = 47
const BLANK = 32

/**
 * The end of a contraction (`'s 'd 'm 't 'll 've 're`, either case) starting at `at`, or `at` when
 * there is none. Its letters are ASCII, so a character the scan does not handle just ends it.
 */
const contractionEnd = (text: string, at: number): number => {
  if (text.charCodeAt(at) !== APOSTROPHE) return at
  // | 32 folds an ASCII capital to its small letter (NaN past the end stays unequal).
  const a = text.charCodeAt(at + 1) | 32
  if (a === 115 || a === 100 || a === 109 || a === 116) return at + 2 // s d m t
  const b = text.charCodeAt(at + 2) | 32
  if ((a === 108 && b === 108) || (a === 118 && b === 101) || (a === 114 && b === 101)) return at + 3 // ll ve re
  return at
}

/**
 * The scan shared by both encodings: where the piece starting at `start` ends, or -1 when the
 * pattern must decide it. The two patterns agree on digit runs (`\p{N}{1,3}`), on a symbol run with
 * at most one space before it, and on whitespace followed by more text; they differ in letter
 * runs, in what may follow a symbol run, and in whitespace at the end of the text.
 */
const makeScan = (o200k: boolean) => {
  const table = classes()
  const classAt = (text: string, at: number): CharClass | typeof OTHER | typeof END => {
    if (at >= text.length) return END
    const code = text.charCodeAt(at)
    return code < 128 ? (table[code] as CharClass) : code === 0xb7 ? SYMBOL : OTHER
  }

  /** A letter run from `at`: o200k's case-aware run with its optional contraction, cl100k's `\p{L}+`. */
  const letters = (text: string, at: number): number => {
    let end = at
    let next = classAt(text, end)
    if (o200k) {
      // [\p{Lu}…]*[\p{Ll}…]+ or [\p{Lu}…]+[\p{Ll}…]*: capitals, then small letters, and on ASCII
      // the two sets do not overlap, so neither part gives anything back.
      while (next === UPPER) next = classAt(text, ++end)
      while (next === LOWER) next = classAt(text, ++end)
      return next === OTHER ? -1 : contractionEnd(text, end)
    }
    while (next === UPPER || next === LOWER) next = classAt(text, ++end)
    return next === OTHER ? -1 : end
  }

  /** ` ?[^\s\p{L}\p{N}]+` then `[\r\n/]*` (o200k) or `[\r\n]*` (cl100k), the run starting at `at`. */
  const symbols = (text: string, at: number): number => {
    let end = at
    let next = classAt(text, end)
    while (next === SYMBOL) next = classAt(text, ++end)
    if (next === OTHER) return -1
    // Whatever ends the tail is not \r, \n or "/", so it need not be known.
    for (let code = text.charCodeAt(end); code === 10 || code === 13 || (o200k && code === SLASH);) {
      code = text.charCodeAt(++end)
    }
    return end
  }

  /** The whitespace alternatives, from `at` (a whitespace character not starting a letter or symbol piece). */
  const whitespace = (text: string, at: number): number => {
    let end = at
    let lastNewline = -1
    let next = classAt(text, end)
    while (next === SPACE || next === NEWLINE) {
      if (next === NEWLINE) lastNewline = end
      next = classAt(text, ++end)
    }
    if (next === OTHER) return -1 // it may be whitespace too
    // cl100k's \s+$ comes first: a run that ends the text is one piece.
    if (next === END && !o200k) return end
    // \s*[\r\n]+ (o200k), \s*[\r\n] (cl100k): through the run's last line break.
    if (lastNewline >= 0) return lastNewline + 1
    // \s+(?!\S): all of it at the end of the text, else all but its last; \s+ or \s: one character.
    return next === END || end - at === 1 ? end : end - 1
  }

  /** Where the piece starting at `at` ends, or -1. */
  return (text: string, at: number): number => {
    const first = classAt(text, at)
    if (first === UPPER || first === LOWER) return letters(text, at)
    if (first === DIGIT) {
      // \p{N}{1,3}; a run shorter than three ends at a character that must not be a digit.
      let end = at + 1
      while (end < at + 3 && classAt(text, end) === DIGIT) end++
      return end < at + 3 && classAt(text, end) === OTHER ? -1 : end
    }
    if (first === SYMBOL && !o200k) {
      // cl100k's contraction is an alternative of its own, before the rest.
      const end = contractionEnd(text, at)
      if (end > at) return end
    }
    if (first === SYMBOL || first === SPACE) {
      // [^\r\n\p{L}\p{N}]? before a letter run: one symbol or whitespace character but \r \n.
      const second = classAt(text, at + 1)
      if (second === UPPER || second === LOWER) return letters(text, at + 1)
      if (second === OTHER) return -1
      if (first === SYMBOL) return symbols(text, at)
      if (second === SYMBOL && text.charCodeAt(at) === BLANK) return symbols(text, at + 1)
    }
    if (first === SPACE || first === NEWLINE) return whitespace(text, at)
    return -1
  }
}

/**
 * The pre-tokenizer of `split` (the encoding's pattern): pieces scanned by hand where the scan
 * handles them, matched by `split` where it does not.
 */
const make = (split: RegExp, o200k: boolean): PreTokenizer => {
  const scan = makeScan(o200k)
  const pattern = new RegExp(split.source, "gu")
  return (text, onPiece) => {
    let at = 0
    while (at < text.length) {
      const end = scan(text, at)
      if (end >= 0) {
        onPiece(text.slice(at, end))
        at = end
        continue
      }
      pattern.lastIndex = at
      const match = pattern.exec(text)
      if (match === null) return
      onPiece(match[0])
      at = pattern.lastIndex
    }
  }
}

/** o200k_base's pre-tokenizer; `split` is `gpt-tokenizer`'s `O200K_TOKEN_SPLIT_REGEX`. */
export const o200k = (split: RegExp): PreTokenizer => make(split, true)

/** cl100k_base's pre-tokenizer; `split` is `gpt-tokenizer`'s `CL100K_TOKEN_SPLIT_REGEX`. */
export const cl100k = (split: RegExp): PreTokenizer => make(split, false)
