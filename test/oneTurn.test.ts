/**
 * One function assembles a turn (decision 0166): for one agent config and one input, MCP's
 * `memory_context`, `ContextAssembler.compose` (ACP), the server's projection preview
 * (`GET /api/projection`) and `NativeRuntime.runTurn` (a scripted model) produce byte-identical
 * requests. Each goes through `Turn`; a transport that composed on its own — dropping the working
 * state or the skills, taking scopes from another field, ignoring the agent's own budget,
 * numbering its turns from 0 — would produce other bytes, or a snapshot under another turn, and
 * fail here.
 */
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  type MemoryRecord,
  MemoryStore,
  type ProjectionLayout,
  RoutingPresets,
  RoutingSpecs,
  SessionStore
} from "@engram/core"
import { AgentContext } from "@engram/mcp"
import { ContextAssembler, NativeRuntime, PromptObserver, StablePrefix } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { serveWith } from "../packages/server/test/utilities.js"

const scope: MemoryRecord.Scope = "project:a"
const workingState = "goal: plan the ferry trip"
const skills: ReadonlyArray<ProjectionLayout.SkillRow> = [{ name: "timetable", description: "reads ferry times" }]

const config: StablePrefix.AgentConfigInput = {
  persona: "You are a friendly companion.",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground.key,
  scope,
  scopes: [scope],
  projection: { budgetTokens: 1_500 }
}

const query = "when does the ferry to the island leave?"

/** What every transport runs on besides the stores: the projection, the specs, a capture of each request. */
const transports = Layer.mergeAll(
  ContextProjection.layer,
  RoutingSpecs.layerPresets,
  SessionStore.layerMemory,
  PromptObserver.layerCapture,
  ScriptedModel.layer(() => [ScriptedModel.text("At nine.")])
)

describe("one turn (decision 0166)", () => {
  it.live("MCP, ACP, the server's preview and the native loop produce byte-identical requests", () =>
    Effect.scoped(Effect.gen(function*() {
      const decoded = yield* StablePrefix.decodeConfig(config)
      const served = yield* serveWith({ agent: decoded, workingState, skills })
      yield* Effect.provide(
        Effect.flatMap(MemoryStore.MemoryStore, (store) =>
          store.write([
            { content: "My name is Doug", kind: "profile", label: "name", scope, sourceType: "operator" },
            { content: "The ferry to the island leaves at nine", kind: "fact", scope, sourceType: "operator" },
            ...Array.from({ length: 60 }, (_, i) => ({
              content: `The ferry to island ${i} leaves from pier ${i % 7}`,
              kind: "fact" as const,
              scope,
              sourceType: "operator" as const
            }))
          ])),
        served.context
      ).pipe(Effect.orDie)

      const turns = Effect.gen(function*() {
        // MCP: memory_context (an MCP client is an external agent; no working state of its own).
        const mcp = yield* AgentContext.make({
          memory: { scope, background: decoded.background, spec: RoutingPresets.userBackground },
          agent: decoded,
          sessionId: "mcp"
        })
        yield* mcp.contextFor(query)

        // ACP: the assembler over the same agent, rebuilt per turn, with the runtime's state.
        const assembler = yield* ContextAssembler.make({
          scopes: [scope],
          skills,
          agent: StablePrefix.buildAgent(decoded)
        })
        yield* assembler.compose("acp", query, { workingState })

        // The native loop, on a scripted model.
        const native = yield* NativeRuntime.fromConfig(config, { workingState, skills })
        yield* NativeRuntime.runTurn({ agent: native, sessionId: "native", input: query })
        return yield* PromptObserver.captured
      }).pipe(
        Effect.provide(transports),
        Effect.provide(served.context)
      )
      const snapshots = yield* turns

      const preview = yield* served.request(
        "GET",
        `/api/projection?scope=${encodeURIComponent(scope)}&q=${encodeURIComponent(query)}`,
        { token: served.tokens.a }
      )
      expect(preview.status).toBe(200)
      const previewed = (preview.json as { readonly request: ReadonlyArray<unknown> }).request

      expect(snapshots.map((s) => [s.sessionId, s.turn, s.call])).toEqual([
        ["mcp", 1, 0],
        ["acp", 1, 0],
        ["native", 1, 0]
      ])
      // The agent's own budget reached every transport.
      expect(snapshots.map((s) => s.projection.budget.budgetTokens)).toEqual([1_500, 1_500, 1_500])
      // MCP carries no working state or skills (its client keeps its own; the next test compares
      // it with the others without them); ACP, the preview and the native loop do.
      expect(snapshots[1]!.projection.text).toContain(workingState)
      expect(snapshots[1]!.projection.text).toContain("leaves at nine")
      // ACP and native: byte for byte (the hash covers the prompt and every fragment).
      const [, acp, native] = snapshots.map((s) => PromptObserver.requestHash(s.request))
      expect(acp).toBe(native)
      // The preview's fragments are the native request's, byte for byte.
      expect(previewed).toEqual(JSON.parse(JSON.stringify(snapshots[2]!.request.fragments)))
    })))

  it.live("without working state or skills, MCP's request is the native loop's, byte for byte", () =>
    Effect.scoped(Effect.gen(function*() {
      const decoded = yield* StablePrefix.decodeConfig(config)
      const served = yield* serveWith({ agent: decoded })
      yield* Effect.provide(
        Effect.flatMap(MemoryStore.MemoryStore, (store) =>
          store.write([
            { content: "The ferry to the island leaves at nine", kind: "fact", scope, sourceType: "operator" }
          ])),
        served.context
      ).pipe(Effect.orDie)
      const snapshots = yield* Effect.gen(function*() {
        const mcp = yield* AgentContext.make({
          memory: { scope, background: decoded.background, spec: RoutingPresets.userBackground },
          agent: decoded,
          sessionId: "mcp"
        })
        yield* mcp.contextFor(query)
        const assembler = yield* ContextAssembler.make({ scopes: [scope], agent: StablePrefix.buildAgent(decoded) })
        yield* assembler.compose("acp", query)
        const native = yield* NativeRuntime.fromConfig(config)
        yield* NativeRuntime.runTurn({ agent: native, sessionId: "native", input: query })
        return yield* PromptObserver.captured
      }).pipe(
        Effect.provide(transports),
        Effect.provide(served.context)
      )
      const preview = yield* served.request(
        "GET",
        `/api/projection?scope=${encodeURIComponent(scope)}&q=${encodeURIComponent(query)}`,
        { token: served.tokens.a }
      )
      const hashes = snapshots.map((s) => PromptObserver.requestHash(s.request))
      expect(snapshots[0]!.projection.text).toContain("leaves at nine")
      expect(new Set(hashes).size).toBe(1)
      expect((preview.json as { readonly request: unknown }).request).toEqual(
        JSON.parse(JSON.stringify(snapshots[0]!.request.fragments))
      )
    })))
})
