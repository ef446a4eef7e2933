import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { runSessionStoreConformance, SessionStoreConformance } from "@engram/conformance"
import { ProjectionLayout, SessionStore } from "@engram/core"
import { PgDatabase, PgSessionStore } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { describePg } from "./pgGate.js"
import { dropSchema } from "./utilities.js"

const { assistant, extractionRun, interrupt, operator, tool } = SessionStoreConformance

const texts = (history: SessionStore.SessionHistory) =>
  history.messages.map((m) => (m._tag === "ToolMessage" ? m._tag : m.text))

describePg("PostgreSQL session store", (url) => {
  // Every build is an empty schema of its own, dropped on release.
  const fresh = PgSessionStore.layer.pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_sess", maxConnections: 4 }))
  )

  runSessionStoreConformance("postgres", fresh)

  it.effect("skips, logs and counts a stored message that no longer decodes; later appends number after it", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.append("s-1", [operator("one"), assistant("two"), tool([]), operator("four")])
      yield* sql`UPDATE engram_session_messages SET message = '{not json' WHERE session_id = 's-1' AND seq = 1`
      yield* sql`UPDATE engram_session_messages SET message = '{"_tag":"Bogus","at":"x"}' WHERE seq = 2`
      const history = yield* store.load("s-1")
      expect(history.skipped).toBe(2)
      expect(texts(history)).toEqual(["one", "four"])
      yield* store.append("s-1", [operator("five")])
      expect(texts(yield* store.load("s-1"))).toEqual(["one", "four", "five"])
      const [count] = yield* sql<{ n: string }>`SELECT count(*) AS n FROM engram_session_messages`
      expect(Number(count!.n)).toBe(5)
    }).pipe(Effect.provide(fresh)))

  it.effect("a stored extraction run that no longer decodes degrades that run only; later ones number after it", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.recordExtraction("s-1", extractionRun(1, 8, "extracted", 300))
      yield* store.recordExtraction("s-1", extractionRun(9, 12, "extracted", 100))
      yield* sql`UPDATE engram_session_extractions SET run = '{"turns":"many"}' WHERE seq = 1`
      yield* store.recordExtraction("s-1", extractionRun(13, 13, "failed", 40))
      const read = yield* store.loadExtractions("s-1")
      expect(read.skipped).toBe(1)
      expect(read.runs.map((run) => [run.turns.first, run.outcome])).toEqual([[1, "extracted"], [13, "failed"]])
      expect(SessionStore.summarizeExtractions(read.runs)).toMatchObject({ through: 8, tokens: 340, failures: 1 })
      const seqs = yield* sql<{ seq: number }>`SELECT seq FROM engram_session_extractions ORDER BY seq`
      expect(seqs.map((row) => row.seq)).toEqual([0, 1, 2])
    }).pipe(Effect.provide(fresh)))

  it.effect("a stored interrupt that no longer decodes reads as none; a new one replaces it", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* store.putInterrupt("s-1", interrupt(1))
      yield* sql`UPDATE engram_session_interrupts SET interrupt = '{"turn":"many"}'`
      expect(yield* store.getInterrupt("s-1")).toEqual(Option.none())
      yield* store.putInterrupt("s-1", interrupt(2))
      expect(Option.map(yield* store.getInterrupt("s-1"), (i) => i.turn)).toEqual(Option.some(2))
    }).pipe(Effect.provide(fresh)))

  it.effect("eight connections appending to one session: every batch lands whole and numbered in a row", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* Effect.forEach(
        Array.from({ length: 40 }, (_, b) => b),
        (b) => store.append("hot", Array.from({ length: 5 }, (_, i) => operator(`${b}:${i}`))),
        { concurrency: 8, discard: true }
      )
      const history = yield* store.load("hot")
      const all = texts(history)
      expect(all).toHaveLength(200)
      for (let i = 0; i < all.length; i += 5) {
        const batch = all[i]!.split(":")[0]
        expect(all.slice(i, i + 5)).toEqual([0, 1, 2, 3, 4].map((n) => `${batch}:${n}`))
      }
      const seqs = yield* sql<{ seq: number }>`SELECT seq FROM engram_session_messages ORDER BY seq`
      expect(seqs.map((r) => r.seq)).toEqual(Array.from({ length: 200 }, (_, i) => i))
    }).pipe(Effect.provide(
      PgSessionStore.layer.pipe(
        Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_sess", maxConnections: 8 }))
      )
    )))

  it.effect("refuses a session id PostgreSQL cannot store", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const result = yield* Effect.either(store.append("half-\uD800", [operator("x")]))
      expect(Either.isLeft(result) && result.left._tag).toBe("InvalidSessionData")
    }).pipe(Effect.provide(fresh)))

  it.effect("keeps sessions and interrupts across reopening; never stores projected context", () =>
    Effect.gen(function*() {
      const schema = PgDatabase.temporarySchemaName("engram_sess")
      yield* Effect.addFinalizer(() => dropSchema(url, schema))
      const open = PgSessionStore.layer.pipe(Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })))
      const withStore = <A, E>(f: (store: SessionStore.Service) => Effect.Effect<A, E>) =>
        Effect.provide(Effect.flatMap(SessionStore.SessionStore, f), open)
      yield* withStore((s) =>
        Effect.zipRight(s.append("s-1", [operator("hi"), assistant("hello")]), s.putInterrupt("s-1", interrupt(4)))
      )
      yield* withStore((s) => s.append("s-1", [operator("again")]))
      const [history, pending] = yield* withStore((s) => Effect.zip(s.load("s-1"), s.getInterrupt("s-1")))
      expect(texts(history)).toEqual(["hi", "hello", "again"])
      expect(Option.map(pending, (i) => i.turn)).toEqual(Option.some(4))
      for (const message of history.messages) {
        expect(ProjectionLayout.containsProjection(JSON.stringify(message))).toBe(false)
      }
    }).pipe(Effect.scoped))
}, { concurrent: true })
