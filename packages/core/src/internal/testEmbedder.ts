/**
 * The deterministic test embedder's features: per word, its stem (weight 1) and the character
 * trigrams of the word padded with boundary marks (weight 0.5 each), hashed into signed buckets.
 *
 * @internal
 */
import { words } from "../SearchTokenizer.js"
import { stemmerFor } from "./stemming.js"

export const MODEL = "engram-test-trigram-v1"

const STEM_WEIGHT = 1
const GRAM_WEIGHT = 0.5

// FNV-1a 32-bit over UTF-16 code units: only needs to be stable, not a standard encoding.
const hash = (text: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i)
    h = Math.imul(h, 0x01000193) >>> 0
  }
  return h >>> 0
}

const add = (vector: Array<number>, feature: string, weight: number): void => {
  const h = hash(feature)
  // The lowest bit gives the sign, so unrelated features cancel rather than pile up.
  vector[(h >>> 1) % vector.length]! += (h & 1) === 0 ? weight : -weight
}

/** The raw (not normalised) feature vector of `text`. */
export const embed = (text: string, dimensions: number): Array<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  const stem = stemmerFor("english")!
  for (const word of words(text)) {
    add(vector, `s:${stem(word)}`, STEM_WEIGHT)
    const padded = `^${word}$`
    for (let i = 0; i + 3 <= padded.length; i++) add(vector, `g:${padded.slice(i, i + 3)}`, GRAM_WEIGHT)
  }
  return vector
}
