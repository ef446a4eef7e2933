import { describe, expect, it } from "@effect/vitest"
import * as NeighbourWindow from "../src/NeighbourWindow.js"

describe("NeighbourWindow", () => {
  it("reads each offset as a one-position frame before or after, in offset order", () => {
    const window = NeighbourWindow.windowSql([-2, -1, 1])
    expect(window.ctes).toContain("max(score) OVER (w RANGE BETWEEN 2 PRECEDING AND 2 PRECEDING) AS n0")
    expect(window.ctes).toContain("max(score) OVER (w RANGE BETWEEN 1 PRECEDING AND 1 PRECEDING) AS n1")
    expect(window.ctes).toContain("max(score) OVER (w RANGE BETWEEN 1 FOLLOWING AND 1 FOLLOWING) AS n2")
    expect(window.columns).toBe("x.n0, x.n1, x.n2")
    expect(window.sum).toBe("coalesce(x.n0, 0) + coalesce(x.n1, 0) + coalesce(x.n2, 0)")
    expect(window.none).toBe("NULL AS n0, NULL AS n1, NULL AS n2")
  })
})
