import { describe, expect, it } from "@effect/vitest"
import {
  Background,
  MemoryOverlay,
  MemoryStore,
  PromotionStore,
  PromptFragment,
  Routing,
  RoutingPresets
} from "@engram/core"
import { AgentBackground, Promotion } from "@engram/runtime"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"
import { companionBackground, stores } from "./utilities.js"

const spec = RoutingPresets.userBackground

const outcomes = (report: MemoryOverlay.OverlayReport) =>
  report.outcomes.map((o) => [o.recordId, o.status === "composed" ? "composed" : o.reason])

describe("AgentBackground.composeAgentBackground", () => {
  it.effect("joins the scope's rows with their records and folds them into the declared Background", () =>
    Effect.gen(function*() {
      const memories = yield* MemoryStore.MemoryStore
      const records = yield* memories.write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "Answer briefly", kind: "standing", label: "length" },
        { content: "It rained", kind: "episode" }
      ])
      yield* Promotion.promoteNew(records, { background: companionBackground, spec })
      const composed = yield* AgentBackground.composeAgentBackground({
        background: companionBackground,
        spec,
        scope: "global"
      })
      expect(outcomes(composed.report)).toEqual([
        ["mem-000001", "composed"],
        ["mem-000002", "review-required"],
        ["mem-000003", "spec-declined"]
      ])
      expect(Background.renderBackground(composed.background)).toBe(
        "### Assistant\n- **tone**: warm\n\n### About the User\n- **name**: My name is Doug"
      )
      expect(PromptFragment.joinFragments(composed.fragments)).toBe(Background.renderBackground(composed.background))
      expect(PromptFragment.memoryIdsOf(composed.fragments)).toEqual(["mem-000001"])
      expect(MemoryOverlay.composedIds(composed.report)).toEqual(["mem-000001"])
      expect(composed.missing).toEqual([])
      expect(composed.skipped).toEqual({ promotionRows: 0, records: 0 })
      // Confirming the standing record lets the guarded section take it at the next composition.
      yield* memories.setReviewState("mem-000002", "confirmed")
      const again = yield* AgentBackground.composeAgentBackground({
        background: companionBackground,
        spec,
        scope: "global"
      })
      expect(Background.findEntry(again.background, "preferences", "response_length")?.memoryIds).toEqual([
        "mem-000002"
      ])
    }).pipe(Effect.provide(stores)))

  it.effect("uses only this spec's rows in this scope, and reports rows whose record is gone", () =>
    Effect.gen(function*() {
      const memories = yield* MemoryStore.MemoryStore
      const promotions = yield* PromotionStore.PromotionStore
      const [here, there] = yield* memories.write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "My name is Ana", kind: "profile", label: "name", scope: "project:alpha" }
      ])
      yield* Promotion.promoteNew([here!, there!], { background: companionBackground, spec })
      yield* Promotion.promoteNew([here!], { background: RoutingPresets.projectSections, spec: RoutingPresets.project })
      const placement = Routing.background("about_user", "ghost")
      yield* promotions.commit([{
        recordId: "ghost-1",
        scope: "global",
        ...Routing.toPromotionDecision(
          {
            _tag: "Routed",
            placement,
            placementKey: Routing.placementKey(placement),
            keySource: "label",
            tier: "auto"
          },
          spec,
          here!.createdAt
        )
      }])
      const composed = yield* AgentBackground.composeAgentBackground({
        background: companionBackground,
        spec,
        scope: "global"
      })
      expect(outcomes(composed.report)).toEqual([["mem-000001", "composed"]])
      expect(composed.missing).toEqual(["ghost-1"])
    }).pipe(Effect.provide(stores)))

  it.effect("judges expiry at the current time and applies the budget it is given", () =>
    Effect.gen(function*() {
      const memories = yield* MemoryStore.MemoryStore
      const records = yield* memories.write([
        { content: "Flying to Rome tomorrow", kind: "profile", label: "trip", expiresInDays: 1 },
        { content: "x".repeat(200), kind: "profile", label: "essay" }
      ])
      yield* Promotion.promoteNew(records, { background: companionBackground, spec })
      const today = yield* AgentBackground.composeAgentBackground({
        background: companionBackground,
        spec,
        scope: "global",
        budget: { sectionChars: 100 }
      })
      expect(outcomes(today.report)).toEqual([["mem-000001", "composed"], ["mem-000002", "over-budget"]])
      yield* TestClock.adjust("2 days")
      const later = yield* AgentBackground.composeAgentBackground({
        background: companionBackground,
        spec,
        scope: "global"
      })
      expect(outcomes(later.report)).toEqual([["mem-000001", "expired"], ["mem-000002", "composed"]])
    }).pipe(Effect.provide(stores)))

  it.effect("a row holding a malformed placement degrades that row only: a typed result, not a defect", () =>
    Effect.gen(function*() {
      const memories = yield* MemoryStore.MemoryStore
      const [name, broken] = yield* memories.write([
        { content: "My name is Doug", kind: "profile", label: "name" },
        { content: "I live in Oslo", kind: "profile", label: "city" }
      ])
      yield* Promotion.promoteNew([name!], { background: companionBackground, spec })
      // A backend that does not check its rows hands back what a broken spec committed.
      const unchecked = Layer.effect(
        PromotionStore.PromotionStore,
        Effect.map(PromotionStore.PromotionStore, (inner): PromotionStore.Service => ({
          ...inner,
          listByScope: (scope, options) =>
            Effect.map(inner.listByScope(scope, options), (page) => ({
              ...page,
              rows: [...page.rows, {
                recordId: broken!.id,
                scope: "global",
                placement: { primitive: "background", section: "about_user", key: "" },
                placementKey: JSON.stringify(["about_user", ""]),
                keySource: "label",
                specKey: spec.key,
                specVersion: spec.version,
                promotedAt: broken!.createdAt,
                tier: "auto"
              }]
            }))
        }))
      )
      const composed = yield* Effect.exit(
        AgentBackground.composeAgentBackground({ background: companionBackground, spec, scope: "global" }).pipe(
          Effect.provide(unchecked)
        )
      )
      expect(Exit.isSuccess(composed)).toBe(true)
      if (Exit.isFailure(composed)) return
      expect(outcomes(composed.value.report)).toEqual([[name!.id, "composed"]])
      expect(composed.value.skipped).toEqual({ promotionRows: 1, records: 0 })
      const joined = AgentBackground.joinPlaced(
        [{
          recordId: broken!.id,
          scope: "global",
          placement: { primitive: "background", section: "", key: "city" },
          placementKey: JSON.stringify(["", "city"]),
          keySource: "label",
          specKey: spec.key,
          specVersion: spec.version,
          promotedAt: broken!.createdAt,
          tier: "auto"
        }],
        [broken!]
      )
      expect(joined.placed).toEqual([])
      expect(joined.invalid.map((i) => [i.recordId, i.error._tag])).toEqual([[broken!.id, "InvalidPlacement"]])
    }).pipe(Effect.provide(stores)))
})
