/**
 * `engram migrate` carries extraction ledgers: a store copied to another backend (SQLite →
 * PostgreSQL, and back) continues extraction after the last turn the source extracted — no turn is
 * read twice, no memory proposed twice — and a session whose ledger is all it holds (an ACP
 * session's) travels too. Each store is a real backend; the copy is what `engram migrate` runs
 * (`StoreMigration.copyStore` for records and promotion rows, `SessionMigration.copySessions` for
 * sessions and the injection log).
 */
import { expect, it } from "@effect/vitest"
import { MemoryStore, PromotionStore, SessionStore, TelemetryStore } from "@engram/core"
import { SessionMigration, StoreMigration } from "@engram/migrate"
import { Extraction } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { SqliteEngram } from "@engram/store-sqlite"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { describePg } from "../packages/store-pg/test/pgGate.js"
import { memory, rememberingExtractor } from "./support/rememberingExtractor.js"

type Stores =
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore

const at = (n: number) => DateTime.unsafeMake(Date.UTC(2025, 5, 1) + n * 1000)
const facts = ["the deploy is on Tuesdays", "the staging host is blue", "tea comes without sugar", "builds use Bun"]
const turns = facts.map((fact, i) => new SessionStore.OperatorMessage({ text: `Remember: ${fact}`, at: at(i) }))
// An ACP session's turns live in the client; only its ledger is in the store.
const acpTurns = [new SessionStore.OperatorMessage({ text: "Remember: the ACP client is Zed", at: at(9) })]

/** One run of a fresh extraction service (a new process, as `engram extract` is) over `stores`. */
const extract = (stores: Context.Context<Stores>, request: Omit<Extraction.RunRequest, "memory">) =>
  Effect.scoped(
    Effect.flatMap(Extraction.make({ maxTurns: 3, nearDuplicates: false }), (service) =>
      service.run({ ...request, memory }))
  )
    .pipe(Effect.provide(Layer.merge(Layer.succeedContext(stores), ScriptedModel.layer(rememberingExtractor))))

const notes = (stores: Context.Context<Stores>) =>
  Effect.map(
    Context.get(stores, MemoryStore.MemoryStore).list({ includeSuperseded: true, limit: 100 }),
    (page) => page.records.map((r) => r.content).sort()
  )

/** What `engram migrate` copies, from one backend's stores to another's, verified. */
const migrate = (from: Context.Context<Stores>, to: Context.Context<Stores>) =>
  Effect.gen(function*() {
    yield* StoreMigration.copyStore(
      Context.get(from, MemoryStore.MemoryStore),
      Context.get(to, MemoryStore.MemoryStore),
      {
        promotions: {
          from: Context.get(from, PromotionStore.PromotionStore),
          to: Context.get(to, PromotionStore.PromotionStore)
        }
      }
    )
    return yield* SessionMigration.copySessions({
      sessions: { from: Context.get(from, SessionStore.SessionStore), to: Context.get(to, SessionStore.SessionStore) },
      telemetry: {
        from: Context.get(from, TelemetryStore.TelemetryStore),
        to: Context.get(to, TelemetryStore.TelemetryStore)
      }
    })
  })

const withTempDir = <A, E, R>(use: (dir: string) => Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => mkdtempSync(Path.join(tmpdir(), "engram-extraction-migrate-"))),
    use,
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

const sqlite = (filename: string) => Layer.build(SqliteEngram.layer({ filename }))

describePg("extraction ledgers through engram migrate", (url) => {
  const pg = Layer.build(
    PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_xmig" })))
  )

  it.effect(
    "SQLite → PostgreSQL → SQLite: each copy continues after the last extracted turn",
    () =>
      withTempDir((dir) =>
        Effect.scoped(Effect.gen(function*() {
          const source = yield* sqlite(Path.join(dir, "source.db"))
          yield* Context.get(source, SessionStore.SessionStore).append("s-1", turns)
          expect(yield* extract(source, { sessionId: "s-1" })).toMatchObject({ status: "extracted", turns: [1, 2, 3] })
          expect(yield* extract(source, { sessionId: "acp-1", messages: acpTurns })).toMatchObject({ turns: [1] })

          const postgres = yield* pg
          const there = yield* migrate(source, postgres)
          expect(there.extractionsCopied).toBe(2)
          expect(there.target).toMatchObject({ sessions: 2, extractions: 2 })
          expect(yield* Context.get(postgres, SessionStore.SessionStore).listSessions()).toEqual(["acp-1", "s-1"])
          // On PostgreSQL: only turn 4 is left, and the token budget carries on from the source's spend.
          const next = yield* extract(postgres, { sessionId: "s-1" })
          expect(next).toMatchObject({ status: "extracted", calls: 1, turns: [4] })
          expect(next.ledger).toMatchObject({ through: 4, runs: 2, calls: 2, tokens: 240 })
          expect(yield* extract(postgres, { sessionId: "acp-1", messages: acpTurns })).toMatchObject({
            status: "nothing-new",
            calls: 0
          })
          expect(yield* notes(postgres)).toEqual([...facts, "the ACP client is Zed"].sort())

          // And back, to a new SQLite file: nothing is left to extract anywhere.
          const back = yield* sqlite(Path.join(dir, "back.db"))
          const again = yield* migrate(postgres, back)
          expect(again.extractionsCopied).toBe(3)
          for (const request of [{ sessionId: "s-1" }, { sessionId: "acp-1", messages: acpTurns }]) {
            expect(yield* extract(back, request)).toMatchObject({ status: "nothing-new", calls: 0 })
          }
          expect((yield* extract(back, { sessionId: "s-1" })).ledger).toEqual(next.ledger)
          expect(yield* notes(back)).toEqual(yield* notes(postgres))
          // A rerun of either copy finds every run in place.
          expect((yield* migrate(postgres, back)).extractionsCopied).toBe(0)
        }))
      ),
    60_000
  )
})

it.effect(
  "without the ledger copied, the migrated store would read the same turns again",
  () =>
    withTempDir((dir) =>
      Effect.scoped(Effect.gen(function*() {
        const source = yield* sqlite(Path.join(dir, "source.db"))
        yield* Context.get(source, SessionStore.SessionStore).append("s-1", turns)
        yield* extract(source, { sessionId: "s-1" })
        const target = yield* sqlite(Path.join(dir, "target.db"))
        yield* migrate(source, target)
        expect(yield* extract(target, { sessionId: "s-1" })).toMatchObject({ turns: [4] })
        // The control: the same session copied without its ledger starts from turn 1.
        const bare = yield* sqlite(Path.join(dir, "bare.db"))
        yield* Context.get(bare, SessionStore.SessionStore).append("s-1", turns)
        expect(yield* extract(bare, { sessionId: "s-1" })).toMatchObject({ turns: [1, 2, 3] })
      }))
    ),
  60_000
)
