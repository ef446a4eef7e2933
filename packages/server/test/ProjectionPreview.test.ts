/**
 * The console's projection preview (`GET /api/projection`) is the projection the native loop gets:
 * for the same store, agent config, scope, working state, skills and query, the preview served over
 * HTTP and the projection of a `NativeRuntime.runTurn` of an agent built from that config are the
 * same value — identity tier, working state and skills included (both assemble the turn with
 * `Turn`, decision 0166).
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  type MemoryRecord,
  MemoryStore,
  ProjectionLayout,
  RoutingPresets,
  RoutingSpecs,
  SessionStore
} from "@engram/core"
import { NativeRuntime, Promotion, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { serveWith } from "./utilities.js"

const scope: MemoryRecord.Scope = "project:a"

const agent: StablePrefix.AgentConfigInput = {
  persona: "You are a companion.",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground.key,
  scope
}
const workingState = "goal: plan the team offsite"
const skills: ReadonlyArray<ProjectionLayout.SkillRow> = [{ name: "calendar", description: "books rooms and slots" }]

describe("the console's projection preview", () => {
  it.live("is the projection the native loop gets for the same store, agent, scope and query", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({ agent: yield* StablePrefix.decodeConfig(agent), workingState, skills })
      // The name composes into the prefix; the standing preference (a guarded section) awaits
      // review, so only the identity tier delivers it; one fact is always on, one found by recall.
      yield* Effect.provide(
        Effect.gen(function*() {
          const store = yield* MemoryStore.MemoryStore
          const records = yield* store.write([
            { content: "My name is Doug", kind: "profile", label: "name", scope, sourceType: "operator" },
            { content: "Answer briefly", kind: "standing", label: "length", scope, sourceType: "conversation" },
            { content: "Offsites are booked a month ahead", kind: "fact", deliveryPolicy: "always", scope },
            { content: "The offsite venue is the Oslo office", kind: "fact", scope, sourceType: "operator" }
          ])
          yield* Promotion.promoteNew(records, {
            background: RoutingPresets.userBackgroundSections,
            spec: RoutingPresets.userBackground
          })
        }),
        served.context
      ).pipe(Effect.orDie)

      const query = "where is the offsite, and how should you answer?"
      const preview = yield* served.request(
        "GET",
        `/api/projection?scope=${encodeURIComponent(scope)}&q=${encodeURIComponent(query)}`,
        { token: served.tokens.a }
      )
      expect(preview.status).toBe(200)
      const previewed = (preview.json as { readonly projection: unknown }).projection

      const turn = yield* Effect.gen(function*() {
        const native = yield* NativeRuntime.fromConfig({ ...agent, scopes: [scope] }, { workingState, skills })
        return yield* NativeRuntime.runTurn({ agent: native, sessionId: "s-native", input: query })
      }).pipe(
        Effect.provide(
          Layer.mergeAll(
            ContextProjection.layer,
            RoutingSpecs.layerPresets,
            SessionStore.layerMemory,
            ScriptedModel.layer(() => [ScriptedModel.text("ok")])
          )
        ),
        Effect.provide(served.context)
      )

      const native = Schema.encodeSync(ProjectionLayout.ProjectedContext)(turn.projection)
      expect(previewed).toEqual(native)
      // What makes the comparison worth having: every section a native turn gets is in the preview.
      expect(turn.projection.sections.map((section) => section.label)).toEqual(
        expect.arrayContaining([
          "working_state",
          "identity_memory",
          "always_on_memory",
          "skills_index",
          "recalled_memory"
        ])
      )
      expect(turn.projection.text).toContain("Answer briefly")
      expect(turn.projection.text).not.toContain("My name is Doug")
    })))

  it.live("projects as of an instant when asked (asOf, decision 0175): the values valid then", () =>
    Effect.scoped(Effect.gen(function*() {
      const served = yield* serveWith({ agent: yield* StablePrefix.decodeConfig(agent) })
      yield* Effect.provide(
        Effect.gen(function*() {
          const store = yield* MemoryStore.MemoryStore
          yield* store.write([{
            id: "venue-old",
            content: "The offsite venue is the Oslo office",
            kind: "fact",
            scope,
            sourceType: "operator",
            validFrom: DateTime.unsafeMake("2024-01-01T00:00:00Z")
          }])
          yield* store.supersede("venue-old", {
            id: "venue-new",
            content: "The offsite venue is the Bergen office",
            kind: "fact",
            sourceType: "operator",
            validFrom: DateTime.unsafeMake("2025-06-01T00:00:00Z")
          })
        }),
        served.context
      ).pipe(Effect.orDie)
      const preview = (asOf?: string) =>
        Effect.map(
          served.request(
            "GET",
            `/api/projection?scope=${encodeURIComponent(scope)}&q=${encodeURIComponent("where is the offsite venue?")}${
              asOf === undefined ? "" : `&asOf=${encodeURIComponent(asOf)}`
            }`,
            { token: served.tokens.a }
          ),
          (answer) => (answer.json as { readonly projection: { readonly text: string } }).projection.text
        )
      const now = yield* preview()
      const then = yield* preview("2025-01-01T00:00:00.000Z")
      expect([now.includes("Bergen"), now.includes("Oslo")]).toEqual([true, false])
      expect([then.includes("Bergen"), then.includes("Oslo")]).toEqual([false, true])
      const bad = yield* served.request("GET", `/api/projection?scope=${encodeURIComponent(scope)}&q=x&asOf=spring`, {
        token: served.tokens.a
      })
      expect(bad.status).toBe(400)
    })))
})
