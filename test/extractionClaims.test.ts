/**
 * One extraction run per session across processes: two store layers over the same SQLite file, or
 * two connection pools over the same PostgreSQL schema — each with its own extraction service, as
 * two `engram` processes would have — never run extraction for the same session at once. While the
 * first run waits on its model call, the second fails with `ExtractionBusy` having read and written
 * nothing; once the first is done the second finds nothing left, and the model was called once.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { MemoryStore, type PromotionStore, SessionStore } from "@engram/core"
import { Extraction } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { SqliteEngram } from "@engram/store-sqlite"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { describePg } from "../packages/store-pg/test/pgGate.js"
import { memory, rememberingExtractor } from "./support/rememberingExtractor.js"

type Stores = MemoryStore.MemoryStore | PromotionStore.PromotionStore | SessionStore.SessionStore

const turns = ["the deploy is on Tuesdays", "the staging host is blue"].map((fact, i) =>
  new SessionStore.OperatorMessage({ text: `Remember: ${fact}`, at: DateTime.unsafeMake(i) })
)

/**
 * Two "processes" over one database: `first` and `second` are separately built stores. The first
 * service's model call waits on a gate; the second service runs while it waits.
 */
const race = (first: Context.Context<Stores>, second: Context.Context<Stores>) =>
  Effect.gen(function*() {
    const started = yield* Deferred.make<void>()
    const gate = yield* Deferred.make<void>()
    let calls = 0
    const slow: ScriptedModel.Script = (request) =>
      Effect.gen(function*() {
        calls++
        yield* Deferred.succeed(started, undefined)
        yield* Deferred.await(gate)
        return rememberingExtractor(request)
      })
    const fast: ScriptedModel.Script = (request) => {
      calls++
      return rememberingExtractor(request)
    }
    const run = (stores: Context.Context<Stores>, script: ScriptedModel.Script) =>
      Effect.scoped(
        Effect.flatMap(
          Extraction.make({ nearDuplicates: false }),
          (service) => service.run({ sessionId: "s-1", memory })
        )
      ).pipe(
        Effect.provide(Layer.merge(Layer.succeedContext(stores), ScriptedModel.layer(script)))
      )
    yield* Context.get(first, SessionStore.SessionStore).append("s-1", turns)
    const running = yield* Effect.fork(run(first, slow))
    yield* Deferred.await(started)
    const busy = yield* Effect.flip(run(second, fast))
    expect(busy).toBeInstanceOf(Extraction.ExtractionBusy)
    expect(busy.message).toContain("is being extracted by another process")
    // The busy run read nothing and recorded nothing.
    expect((yield* Context.get(second, SessionStore.SessionStore).loadExtractions("s-1")).runs).toEqual([])
    yield* Deferred.succeed(gate, undefined)
    expect(yield* Fiber.join(running)).toMatchObject({ status: "extracted", turns: [1, 2] })
    // The claim was released: the second process runs now, and finds the turns extracted.
    expect(yield* run(second, fast)).toMatchObject({ status: "nothing-new", calls: 0 })
    expect(calls).toBe(1)
    const records = yield* Context.get(second, MemoryStore.MemoryStore).list({ limit: 10 })
    expect(records.records.map((r) => r.content).sort()).toEqual([
      "the deploy is on Tuesdays",
      "the staging host is blue"
    ])
  })

it.live("two store layers on one SQLite file never extract the same session at once", () =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(Path.join(tmpdir(), "engram-extraction-claims-"))),
    (dir) =>
      Effect.scoped(Effect.gen(function*() {
        const filename = Path.join(dir, "engram.db")
        const first = yield* Layer.build(SqliteEngram.layer({ filename }))
        const second = yield* Layer.build(SqliteEngram.layer({ filename }))
        yield* race(first, second)
      })),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  ), 60_000)

describePg("extraction claims on PostgreSQL", (url) => {
  it.live("two pools on one schema never extract the same session at once", () =>
    Effect.scoped(Effect.gen(function*() {
      const first = yield* Layer.build(
        PgEngram.layerStores().pipe(
          Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_claim" }))
        )
      )
      const [row] = yield* Context.get(first, SqlClient.SqlClient)<
        { schema: string }
      >`SELECT current_schema() AS schema`
      const second = yield* Layer.build(
        PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema: row!.schema })))
      )
      yield* race(first, second)
    })), 60_000)
})
