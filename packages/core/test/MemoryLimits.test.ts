import { describe, expect, it } from "@effect/vitest"
import { MemoryLimits, MemoryRecord } from "@engram/core"
import { FastCheck as fc } from "effect"

const limits = (maxQueryChars: number): MemoryLimits.Limits => ({ ...MemoryLimits.defaults, maxQueryChars })

describe("MemoryLimits.clampQuery", () => {
  it.prop(
    "is a prefix within the limit, whole when it fits, well-formed when the text is",
    [fc.string({ unit: "grapheme", maxLength: 300 }), fc.integer({ min: 1, max: 200 })],
    ([text, max]) => {
      const clamped = MemoryLimits.clampQuery(text, limits(max))
      expect(clamped.length).toBeLessThanOrEqual(max)
      expect(text.startsWith(clamped)).toBe(true)
      if (text.length <= max) expect(clamped).toBe(text)
      expect(MemoryRecord.textProblem(clamped)).toBeUndefined()
    }
  )

  it("cuts at the last whitespace before the limit, never inside a word", () => {
    expect(MemoryLimits.clampQuery("alpha beta gamma", limits(12))).toBe("alpha beta")
    expect(MemoryLimits.clampQuery("alpha beta gamma", limits(11))).toBe("alpha beta")
    expect(MemoryLimits.clampQuery("alphabetagamma", limits(5))).toBe("alpha")
    expect(MemoryLimits.clampQuery("ab😀", limits(3))).toBe("ab")
  })
})

describe("MemoryRecord.textProblem", () => {
  it("refuses NUL and unpaired surrogates, accepts well-formed text", () => {
    expect(MemoryRecord.textProblem("a\u0000b")).toContain("NUL")
    expect(MemoryRecord.textProblem("a\uD83D")).toContain("unpaired surrogate")
    expect(MemoryRecord.textProblem("\uDE00a")).toContain("unpaired surrogate")
    expect(MemoryRecord.textProblem("😀 \u202E \u200B\t\n")).toBeUndefined()
  })

  // Any UTF-16 code units, lone surrogates included.
  const codeUnits = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((u) => String.fromCharCode(u)) })

  it.prop("agrees with String.prototype.isWellFormed on text without NUL", [codeUnits], ([s]) => {
    const wellFormed = (s as unknown as { isWellFormed(): boolean }).isWellFormed()
    if (!s.includes("\u0000")) expect(MemoryRecord.textProblem(s) === undefined).toBe(wellFormed)
  })
})
