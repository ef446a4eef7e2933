/**
 * Prompt snapshots end to end, on SQLite: a 20-turn scripted session through the native loop with
 * the telemetry-backed observer stores one snapshot per model call, and `Inspect` rebuilds every
 * call from the trajectory byte for byte — the same prompt the model received, the same
 * attribution. Also measures what the trajectory costs per turn against storing full text.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import {
  ContextProjection,
  IdGenerator,
  MemoryStore,
  type PromptFragment,
  RoutingPresets,
  SessionStore,
  TelemetryStore,
  Trajectory
} from "@engram/core"
import { Inspect, NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import {
  SqliteDatabase,
  SqliteEngram,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as TestClock from "effect/TestClock"

const TURNS = 20

const script: ScriptedModel.Script = (request) => {
  const k = /turn (\d+)/.exec(ScriptedModel.lastUserText(request))?.[1] ?? "0"
  if (ScriptedModel.pendingToolResults(request).length > 0) return [ScriptedModel.text(`Noted for turn ${k}.`)]
  return [
    ScriptedModel.toolCall("memory_save", { kind: "note", content: `Milestone ${k} was signed off`, label: `m${k}` })
  ]
}

const prefix: ReadonlyArray<PromptFragment.AgentPromptSectionData> = [
  {
    name: "identity",
    source: "role",
    fragments: [{ source: "authored", text: "You are a project companion. ".repeat(40) }]
  },
  {
    name: "guidelines",
    source: "instance",
    fragments: [{ source: "authored", text: "Keep answers short and cite milestones. ".repeat(30) }]
  }
]

/** Tees every observed call: persisted by the telemetry observer, and kept here as sent. */
const live: Array<PromptObserver.ObservedCall> = []
const tee = Layer.effect(
  PromptObserver.PromptObserver,
  Effect.map(
    Effect.provide(PromptObserver.PromptObserver, PromptObserver.layerTelemetry({ model: "scripted" })),
    (telemetry) => ({
      observe: (snapshot: PromptObserver.ObservedCall) =>
        Effect.zipRight(Effect.sync(() => void live.push(snapshot)), telemetry.observe(snapshot))
    })
  )
)

const stores = Layer.mergeAll(
  SqlitePromotionStore.layer,
  SqliteSessionStore.layer,
  SqliteTelemetryStore.layer
)
  .pipe(
    Layer.provideMerge(
      SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" })))
    )
  )

const environment = Layer.mergeAll(
  ContextProjection.layer,
  ScriptedModel.layer(script),
  tee,
  IdGenerator.sequential("mem")
)
  .pipe(Layer.provideMerge(stores))

const storedBytes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ snapshots: number; trajectory: number }>`SELECT
    (SELECT COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) FROM engram_prompt_snapshots) AS snapshots,
    (SELECT COALESCE(SUM(LENGTH(CAST(body AS BLOB))), 0) FROM engram_trajectory) AS trajectory`
  return Number(row!.snapshots) + Number(row!.trajectory)
})

