/**
 * How a text of any length becomes the pieces the encoder reads. The encoder's tokenizer costs the
 * square of its input's length (32,000 characters took 17.7 s to tokenize) and a sentence encoder
 * is made for sentences and paragraphs, so a long text is cut into pieces of at most `maxChars`,
 * each ending at a space where one falls in the piece's last quarter, and only the first
 * `maxChunks` pieces are read.
 *
 * @internal
 */

/** The pieces of `text` the encoder reads: never empty (an empty text is one empty piece). */
export const chunks = (text: string, maxChars: number, maxChunks: number): Array<string> => {
  const pieces: Array<string> = []
  let start = 0
  const trimmed = text.trim()
  while (start < trimmed.length && pieces.length < maxChunks) {
    let end = Math.min(trimmed.length, start + maxChars)
    if (end < trimmed.length) {
      const space = trimmed.lastIndexOf(" ", end)
      if (space > start + Math.floor(maxChars * 0.75)) end = space
    }
    const piece = trimmed.slice(start, end).trim()
    if (piece.length > 0) pieces.push(piece)
    start = end
  }
  return pieces.length === 0 ? [""] : pieces
}

/** The mean of `vectors` (each of `dimensions` numbers). */
export const mean = (vectors: ReadonlyArray<ReadonlyArray<number>>, dimensions: number): Array<number> => {
  const sum = new Array<number>(dimensions).fill(0)
  for (const vector of vectors) for (let i = 0; i < dimensions; i++) sum[i]! += vector[i]!
  return sum.map((value) => value / Math.max(1, vectors.length))
}
