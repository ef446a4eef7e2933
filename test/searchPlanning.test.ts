/**
 * Query planning, on every backend, through `MemoryStore.search`: a question's rare word decides
 * the ranking even when a frequent word is repeated in a short record, the frequent word still
 * matches (the match set is the contract), and the runtime's scope filter holds.
 *
 * The store holds 3,201 records; "when does the ferry take" is in 700 of them (22%, above the
 * planner's 10% share and its 256-record floor), "zebra" in one long record. Unplanned, every
 * backend ranks the short records holding five of the question's words first (BM25 and ts_rank
 * alike); planned search ranks "zebra" first.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryQuery, MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describePg } from "../packages/store-pg/test/pgGate.js"

const filler = "plain words about nothing much here today"
const records = [
  { id: "ferry-only", content: "when does the ferry take", kind: "note" as const, scope: "global" },
  {
    id: "zebra",
    content: `${filler} ${filler} ${filler} ${filler} ${filler} and one zebra on the ferry deck ${filler}`,
    kind: "note" as const,
    scope: "global"
  },
  { id: "zebra-elsewhere", content: "a zebra in another project", kind: "note" as const, scope: "project:other" },
  ...Array.from({ length: 2_997 }, (_, i) => ({
    id: `r${i}`,
    content: i < 698 ? `when does the ferry take off at ${i}` : `record ${i} of the filler ${i % 7}`,
    kind: "note" as const,
    scope: i % 3 === 0 ? "project:other" : "global"
  })),
  { id: "okapi", content: "a lone okapi at dawn", kind: "note" as const, scope: "global" },
  ...Array.from({ length: 200 }, (_, i) => ({
    id: `harbor-${i}`,
    content: `a busy harbor at ${i}`,
    kind: "note" as const,
    scope: "global"
  }))
]

const question = "when does the zebra take the ferry"

const checks = (prepare: Effect.Effect<void, unknown, never> = Effect.void) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < records.length; i += 1_000) yield* store.write(records.slice(i, i + 1_000))
    yield* prepare
    const top = yield* store.search(question, { scopes: ["global"], deliverable: true, limit: 5 })
    expect(top.hits.map((h) => h.record.id)[0]).toBe("zebra")
    expect(top.hits.every((h) => h.record.scope === "global")).toBe(true)
    expect(top.hits.length).toBe(5)
    // Every record holding any question token still matches.
    const all = yield* store.search(question, { limit: MemoryQuery.MAX_LIMIT })
    const ids = new Set(all.hits.map((h) => h.record.id))
    expect(ids.has("ferry-only")).toBe(true)
    expect(ids.has("zebra-elsewhere")).toBe(true)
    expect(all.hits.length).toBe(records.filter((r) => /\b(when|does|the|zebra|take|ferry)\b/.test(r.content)).length)
    // Ranked tokens weigh by rarity (IDF): a record holding only the rare word of two ranks above
    // the newer, equally short records holding only the commoner one (ts_rank alone would not).
    const rare = yield* store.search("okapi harbor", { scopes: ["global"], deliverable: true, limit: 3 })
    expect(rare.hits.map((h) => h.record.id)[0]).toBe("okapi")
  })

/**
 * The planner options in context steer the backend: with nothing pruned (every token may rank,
 * function words too), the short records holding five of the question's words outrank "zebra", as
 * unplanned search does.
 */
const unprunedChecks = (prepare: Effect.Effect<void, unknown, never> = Effect.void) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < records.length; i += 1_000) yield* store.write(records.slice(i, i + 1_000))
    yield* prepare
    const options = { scopes: ["global"], deliverable: true, limit: 5 } as const
    expect((yield* store.search(question, options)).hits[0]!.record.id).toBe("zebra")
    // Unpruned and weighted by BM25's own IDF (power 1): the record holding many of the question's
    // frequent words outranks the one rare word; squared (the default), the rare word would still win.
    const unpruned = yield* store.search(question, {
      ...options,
      plan: { maxDocumentShare: 1, idfPower: 1, pruneFunctionWords: false }
    })
    expect(unpruned.hits[0]!.record.id).not.toBe("zebra")
    expect(unpruned.hits[0]!.record.content).toMatch(/when does the ferry take/)
  })

const ids = IdGenerator.sequential("plan")

describe("planned search", () => {
  it.effect("in-memory: the rare word ranks first, frequent words still match, scope holds", () =>
    checks().pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory, ids))))

  it.effect("SQLite: the rare word ranks first, frequent words still match, scope holds", () =>
    checks().pipe(
      Effect.provide(
        Layer.merge(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))),
          ids
        )
      )
    ))

  it.effect("in-memory: the planner options in context decide what is pruned", () =>
    unprunedChecks().pipe(Effect.provide(Layer.merge(MemoryStore.layerMemory, ids))))

  it.effect("SQLite: the planner options in context decide what is pruned", () =>
    unprunedChecks().pipe(
      Effect.provide(
        Layer.merge(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: ":memory:" }))),
          ids
        )
      )
    ))
})

/** `check` on a fresh PostgreSQL schema, after `ANALYZE` (BM25 needs its statistics). */
const analyzedPg = (
  url: string,
  check: (prepare: Effect.Effect<void, unknown, never>) => Effect.Effect<void, unknown, MemoryStore.MemoryStore>
) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* check(Effect.orDie(sql`ANALYZE engram_memories`))
  }).pipe(
    Effect.provide(
      Layer.merge(
        PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, maxConnections: 2 }))),
        ids
      )
    )
  )

describePg("planned search: PostgreSQL", (url) => {
  it.effect(
    "PostgreSQL (after ANALYZE): the rare word ranks first, frequent words still match, scope holds",
    () => analyzedPg(url, checks),
    60_000
  )

  it.effect(
    "PostgreSQL (after ANALYZE): the planner options in context decide what is pruned",
    () => analyzedPg(url, unprunedChecks),
    60_000
  )
})
