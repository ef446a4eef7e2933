import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as TopK from "../src/internal/topK.js"

describe("TopK.select", () => {
  it.prop(
    "gives the first k of a full sort, in order, ties included",
    [fc.array(fc.record({ score: fc.integer({ min: 0, max: 5 }), id: fc.nat(50) })), fc.integer({ min: -1, max: 30 })],
    ([items, k]) => {
      const compare = (a: { score: number; id: number }, b: { score: number; id: number }) =>
        b.score - a.score || a.id - b.id
      expect(TopK.select(items, k, compare)).toEqual([...items].sort(compare).slice(0, Math.max(0, k)))
    }
  )
})
