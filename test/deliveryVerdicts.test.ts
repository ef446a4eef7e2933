/// <reference lib="dom" />
/**
 * One answer to "was it delivered?": on the demo's store and on a seeded store of several sessions,
 * every memory gets the same delivery verdicts — which calls (session, turn, call) it reached, and
 * how (composed or delivered) — from `engram explain --json` (the CLI), `GET
 * /api/memories/:id/explain` (the API the console reads), the console's explain view in Chromium,
 * and `engram inspect --json` (the memory ids of each rebuilt request). They all read one record:
 * the stored snapshots (and the injection log for a turn with none).
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, MemoryStore, RoutingPresets, RoutingSpecs } from "@engram/core"
import { NativeRuntime, Promotion, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { AccessTokens, EngramServer } from "@engram/server"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as Path from "node:path"
import type { Browser } from "playwright-core"
import { engram, engramJson, tempDir } from "../packages/cli/test/utilities.js"
import { describeChromium } from "./support/browserGate.js"
import { launch, signIn, visit } from "./support/consoleBrowser.js"

/** A verdict as every surface names it: `session/turn.call verdict`. */
type Verdicts = ReadonlyArray<string>

interface CallJson {
  readonly sessionId: string
  readonly turn: number
  readonly call: number
  readonly verdict: string
  readonly reached: boolean
}

const reachedOf = (calls: ReadonlyArray<CallJson>): Verdicts =>
  calls.filter((c) => c.reached).map((c) => `${c.sessionId}/${c.turn}.${c.call} ${c.verdict}`).sort()

/** Three sessions of a companion in scope global over eleven memories, two of them promoted. */
const seedSessions = (db: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const written = yield* Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        store.write([
          { content: "My name is Doug", kind: "profile", label: "name", scope: "global", sourceType: "conversation" },
          { content: "I live in Lisbon", kind: "profile", label: "city", scope: "global", sourceType: "conversation" },
          { content: "The staging database is db-2", kind: "fact", scope: "global", sourceType: "operator" },
          { content: "Production runs Postgres 16", kind: "fact", scope: "global", sourceType: "operator" },
          { content: "The roses need watering every evening", kind: "fact", scope: "global", sourceType: "operator" },
          { content: "Tomatoes were planted in spring", kind: "fact", scope: "global", sourceType: "operator" },
          { content: "French lessons are on Tuesdays", kind: "fact", scope: "global", sourceType: "operator" },
          {
            content: "Prefers short answers",
            kind: "standing",
            label: "length",
            scope: "global",
            sourceType: "operator"
          },
          { content: "The exam is in June", kind: "fact", scope: "global", sourceType: "operator" },
          { content: "Sam looks after the roses", kind: "fact", scope: "global", sourceType: "conversation" },
          // Shares no word with any question: reaches no call.
          { content: "Boiler serviced March 2024", kind: "fact", scope: "global", sourceType: "operator" }
        ]))
      yield* Promotion.promoteNew(written.slice(0, 2), {
        background: RoutingPresets.userBackgroundSections,
        spec: RoutingPresets.userBackground
      })
      const agent = yield* NativeRuntime.fromConfig({
        spec: "user-background",
        persona: "You are a companion.",
        background: RoutingPresets.userBackgroundSections
      })
      const sessions = {
        "s-ops": ["which staging database?", "what does production run?"],
        "s-garden": ["who waters the roses?", "when were the tomatoes planted?"],
        "s-school": ["when is the exam?"]
      }
      for (const [sessionId, inputs] of Object.entries(sessions)) {
        for (const input of inputs) yield* NativeRuntime.runTurn({ agent, sessionId, input })
      }
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          ContextProjection.layer,
          ScriptedModel.layer(() => [ScriptedModel.text("ok")]),
          PromptObserver.layerTelemetry(),
          RoutingSpecs.layerPresets,
          IdGenerator.sequential("mem")
        ).pipe(Layer.provideMerge(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: db })))
        ))
      )
    )
  )

interface Served {
  readonly base: string
  readonly token: string
  readonly stop: () => Promise<void>
}

/** `engram serve`'s server over the file, and a token of scope global. */
const serve = async (db: string): Promise<Served> => {
  const scope = await Effect.runPromise(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(
      EngramServer.layerServe({ port: 0 }).pipe(
        Layer.provideMerge(AccessTokens.layerSql.pipe(
          Layer.provideMerge(SqliteEngram.layerStores()),
          Layer.provideMerge(SqliteDatabase.layer({ filename: db }))
        ))
      ),
      scope
    )
  )
  const run = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.runPromise(Effect.provide(effect, context) as Effect.Effect<A, E, never>)
  const address = await run(Effect.map(HttpServer.HttpServer, (server) => server.address))
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const issued = await run(
    Effect.flatMap(
      AccessTokens.AccessTokens,
      (tokens) => tokens.create({ label: "operator", scopes: ["global"], readOnly: true })
    )
  )
  return {
    base: `http://127.0.0.1:${address.port}`,
    token: issued.secret,
    stop: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Runs `f` over `items`, `width` at a time (child processes on a shared machine). */
const pooled = async <A, B>(items: ReadonlyArray<A>, width: number, f: (item: A) => Promise<B>) => {
  const out: Array<B> = new Array(items.length)
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const at = next++
      out[at] = await f(items[at]!)
    }
  }))
  return out
}

