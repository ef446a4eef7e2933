import { describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, MemoryStore, RoutingPresets, RoutingSpecs } from "@engram/core"
import { NativeRuntime, Promotion, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import {
  SqliteDatabase,
  SqliteEngram,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import { DateTime, Effect, Layer } from "effect"
import * as Path from "node:path"
import { engram, engramJson, tempDir } from "./utilities.js"

/** A promoted name and an unrelated fact on the SQLite file `db`, then one turn of session s-x. */
const runSession = (db: string) => {
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
      const written = yield* Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        store.write([
          {
            content: "My name is Doug",
            kind: "profile",
            label: "name",
            scope: "global",
            sourceType: "conversation",
            validFrom: DateTime.unsafeMake("2024-05-03T00:00:00.000Z")
          },
          { content: "The staging database is db-2", kind: "fact", scope: "global", sourceType: "conversation" }
        ]))
      yield* Promotion.promoteNew(written, {
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      })
      const agent = yield* NativeRuntime.fromConfig({
        spec: "user-background",
        persona: "You are a companion.",
        background: RoutingPresets.userBackgroundSections
      })
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-x", input: "tell me a joke" })
      // The fact said again in two sessions (decision 0174).
      yield* Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        Effect.zipRight(
          store.corroborate(written[1]!.id, { session: "s-y" }),
          store.corroborate(written[1]!.id, { session: "s-z" })
        ))
      return written.map((r) => r.id)
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          ContextProjection.layer,
          ScriptedModel.layer(() => [ScriptedModel.text("ok")]),
          PromptObserver.layerTelemetry(),
          RoutingSpecs.layerPresets,
          IdGenerator.sequential("mem")
        ).pipe(Layer.provideMerge(stores))
      )
    )
  )
}

describe("engram explain", () => {
  it("says why a memory did or did not reach a stored call, from the stored snapshot", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "engram.db")
      const [name, fact] = await runSession(db)
      const composed = await engramJson("--db", db, "explain", name!, "--session", "s-x") as {
        promoted: boolean
        calls: ReadonlyArray<{ verdict: string; reached: boolean; prefix: { section: string } | null }>
      }
      expect(composed.promoted).toBe(true)
      expect(composed.calls.map((c) => [c.verdict, c.reached])).toEqual([["composed", true]])

      // Without --session: every stored call is read, so a prefix composition (which no
      // injection-log row names) is a delivery too, named by its call.
      const across = await engram("--db", db, "explain", name!)
      expect(across.code).toBe(0)
      expect(across.stdout).toContain("s-x · turn 1, call 0 (native): REACHED — composed")
      expect(across.stdout).toContain("delivered in: s-x (turns 1)")

      const human = await engram("--db", db, "explain", fact!, "--session", "s-x")
      expect(human.code).toBe(0)
      expect(human.stdout).toContain(`memory ${fact}`)
      expect(human.stdout).toContain("not promoted")
      expect(human.stdout).toContain("turn 1, call 0 (native): not reached — not-recalled")
      expect(human.stdout).toContain("shares no search token")
      expect(human.stdout).toMatch(/corroborated: said again 2 times, in sessions s-y, s-z; last \d{4}-/)
      const shown = await engram("--db", db, "memory", "show", fact!)
      expect(shown.stdout).toMatch(/corroborated said again 2 times, in sessions s-y, s-z; last/)

      const unknown = await engram("--db", db, "explain", "mem-nope", "--session", "s-x")
      expect(unknown.code).not.toBe(0)
      expect(unknown.stderr).toContain("nothing is known of memory mem-nope")

      // inspect lists the memories a call carried with their world time as stored now (decision 0175).
      const carried = await engram("--db", db, "inspect", "s-x")
      expect(carried.stdout).toContain("Memories carried, as stored now")
      expect(carried.stdout).toContain(`  ${name}  pending · valid from 2024-05-03T00:00:00.000Z`)

      // engram memory forget takes the name's text out of the stored call; inspect says so.
      expect((await engram("--db", db, "memory", "forget", name!)).code).toBe(0)
      const inspected = await engramJson("--db", db, "inspect", "s-x") as ReadonlyArray<{
        verified: boolean
        redacted: ReadonlyArray<string>
        fragments: ReadonlyArray<{ text: string }>
      }>
      expect(inspected.map((c) => [c.verified, c.redacted])).toEqual([[false, [name]]])
      expect((inspected[0] as unknown as { memories: ReadonlyArray<{ id: string; state: string }> }).memories)
        .toContainEqual({ id: name, validity: null, state: "forgotten", supersededBy: null })
      expect(inspected[0]!.fragments.map((f) => f.text).join("")).not.toContain("My name is Doug")
    } finally {
      cleanup()
    }
  }, 240_000) // five child processes of `engram`; slow on a loaded machine
})