describe("prompt snapshots on SQLite", () => {
  it.effect("a 20-turn session stores one snapshot per call and inspect reproduces every call byte for byte", () =>
    Effect.gen(function*() {
      live.length = 0
      yield* Effect.flatMap(
        MemoryStore.MemoryStore,
        (store) =>
          store.write([{
            content: "Milestones are reviewed on Fridays",
            kind: "standing",
            deliveryPolicy: "always",
            scope: "global",
            sourceType: "operator"
          }])
      )
      const agent = yield* NativeRuntime.make({
        prefix,
        memory: {
          scope: "global",
          background: RoutingPresets.userBackgroundSections,
          spec: RoutingPresets.userBackground
        },
        workingState: "goal: review milestones"
      })
      const encoder = new TextEncoder()
      const perTurn: Array<number> = []
      const fullTextPerTurn: Array<number> = []
      for (let k = 1; k <= TURNS; k++) {
        const before = yield* storedBytes
        const calls = live.length
        yield* NativeRuntime.runTurn({ agent, sessionId: "s-20", input: `status of turn ${k}` })
        perTurn.push((yield* storedBytes) - before)
        fullTextPerTurn.push(
          live.slice(calls).reduce((sum, s) => sum + encoder.encode(PromptObserver.requestText(s.request)).length, 0)
        )
        yield* TestClock.adjust("1 minute")
      }

      const store = yield* TelemetryStore.TelemetryStore
      const { skipped, snapshots } = yield* store.listSnapshots("s-20")
      expect(skipped).toBe(0)
      expect(snapshots).toHaveLength(TURNS * 2)
      expect(snapshots.map((s) => `${s.turn}.${s.call}`)).toEqual(live.map((s) => `${s.turn}.${s.call}`))
      expect(yield* ScriptedModel.requests).toHaveLength(TURNS * 2)

      // The prefix is stored once; every message once; the session store and trajectory agree.
      const trajectory = yield* store.readTrajectory("s-20")
      expect(trajectory.blobs.filter((b) => b.kind === "prefix")).toHaveLength(1)
      const messages = (yield* Effect.flatMap(SessionStore.SessionStore, (s) => s.load("s-20"))).messages
      // Every message a call saw, once, as stored (the last answer was seen by no call).
      expect(trajectory.messages).toEqual(messages.slice(0, -1).map((m, seq) => Trajectory.messageEntry(seq, m)))

      // Every call rebuilt from the trajectory is the request the model was sent, byte for byte.
      const inspected = yield* Inspect.inspectSession("s-20")
      const sent = yield* ScriptedModel.requests
      expect(inspected).toHaveLength(TURNS * 2)
      inspected.forEach((call, i) => {
        expect(call.verified).toBe(true)
        // Model-visible bytes; provider options (cache hints) are transport, not what the model reads.
        expect(PromptObserver.modelVisible(call.request)).toBe(PromptObserver.modelVisible(live[i]!.request))
        expect(PromptObserver.modelVisible(call.request)).toBe(
          PromptObserver.modelVisible({ ...call.request, prompt: sent[i]!.prompt })
        )
        expect(call.request.fragments).toEqual(live[i]!.request.fragments)
        expect(call.snapshot.tools).toEqual(["memory_save", "memory_recall"])
      })
      // One turn and call can be asked for alone.
      const one = yield* Inspect.inspectSession("s-20", { turn: 7, call: 1 })
      expect(one.map((c) => [c.snapshot.turn, c.snapshot.call])).toEqual([[7, 1]])

      const after1 = perTurn.slice(1)
      const mean = (xs: ReadonlyArray<number>) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length)
      // Figures for the closing note: stored bytes per turn after turn 1 vs full text per call.
      process.stdout.write(
        `prompt snapshots: turn 1 stored ${perTurn[0]} bytes; turns 2-${TURNS} stored ${mean(after1)} bytes/turn ` +
          `(min ${Math.min(...after1)}, max ${Math.max(...after1)}); full text per call would store ` +
          `${mean(fullTextPerTurn.slice(1))} bytes/turn (turn ${TURNS}: ${fullTextPerTurn[TURNS - 1]}); ` +
          `totals ${perTurn.reduce((a, b) => a + b, 0)} vs ${fullTextPerTurn.reduce((a, b) => a + b, 0)}\n`
      )
      // Storage per turn after turn 1 does not grow with the session (no history re-stored).
      expect(Math.max(...after1)).toBeLessThan(perTurn[0]!)
      expect(perTurn[TURNS - 1]!).toBeLessThan(fullTextPerTurn[TURNS - 1]! / 2)
    }).pipe(Effect.provide(environment)))

  it.effect("an edited trajectory entry is caught: inspect reports the rebuild as unverified", () =>
    Effect.gen(function*() {
      live.length = 0
      const agent = yield* NativeRuntime.make({
        prefix,
        memory: {
          scope: "global",
          background: RoutingPresets.userBackgroundSections,
          spec: RoutingPresets.userBackground
        }
      })
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-x", input: "status of turn 1" })
      const sql = yield* SqlClient.SqlClient
      // Rewrite the prefix blob (body and hash together, as a careless migration might): the
      // snapshot's request hash no longer matches what the trajectory rebuilds.
      const [blob] = yield* sql<
        { id: number; body: string }
      >`SELECT id, body FROM engram_trajectory WHERE kind = 'prefix'`
      const body = blob!.body.replace("project companion", "project competitor")
      const { contentHash } = Trajectory
      yield* sql`UPDATE engram_trajectory SET body = ${body}, hash = ${contentHash(body)} WHERE id = ${blob!.id}`
      yield* sql`UPDATE engram_prompt_snapshots SET body = json_set(body, '$.prefix.hash', ${contentHash(body)})`
      const calls = yield* Inspect.inspectSession("s-x")
      expect(calls.length).toBeGreaterThan(0)
      for (const call of calls) expect(call.verified).toBe(false)
    }).pipe(Effect.provide(environment)))
})