interface Fixture {
  readonly name: string
  readonly db: string
  readonly served: Served
  readonly ids: ReadonlyArray<string>
  /** Per memory: the verdicts of the CLI, the API and inspect. */
  readonly cli: ReadonlyMap<string, Verdicts>
  readonly api: ReadonlyMap<string, Verdicts>
  readonly inspect: ReadonlyMap<string, ReadonlyArray<string>>
}

const tmp = tempDir()
const fixtures: Array<Fixture> = []

const build = async (name: string, db: string): Promise<Fixture> => {
  const listed = await engramJson("memory", "list", "--include-superseded", "--limit", "500", "--db", db) as {
    readonly records: ReadonlyArray<{ readonly id: string }>
  }
  const ids = listed.records.map((r) => r.id).sort()
  const served = await serve(db)
  const cli = new Map(
    await pooled(ids, 3, async (id) => {
      const explained = await engramJson("explain", id, "--db", db) as { readonly calls: ReadonlyArray<CallJson> }
      return [id, reachedOf(explained.calls)] as const
    })
  )
  const api = new Map(
    await Promise.all(ids.map(async (id) => {
      const response = await fetch(`${served.base}/api/memories/${encodeURIComponent(id)}/explain`, {
        headers: { authorization: `Bearer ${served.token}` }
      })
      expect(response.status).toBe(200)
      const explained = await response.json() as { readonly calls: ReadonlyArray<CallJson> }
      return [id, reachedOf(explained.calls)] as const
    }))
  )
  // inspect: the memory ids of every stored call's rebuilt request.
  const sessions = (await engramJson("sessions", "--db", db) as {
    readonly sessions: ReadonlyArray<{ readonly sessionId: string }>
  }).sessions.map((s) => s.sessionId)
  const inspect = new Map<string, Array<string>>(ids.map((id) => [id, []]))
  for (const sessionId of sessions) {
    const calls = await engramJson("inspect", sessionId, "--db", db) as ReadonlyArray<{
      readonly turn: number
      readonly call: number
      readonly fragments: ReadonlyArray<{ readonly memoryIds: ReadonlyArray<string> }>
    }>
    for (const c of calls) {
      for (const id of new Set(c.fragments.flatMap((f) => f.memoryIds))) {
        inspect.get(id)?.push(`${sessionId}/${c.turn}.${c.call}`)
      }
    }
  }
  return { name, db, served, ids, cli, api, inspect: new Map([...inspect].map(([id, keys]) => [id, keys.sort()])) }
}

beforeAll(async () => {
  const demo = Path.join(tmp.dir, "demo.db")
  const run = await engram("demo", "--db", demo)
  expect(run.code).toBe(0)
  const seeded = Path.join(tmp.dir, "sessions.db")
  await seedSessions(seeded)
  fixtures.push(await build("the demo", demo), await build("a store of three sessions", seeded))
}, 600_000)

afterAll(async () => {
  for (const fixture of fixtures) await fixture.served.stop()
  tmp.cleanup()
})

describe("delivery verdicts agree across the CLI, the API and inspect", () => {
  it("for every memory of the demo and of a seeded multi-session store", () => {
    expect(fixtures).toHaveLength(2)
    for (const fixture of fixtures) {
      let reached = 0
      for (const id of fixture.ids) {
        const cli = fixture.cli.get(id)!
        expect({ store: fixture.name, id, api: fixture.api.get(id) }).toEqual({ store: fixture.name, id, api: cli })
        // inspect names the calls whose request carried the memory: exactly the reached ones.
        expect({ store: fixture.name, id, inspect: fixture.inspect.get(id) }).toEqual({
          store: fixture.name,
          id,
          inspect: cli.map((verdict) => verdict.split(" ")[0]!)
        })
        reached += cli.length
      }
      // Not vacuous: some memories reached calls.
      expect(reached).toBeGreaterThan(0)
    }
    // …and some did not (the seeded store's boiler).
    expect(fixtures.some((f) => f.ids.some((id) => f.cli.get(id)!.length === 0))).toBe(true)
  })
})

describeChromium("delivery verdicts in the console", { timeout: 600_000 }, () => {
  let browser: Browser | undefined
  beforeAll(async () => {
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
  })

  it("the explain view names the same calls, with the same verdicts, for every memory", async () => {
    for (const fixture of fixtures) {
      const page = await browser!.newPage()
      await signIn(page, fixture.served.base, fixture.served.token)
      for (const id of fixture.ids) {
        await visit(page, "#/explain/" + encodeURIComponent(id))
        await page.getByTestId("delivered-in").waitFor()
        const shown = await page.evaluate(() =>
          Array.from(
            document.querySelectorAll("[data-testid=calls] [data-call][data-verdict]"),
            (card) => `${card.getAttribute("data-call")} ${card.getAttribute("data-verdict")}`
          ).sort()
        )
        expect({ store: fixture.name, id, console: shown }).toEqual({
          store: fixture.name,
          id,
          console: fixture.cli.get(id)
        })
        const text = await page.locator("main#view").innerText()
        expect(text).not.toMatch(/\bnull\b|\bundefined\b|nullnull/)
      }
      await page.close()
    }
  })
})
