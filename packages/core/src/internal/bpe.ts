/**
 * OpenAI's byte-pair encodings from `gpt-tokenizer`, loaded on first use: the tables (a few MB,
 * about half a second to parse) are a dynamic import, so importing `@engram/core` costs nothing
 * until a projection first counts tokens. Text that spells a special token (`<|endoftext|>`) is
 * counted as ordinary text: a count never fails.
 *
 * A text is counted the way the encoding counts it — split by the encoding's own pre-tokenizer
 * pattern, each piece's byte-pair merges counted — with the count of each piece remembered by the
 * piece: merges never cross a piece, and a piece split alone is that one piece, so the sum is the
 * encoding's count of the whole text (a test holds the two equal on arbitrary text). Conversation
 * repeats its words, so most pieces of a new line are counted already: a line costs one split and
 * a map look-up per piece, where `gpt-tokenizer`'s `countTokens` also moves each piece to the
 * front of its merge cache (decision 0116). The split is a hand-written scan where the text is
 * ASCII, the pattern elsewhere (`preTokenize.ts`, decision 0121).
 *
 * @internal
 */
import * as PreTokenize from "./preTokenize.js"

export type Encoding = "o200k_base" | "cl100k_base"

const asText = { disallowedSpecial: new Set<string>() }
const loaded = new Map<Encoding, Promise<(text: string) => number>>()

/** Distinct pieces whose counts a counter remembers; past it the memory starts over. */
const PIECES_MAX = 200_000
/** Pieces longer than this are counted every time (a long run of letters is rare, and large). */
const PIECE_MAX_CHARS = 64

/**
 * The count of `text`: the pieces `split` (the encoding's pre-tokenizer) yields, each counted by
 * `countPiece` once and remembered.
 */
export const countByPieces = (
  split: PreTokenize.PreTokenizer,
  countPiece: (piece: string) => number
): (text: string) => number => {
  const pieces = new Map<string, number>()
  let total = 0
  // One callback for every text, so a text allocates nothing but its pieces.
  const add = (piece: string) => {
    let n = pieces.get(piece)
    if (n === undefined) {
      n = countPiece(piece)
      if (piece.length <= PIECE_MAX_CHARS) {
        if (pieces.size >= PIECES_MAX) pieces.clear()
        pieces.set(piece, n)
      }
    }
    total += n
  }
  return (text) => {
    if (text === "") return 0
    total = 0
    split(text, add)
    return total
  }
}

const tables = (encoding: Encoding) =>
  encoding === "o200k_base"
    ? import("gpt-tokenizer/encoding/o200k_base")
    : import("gpt-tokenizer/encoding/cl100k_base")

/** The token count of `encoding`, its tables loaded once per process. */
export const load = (encoding: Encoding): Promise<(text: string) => number> => {
  let counter = loaded.get(encoding)
  if (counter === undefined) {
    counter = Promise.all([tables(encoding), import("gpt-tokenizer/esm/encodingParams/constants")]).then((
      [bpe, patterns]
    ) =>
      countByPieces(
        encoding === "o200k_base"
          ? PreTokenize.o200k(patterns.O200K_TOKEN_SPLIT_REGEX)
          : PreTokenize.cl100k(patterns.CL100K_TOKEN_SPLIT_REGEX),
        (piece) => bpe.countTokens(piece, asText)
      )
    )
    loaded.set(encoding, counter)
  }
  return counter
}

/** `gpt-tokenizer`'s own count of the whole text: what {@link load}'s counter must equal. */
export const loadReference = (encoding: Encoding): Promise<(text: string) => number> =>
  tables(encoding).then((bpe) => (text: string) => text === "" ? 0 : bpe.countTokens(text, asText))
