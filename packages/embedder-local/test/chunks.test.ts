/**
 * How a text is cut for the encoder (`internal/chunks.ts`): bounded pieces, bounded count, nothing
 * reordered, nothing but whitespace lost before the cap.
 */
import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { chunks, mean } from "../src/internal/chunks.js"

const text = fc.string({ unit: fc.constantFrom("a", "b", " ", "é", "\n", "z"), maxLength: 3_000 })

describe("chunks", () => {
  it.prop("never longer than maxChars nor more than maxChunks pieces, never empty", [
    text,
    fc.integer({ min: 4, max: 400 }),
    fc.integer({ min: 1, max: 8 })
  ], ([t, maxChars, maxChunks]) => {
    const pieces = chunks(t, maxChars, maxChunks)
    expect(pieces.length).toBeGreaterThan(0)
    expect(pieces.length).toBeLessThanOrEqual(maxChunks)
    for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(maxChars)
  })

  it.prop("reads the text in order: the pieces, spaces aside, are the start of the text", [
    text,
    fc.integer({ min: 4, max: 400 }),
    fc.integer({ min: 1, max: 8 })
  ], ([t, maxChars, maxChunks]) => {
    const squeeze = (s: string) => s.replace(/\s+/g, "")
    const read = squeeze(chunks(t, maxChars, maxChunks).join(""))
    expect(squeeze(t).startsWith(read)).toBe(true)
    // Whatever fits in maxChunks × maxChars is read whole.
    if (t.length <= maxChars) expect(read).toBe(squeeze(t))
  })

  it("cuts at a space near the end of a piece rather than inside a word", () => {
    expect(chunks("alpha beta gamma delta", 12, 4)).toEqual(["alpha beta", "gamma delta"])
  })

  it("averages vectors component by component", () => {
    expect(mean([[1, 2], [3, 4]], 2)).toEqual([2, 3])
  })
})
