import { describe, expect, it } from "@effect/vitest"
import { MemoryStore, PromotionStore, SessionStore, TelemetryStore } from "@engram/core"
import { Demo } from "@engram/harness"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const stores = Layer.mergeAll(
  MemoryStore.layerMemory,
  PromotionStore.layerMemory,
  SessionStore.layerMemory,
  TelemetryStore.layerMemory
)

describe("the demo", () => {
  it.effect("learns a name in session 1 and shows it, attributed, in session 2's request", () =>
    Effect.gen(function*() {
      const report = yield* Demo.run
      expect(report.saved).toMatchObject({ content: "The user's name is Doug.", kind: "profile", label: "name" })
      expect(report.promotion).toMatchObject({ tier: "auto", placement: { section: "about_user", key: "name" } })
      expect(report.prefix.composedIds).toEqual([report.saved!.id])
      expect(report.first.result).toMatchObject({ _tag: "Completed", text: "Nice to meet you! I'll remember that." })
      expect(report.second.result).toMatchObject({
        _tag: "Completed",
        text: "From what I remember: The user's name is Doug."
      })

      const [snapshot] = report.second.snapshots
      const doug = snapshot!.request.fragments.filter((f) => f.text.includes("Doug"))
      expect(doug.find((f) => f.source === "prefix")).toMatchObject({ role: "system", memoryIds: [report.saved!.id] })
      // The session summary reaches session 2 through the projection's digest, with its own id.
      expect(doug.find((f) => f.source === "projection")).toMatchObject({
        label: "prior_sessions",
        memoryIds: [report.summary.id]
      })

      const text = Demo.render(report, { location: "memory" })
      expect(text).toContain("prefix · Context · memory " + report.saved!.id)
      expect(text).toContain("used ")
      expect(JSON.parse(JSON.stringify(Demo.toJson(report))).second.calls[0].fragments.length).toBeGreaterThan(3)
    }).pipe(Effect.provide(stores)))
})
