/**
 * The ACP path is observed like the native loop: every prompt `AcpClient` sends is composed by
 * the `ContextAssembler`, which reports it to the `PromptObserver`; with the telemetry-backed
 * observer on SQLite each external turn stores one snapshot, and `Inspect` rebuilds it from the
 * trajectory — the blocks a real ACP agent process received, byte for byte.
 */
import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, MemoryStore, RoutingPresets, RoutingSpecs, TelemetryStore } from "@engram/core"
import { AcpClient, ContextAssembler, Explain, Inspect, Promotion, PromptObserver, StablePrefix } from "@engram/runtime"
import { SqliteDatabase, SqliteEngram, SqlitePromotionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { fileURLToPath } from "node:url"

const fixture = fileURLToPath(new URL("../packages/runtime/test/fixtures/echoAcpAgent.ts", import.meta.url))
const echoAgent: AcpClient.AgentProcess = { command: process.execPath, args: ["--import", "tsx", fixture] }

const memory = {
  scope: "global",
  background: RoutingPresets.userBackgroundSections,
  spec: RoutingPresets.userBackground
} as const

const stores = Layer.mergeAll(SqlitePromotionStore.layer, SqliteTelemetryStore.layer).pipe(
  Layer.provideMerge(
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
  )
)

const world = Layer.mergeAll(
  ContextProjection.layer,
  RoutingSpecs.layerPresets,
  PromptObserver.layerTelemetry({ model: "echo-agent" }),
  IdGenerator.sequential("mem")
).pipe(Layer.provideMerge(stores))

type Block = { readonly type: string; readonly text: string }
const received = (outcome: AcpClient.PromptOutcome): ReadonlyArray<Block> => JSON.parse(outcome.text)

describe("ACP prompt snapshots", () => {
  it.live("each ACP prompt stores one snapshot; Inspect rebuilds the blocks the agent received, byte for byte", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const [name] = yield* store.write([
        { content: "The user's name is Doug", kind: "profile", label: "name", sourceType: "operator", scope: "global" },
        { content: "The staging database is db-2", kind: "fact", sourceType: "operator", scope: "global" }
      ])
      yield* Promotion.promoteNew([name!], memory)
      const build = Effect.flatMap(
        StablePrefix.decodeConfig({
          persona: "You are a companion.",
          spec: "user-background",
          background: memory.background
        }),
        StablePrefix.buildAgent
      )
      const assembler = yield* ContextAssembler.make({ scopes: ["global"], agent: build })
      const acp = yield* AcpClient.spawn(echoAgent).pipe(
        Effect.provideService(ContextAssembler.ContextAssembler, assembler)
      )
      const session = yield* acp.newSession({ sessionId: "s-acp" })

      const inputs = [
        "Which staging database does Doug use?",
        "And the staging database again?",
        "Where does Doug live?"
      ]
      const outcomes: Array<AcpClient.PromptOutcome> = []
      outcomes.push(yield* acp.prompt(session, inputs[0]!))
      outcomes.push(yield* acp.prompt(session, inputs[1]!))
      // A promotion mid-session: the next prompt carries the rebuilt prefix again.
      const [home] = yield* store.write([
        { content: "The user lives in Lisbon", kind: "profile", label: "home", sourceType: "operator", scope: "global" }
      ])
      yield* Promotion.promoteNew([home!], memory)
      outcomes.push(yield* acp.prompt(session, inputs[2]!))
      const withPrefix = [true, false, true]
      expect(outcomes.map((o) => received(o).length)).toEqual([3, 2, 2])

      const { skipped, snapshots } = yield* Effect.flatMap(
        TelemetryStore.TelemetryStore,
        (t) => t.listSnapshots("s-acp")
      )
      expect(skipped).toBe(0)
      expect(snapshots.map((s) => [s.turn, s.call, s.mode, s.model])).toEqual([
        [1, 0, "external", "echo-agent"],
        [2, 0, "external", "echo-agent"],
        [3, 0, "external", "echo-agent"]
      ])
      // The prefix is stored once per distinct build, not once per prompt.
      const trajectory = yield* Effect.flatMap(TelemetryStore.TelemetryStore, (t) => t.readTrajectory("s-acp"))
      expect(trajectory.blobs.filter((b) => b.kind === "prefix")).toHaveLength(2)

      const inspected = yield* Inspect.inspectSession("s-acp")
      expect(inspected).toHaveLength(3)
      inspected.forEach((call, i) => {
        expect(call.verified).toBe(true)
        // The rebuilt request is the one composed when the prompt was sent…
        expect(PromptObserver.modelVisible(call.request)).toBe(PromptObserver.modelVisible(outcomes[i]!.request))
        expect(call.request.fragments).toEqual(outcomes[i]!.request.fragments)
        // …and the blocks it gives are, byte for byte, what the ACP agent process received.
        const rebuilt = AcpClient.promptBlocks(call.request, [{ type: "text", text: inputs[i]! }], withPrefix[i]!)
        // (Block by block: the agent's SDK re-serializes each block with its own key order.)
        expect(rebuilt).toEqual(received(outcomes[i]!))
        expect(rebuilt.map((b) => (b.type === "text" ? b.text : ""))).toEqual(received(outcomes[i]!).map((b) => b.text))
        expect(call.projection.text).toBe(outcomes[i]!.projection.text)
      })
      // Each snapshot names the memory its prefix composed; the third the rebuilt prefix's.
      const prefixIds = snapshots.map((s) =>
        s.prefix.sections.flatMap((sec) => sec.fragments.flatMap((f) => f.memoryIds))
      )
      expect(prefixIds).toEqual([[name!.id], [name!.id], [name!.id, home!.id]])
      // The third call's history is the session as the agent had it: earlier inputs and answers.
      expect(inspected[2]!.request.fragments.filter((f) => f.source === "history").map((f) => f.label)).toEqual([
        "OperatorMessage",
        "AssistantMessage",
        "OperatorMessage",
        "AssistantMessage"
      ])
      expect(inspected[0]!.projection.text).toContain("db-2")
      // Each snapshot records the scopes it read and the overlay report of its prefix, so Explain
      // answers for an external call as it does for a native one.
      expect(snapshots.map((s) => s.scopes)).toEqual([["global"], ["global"], ["global"]])
      expect(snapshots.every((s) => s.overlay !== null)).toBe(true)
      const explained = yield* Explain.explain({ memoryId: home!.id, sessionId: "s-acp", turn: 3 })
      expect(explained.calls.map((c) => [c.verdict, c.overlayStored])).toEqual([["composed", true]])
    }).pipe(Effect.scoped, Effect.provide(world)))
})
