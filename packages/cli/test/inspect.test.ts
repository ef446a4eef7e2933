import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, RoutingPresets } from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import {
  SqliteDatabase,
  SqliteEngram,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import { Effect, Layer } from "effect"
import * as Path from "node:path"
import { engram, engramJson, tempDir } from "./utilities.js"

const script: ScriptedModel.Script = (request) =>
  ScriptedModel.pendingToolResults(request).length > 0
    ? [ScriptedModel.text("Saved.")]
    : [ScriptedModel.toolCall("memory_save", { kind: "note", content: "The deploy is on Friday", label: "deploy" })]

/** Runs turns of a session on the SQLite file `db`, persisting snapshots; returns what was sent. */
const runSession = (
  db: string,
  inputs = ["when is the deploy?", "remind me about the deploy"],
  sessionId = "s-cli"
) => {
  const sent: Array<PromptObserver.ObservedCall> = []
  const tee = Layer.effect(
    PromptObserver.PromptObserver,
    Effect.map(Effect.provide(PromptObserver.PromptObserver, PromptObserver.layerTelemetry()), (telemetry) => ({
      observe: (s: PromptObserver.ObservedCall) =>
        Effect.zipRight(Effect.sync(() => void sent.push(s)), telemetry.observe(s))
    }))
  )
  const stores = Layer.mergeAll(
    SqlitePromotionStore.layer,
    SqliteSessionStore.layer,
    SqliteTelemetryStore.layer
  )
    .pipe(
      Layer.provideMerge(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db }))))
    )
  return Effect.runPromise(
    Effect.gen(function*() {
      const agent = yield* NativeRuntime.make({
        prefix: [{ name: "identity", source: "role", fragments: [{ source: "authored", text: "You are a helper." }] }],
        memory: {
          scope: "global",
          background: RoutingPresets.userBackgroundSections,
          spec: RoutingPresets.userBackground
        },
        workingState: "goal: plan the deploy"
      })
      for (const input of inputs) yield* NativeRuntime.runTurn({ agent, sessionId, input })
      return sent
    }).pipe(
      Effect.provide(
        Layer.mergeAll(ContextProjection.layer, ScriptedModel.layer(script), tee, IdGenerator.sequential("mem"))
          .pipe(Layer.provideMerge(stores))
      )
    )
  )
}

describe("engram inspect", () => {
  it("prints every stored call rebuilt byte for byte, and one call on request", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "engram.db")
      const sent = await runSession(db)
      expect(sent).toHaveLength(4)
      const all = await engramJson("--db", db, "inspect", "s-cli") as ReadonlyArray<{
        turn: number
        call: number
        verified: boolean
        fragments: unknown
      }>
      expect(all.map((c) => [c.turn, c.call, c.verified])).toEqual([[1, 0, true], [1, 1, true], [2, 0, true], [
        2,
        1,
        true
      ]])
      all.forEach((call, i) => expect(call.fragments).toEqual(JSON.parse(JSON.stringify(sent[i]!.request.fragments))))

      const human = await engram("--db", db, "inspect", "s-cli", "--turn", "2", "--call", "0")
      expect(human.code).toBe(0)
      expect(human.stdout).toContain("session s-cli, turn 2, call 0")
      expect(human.stdout).toContain("rebuilt byte for byte")
      expect(human.stdout).toContain("prefix · identity · authored")
      expect(human.stdout).toContain("working_state")
      expect(human.stdout).not.toContain("turn 1, call")

      const none = await engram("--db", db, "inspect", "s-cli", "--turn", "9")
      expect(none.code).not.toBe(0)
      expect(none.stderr).toContain("no stored prompt snapshot matches session s-cli, turn 9")
    } finally {
      cleanup()
    }
  }, 180_000) // three child processes of `engram`; slow on a loaded machine

  it(
    "a 20-turn session: one stored snapshot per model call, each reproduced byte for byte by engram inspect",
    async () => {
      const { cleanup, dir } = tempDir()
      try {
        const db = Path.join(dir, "engram.db")
        const sent = await runSession(
          db,
          Array.from({ length: 20 }, (_, k) => `status of the deploy, turn ${k + 1}`),
          "s-20"
        )
        expect(sent).toHaveLength(40)
        const calls = await engramJson("--db", db, "inspect", "s-20") as ReadonlyArray<{
          turn: number
          call: number
          verified: boolean
          fragments: unknown
        }>
        expect(calls.map((c) => `${c.turn}.${c.call}`)).toEqual(sent.map((s) => `${s.turn}.${s.call}`))
        calls.forEach((call, i) => {
          expect(call.verified).toBe(true)
          expect(call.fragments).toEqual(JSON.parse(JSON.stringify(sent[i]!.request.fragments)))
        })
      } finally {
        cleanup()
      }
    },
    180_000
  )
})
