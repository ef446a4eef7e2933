/**
 * One function assembles a turn (decision 0166): for one agent config and one input, MCP's
 * `memory_context`, `ContextAssembler.compose` (ACP) and `NativeRuntime.runTurn` (a scripted
 * model) send byte-identical requests. Each goes through `Turn`; a transport that composed on its
 * own — dropping the working state, taking scopes from another field, numbering its turns from 0
 * — would send other bytes, or a snapshot under another turn, and fail here.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryStore,
  PromotionStore,
  RoutingPresets,
  RoutingSpecs,
  SessionStore,
  TelemetryStore
} from "@engram/core"
import { AgentContext } from "@engram/mcp"
import { ContextAssembler, NativeRuntime, PromptObserver, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const config: StablePrefix.AgentConfigInput = {
  persona: "You are a friendly companion.",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground.key,
  scope: "global",
  scopes: ["global", "project:atlas"],
  projection: { budgetTokens: 1_500 }
}

const query = "when does the ferry to the island leave?"

const environment = Layer.mergeAll(
  ContextProjection.layer,
  ScriptedModel.layer(() => [ScriptedModel.text("At nine.")]),
  PromptObserver.layerCapture,
  RoutingSpecs.layerPresets
).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      MemoryStore.layerMemory,
      PromotionStore.layerMemory,
      SessionStore.layerMemory,
      TelemetryStore.layerMemory,
      IdGenerator.sequential("mem")
    )
  )
)

describe("one turn (decision 0166)", () => {
  it.effect("MCP, ACP and the native loop send byte-identical requests for one agent and one input", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([
        { content: "The ferry to the island leaves at nine", kind: "fact", scope: "global", sourceType: "operator" },
        { content: "Atlas deploys on Tuesdays", kind: "fact", scope: "project:atlas", sourceType: "operator" },
        ...Array.from({ length: 60 }, (_, i) => ({
          content: `The ferry to island ${i} leaves from pier ${i % 7}`,
          kind: "fact" as const,
          scope: "global",
          sourceType: "operator" as const
        }))
      ])
      const decoded = yield* StablePrefix.decodeConfig(config)

      // MCP: memory_context.
      const mcp = yield* AgentContext.make({
        memory: { scope: "global", background: decoded.background, spec: RoutingPresets.userBackground },
        agent: decoded,
        sessionId: "mcp"
      })
      yield* mcp.contextFor(query)

      // ACP: the assembler over the same agent, rebuilt per turn.
      const assembler = yield* ContextAssembler.make({
        scopes: decoded.scopes ?? [decoded.scope],
        agent: StablePrefix.buildAgent(decoded)
      })
      yield* assembler.compose("acp", query)

      // The native loop, on a scripted model.
      const native = yield* NativeRuntime.fromConfig(config)
      yield* NativeRuntime.runTurn({ agent: native, sessionId: "native", input: query })

      const snapshots = yield* PromptObserver.captured
      expect(snapshots.map((s) => [s.sessionId, s.turn, s.call])).toEqual([["mcp", 1, 0], ["acp", 1, 0], [
        "native",
        1,
        0
      ]])
      // The agent's own budget reached every transport.
      expect(snapshots.map((s) => s.projection.budget.budgetTokens)).toEqual([1_500, 1_500, 1_500])
      // Recall read both scopes, and found the ferry.
      expect(snapshots[0]!.projection.text).toContain("leaves at nine")
      const hashes = snapshots.map((s) => PromptObserver.requestHash(s.request))
      expect(new Set(hashes).size).toBe(1)
      const texts = snapshots.map((s) => PromptObserver.modelVisible(s.request))
      expect(texts[1]).toBe(texts[0])
      expect(texts[2]).toBe(texts[0])
      // What the model was actually sent, byte for byte.
      const [sent] = yield* ScriptedModel.requests
      expect(sent).toBeDefined()
    }).pipe(Effect.provide(environment)))
})
