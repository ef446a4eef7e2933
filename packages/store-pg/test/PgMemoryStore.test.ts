import { PgClient } from "@effect/sql-pg"
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { IdGenerator, MemoryStore, SearchTokenizer } from "@engram/core"
import { PgDatabase, PgEngram, PgMemoryStore, PgPromotionStore, PgTelemetryStore } from "@engram/store-pg"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as TestClock from "effect/TestClock"
import { type Recorded, recording } from "../../../test/lib/recordingSql.js"
import { lexemeOf, quoteLexeme, searchQuery } from "../src/internal/lexemes.js"
import { describePg } from "./pgGate.js"
import { dropSchema, withSql } from "./utilities.js"

const ids = (records: ReadonlyArray<{ readonly id: string }>) => records.map((r) => r.id).sort()
const hitIds = (result: MemoryStore.SearchResult) => ids(result.hits.map((h) => h.record))

// A connection that must not migrate: the memory store over the promotion and telemetry stores
// its forget reaches, none of them running DDL.
const readOnlyStores = PgMemoryStore.layerWithoutMigrations().pipe(
  Layer.provideMerge(Layer.merge(PgPromotionStore.layerWithoutMigrations, PgTelemetryStore.layerWithoutMigrations))
)

describePg("PgMemoryStore", (url) => {
  // Each test gets an empty schema of its own, dropped when the test ends.
  const fresh = PgEngram.layerStores().pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, maxConnections: 4 })),
    Layer.provideMerge(IdGenerator.sequential())
  )

  it.effect("stores every token verbatim as a lexeme, in every script", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const sql = yield* SqlClient.SqlClient
      const content = "Ελληνικά κείμενο · 東京タワー · Привет, МИР! · Café Ωmega · a৴b ௰ · 2024年"
      const [record] = yield* store.write([{ id: "r1", content, kind: "note", tags: ["Straße"] }])
      const expected = SearchTokenizer.tokenize(SearchTokenizer.searchableText(record!))
      const rows = yield* sql<{ tokens: string; lexemes: ReadonlyArray<string> }>`
        SELECT search_tokens AS tokens, tsvector_to_array(search_vector) AS lexemes
        FROM engram_memories WHERE id = 'r1'`
      expect(rows[0]!.tokens).toBe(expected.join(" "))
      expect([...rows[0]!.lexemes].sort()).toEqual([...new Set(expected)].sort())
      // Tokens PostgreSQL's own text-search parser would split or drop are whole lexemes here.
      expect(rows[0]!.lexemes).toEqual(expect.arrayContaining(["ελληνικα", "東京タワー", "мир", "a৴b", "௰", "2024年"]))
      for (const query of ["ΕΛΛΗΝΙΚΑ", "東京タワー", "мир", "cafe", "a৴b", "௰", "strasse straße"]) {
        const found = yield* store.search(query)
        expect(hitIds(found), query).toEqual(["r1"])
      }
      for (const query of ["東京", "ελλ", "a", "b", "2024"]) {
        const found = yield* store.search(query)
        expect(hitIds(found), query).toEqual([])
      }
    }).pipe(Effect.provide(fresh)))

  it.effect("multi-token queries are OR-joined, never AND", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([
        { id: "a", content: "alpha only", kind: "note" },
        { id: "b", content: "beta only", kind: "note" },
        { id: "c", content: "gamma", kind: "note" }
      ])
      expect(hitIds(yield* store.search("alpha beta"))).toEqual(["a", "b"])
      expect(hitIds(yield* store.search("ALPHA, beta; delta"))).toEqual(["a", "b"])
    }).pipe(Effect.provide(fresh)))

  it.effect("no query text can inject tsquery syntax", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      yield* store.write([
        { id: "q1", content: "it's a trap", kind: "note" },
        { id: "q2", content: "backslash \\ and quote ' here", kind: "note" },
        { id: "q3", content: "prefix matching", kind: "note" }
      ])
      const attempts = [
        "it's",
        "' | trap",
        "!trap",
        "trap & it",
        "pre:*",
        "(prefix",
        "\\'",
        "'':*",
        "<->",
        "a <-> trap"
      ]
      for (const query of attempts) {
        const found = yield* store.search(query)
        const tokens = new Set(SearchTokenizer.tokenize(query))
        const expected = ["q1", "q2", "q3"].filter((id) => {
          const text = { q1: "it's a trap", q2: "backslash \\ and quote ' here", q3: "prefix matching" }[id]!
          return SearchTokenizer.tokenize(text).some((t) => tokens.has(t))
        })
        expect(hitIds(found), query).toEqual(expected)
      }
    }).pipe(Effect.provide(fresh)))

  it.effect("a quoted lexeme round-trips through the tsquery parser unchanged", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const lexeme of ["plain", "it's", "back\\slash", "''", "a | b", "x:*", "!"]) {
        const rows = yield* sql<{ lexemes: ReadonlyArray<string> }>`
          SELECT querytree(${quoteLexeme(lexeme)}::tsquery) AS tree,
                 tsvector_to_array(array_to_tsvector(ARRAY[${lexeme}])) AS lexemes,
                 array_to_tsvector(ARRAY[${lexeme}]) @@ ${quoteLexeme(lexeme)}::tsquery AS matches`
        expect((rows[0] as unknown as { matches: boolean }).matches, lexeme).toBe(true)
        expect(rows[0]!.lexemes).toEqual([lexeme])
      }
      expect(searchQuery("Ab, CD!  ab")).toBe("'ab' | 'cd'")
      expect(searchQuery(" ,.; ")).toBeUndefined()
    }).pipe(Effect.provide(fresh)))

  it.effect("tokens longer than PostgreSQL's lexeme limit still match exactly", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const long = "x".repeat(3_000)
      const longer = "x".repeat(3_001)
      yield* store.write([
        { id: "long", content: `start ${long} end`, kind: "note" },
        { id: "longer", content: longer, kind: "note" }
      ])
      expect(lexemeOf(long)).toMatch(/^~[0-9a-f]{64}$/)
      expect(hitIds(yield* store.search(long))).toEqual(["long"])
      expect(hitIds(yield* store.search(longer.toUpperCase()))).toEqual(["longer"])
      expect(hitIds(yield* store.search("x".repeat(2_999)))).toEqual([])
    }).pipe(Effect.provide(fresh)))

  it.effect("refuses text PostgreSQL cannot store, naming the field, and stores nothing", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const result = yield* Effect.either(
        store.write([{ id: "ok", content: "fine", kind: "note" }, { id: "nul", content: "a\u0000b", kind: "note" }])
      )
      expect(Either.isLeft(result) && result.left._tag).toBe("InvalidMemoryInput")
      if (Either.isLeft(result) && result.left._tag === "InvalidMemoryInput") {
        expect(result.left.index).toBe(1)
        expect(result.left.message).toContain("content")
      }
      const lone = yield* Effect.either(store.write([{ id: "sur", content: "half \uD800 a pair", kind: "note" }]))
      expect(Either.isLeft(lone)).toBe(true)
      expect((yield* store.list()).records).toEqual([])
    }).pipe(Effect.provide(fresh)))

  it.effect("one corrupt row degrades that row only: skipped, counted, logged", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const sql = yield* SqlClient.SqlClient
      yield* store.write([
        { id: "good-2", content: "shared token three", kind: "note" },
        { id: "good-1", content: "shared token one", kind: "note" },
        { id: "bad", content: "shared token two", kind: "note" }
      ])
      yield* sql`UPDATE engram_memories SET kind = 'not-a-kind' WHERE id = 'bad'`
      const counter = MemoryStore.rowsSkipped.pipe(Metric.tagged("backend", "postgres"))
      const before = (yield* Metric.value(counter)).count

      const page = yield* store.list()
      expect(ids(page.records)).toEqual(["good-1", "good-2"])
      expect(page.skipped).toBe(1)
      const found = yield* store.search("shared")
      expect(hitIds(found)).toEqual(["good-1", "good-2"])
      expect(found.skipped).toBe(1)
      const got = yield* store.get(["bad", "good-2"])
      expect(ids(got.records)).toEqual(["good-2"])
      expect(got.skipped).toBe(1)

      const after = yield* Metric.value(counter)
      expect(after.count).toBe(Number(before) + 3)

      // Paging walks past the bad row without failing and without reading it twice.
      const first = yield* store.list({ limit: 1 })
      const second = yield* store.list({ limit: 1, cursor: first.nextCursor! })
      const third = yield* store.list({ limit: 1, cursor: second.nextCursor! })
      // Listing order is createdAt DESC then id ASC; a batch is stamped a millisecond apart in input
      // order, so "bad", written last, comes first.
      expect([first, second, third].map((p) => [p.records.map((r) => r.id), p.skipped])).toEqual([
        [[], 1],
        [["good-1"], 0],
        [["good-2"], 0]
      ])
      expect(third.nextCursor).toBeUndefined()

      const lifecycle = yield* Effect.either(store.setReviewState("bad", "confirmed"))
      expect(Either.isLeft(lifecycle) && lifecycle.left._tag).toBe("MemoryStoreFailure")
    }).pipe(Effect.provide(fresh)))

  it.effect("migrations run once per schema; the store reopens with its rows", () =>
    Effect.gen(function*() {
      const schema = PgDatabase.temporarySchemaName("engram_reopen")
      const open = PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })))
      yield* Effect.provide(
        Effect.flatMap(MemoryStore.MemoryStore, (s) => s.write([{ id: "kept", content: "kept", kind: "fact" }])),
        open
      )
      const reopened = yield* Effect.provide(
        Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list()),
        open
      )
      expect(ids(reopened.records)).toEqual(["kept"])
      const migrations = yield* withSql(
        url,
        (sql) => sql<{ n: string }>`SELECT count(*) AS n FROM engram_memory_migrations`,
        schema
      )
      expect(Number(migrations[0]!.n)).toBe(9)
      yield* dropSchema(url, schema)
    }).pipe(Effect.provide(IdGenerator.sequential())))

  it.effect("tokens stored by another tokenizer version are re-indexed when the store starts", () =>
    Effect.gen(function*() {
      const schema = PgDatabase.temporarySchemaName("engram_reindex")
      yield* Effect.addFinalizer(() => dropSchema(url, schema))
      const open = PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })))
      const search = (text: string) =>
        Effect.provide(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.search(text)), open)
      yield* Effect.provide(
        Effect.flatMap(MemoryStore.MemoryStore, (s) =>
          s.write([
            { id: "glass", content: "ガラス と 東京タワー", kind: "note" },
            { id: "cafe", content: "Café crème", kind: "note" }
          ])),
        open
      )
      // As an older tokenizer would have left them: other tokens, another fingerprint.
      yield* withSql(url, (sql) =>
        Effect.zipRight(
          sql`UPDATE engram_memories SET search_tokens = CASE id WHEN 'glass' THEN 'カラス と 東京タワー' ELSE 'café' END`,
          sql`UPDATE engram_memory_meta SET value = 'an-older-tokenizer' WHERE key = 'tokenizer'`
        ), schema)
      // A replica cannot repair it, and says so without failing.
      const replica = readOnlyStores.pipe(
        Layer.provide(PgDatabase.layer({ url, schema, maxConnections: 1 }))
      )
      const stale = yield* Effect.provide(Effect.flatMap(MemoryStore.MemoryStore, (s) => s.search("cafe")), replica)
      expect(hitIds(stale)).toEqual([])

      expect(hitIds(yield* search("ガラス"))).toEqual(["glass"])
      expect(hitIds(yield* search("カラス"))).toEqual([])
      expect(hitIds(yield* search("CAFE creme"))).toEqual(["cafe"])
      const meta = yield* withSql(
        url,
        (sql) => sql<{ value: string }>`SELECT value FROM engram_memory_meta WHERE key = 'tokenizer'`,
        schema
      )
      expect(meta[0]!.value).toBe(SearchTokenizer.fingerprint)
    }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

  it.effect("layerConfig reads ENGRAM_PG_URL and ENGRAM_PG_SCHEMA", () =>
    Effect.gen(function*() {
      const schema = PgDatabase.temporarySchemaName("engram_config")
      const provider = ConfigProvider.fromMap(new Map([["ENGRAM_PG_URL", url], ["ENGRAM_PG_SCHEMA", schema]]))
      const listed = yield* Effect.provide(
        Effect.flatMap(MemoryStore.MemoryStore, (store) =>
          Effect.zipRight(store.write([{ id: "cfg", content: "configured", kind: "note" }]), store.list())),
        PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layerConfig)).pipe(
          Layer.provide(Layer.setConfigProvider(provider))
        )
      )
      expect(ids(listed.records)).toEqual(["cfg"])
      const tables = yield* withSql(url, (sql) =>
        sql<{ n: string }>`SELECT count(*) AS n FROM information_schema.tables
          WHERE table_schema = ${schema} AND table_name = 'engram_memories'`)
      yield* dropSchema(url, schema)
      expect(Number(tables[0]!.n)).toBe(1)

      const missing = yield* Effect.exit(
        Effect.provide(
          MemoryStore.MemoryStore,
          PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layerConfig)).pipe(
            Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map())))
          )
        )
      )
      expect(Exit.isFailure(missing)).toBe(true)
      expect(String(Exit.isFailure(missing) ? missing.cause : "")).toContain("ENGRAM_PG_URL")
    }).pipe(Effect.provide(IdGenerator.sequential())))

  it.effect("a read-only connection (as on a replica) reads without migrating, and refuses writes", () =>
    Effect.gen(function*() {
      const schema = PgDatabase.temporarySchemaName("engram_replica")
      const readOnly = new URL(url)
      readOnly.searchParams.set("options", "-c default_transaction_read_only=on")
      const replica = (store: ReturnType<typeof PgEngram.layerStores> | typeof readOnlyStores) =>
        store.pipe(Layer.provide(PgDatabase.layer({ url: readOnly.toString(), schema, maxConnections: 1 })))
      yield* Effect.addFinalizer(() => dropSchema(url, schema))
      yield* withSql(url, (sql) => sql.unsafe(`CREATE SCHEMA "${schema}"`))

      // Before any store migrated the schema, the replica store says what to do.
      const early = yield* Effect.exit(
        Effect.provide(MemoryStore.MemoryStore, replica(readOnlyStores))
      )
      expect(String(Exit.isFailure(early) ? early.cause : "")).toMatch(/this version of Engram needs \d+/)

      yield* Effect.provide(
        Effect.flatMap(
          MemoryStore.MemoryStore,
          (s) => s.write([{ id: "primary", content: "written on the primary", kind: "fact" }])
        ),
        PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 1 })))
      )
      // A migrating store cannot even start on a read-only connection…
      const migrating = yield* Effect.exit(Effect.provide(MemoryStore.MemoryStore, replica(PgEngram.layerStores())))
      expect(Exit.isFailure(migrating)).toBe(true)
      // …the non-migrating one reads, and its writes fail as backend failures, leaving nothing behind.
      yield* Effect.provide(
        Effect.gen(function*() {
          const store = yield* MemoryStore.MemoryStore
          expect(ids((yield* store.list()).records)).toEqual(["primary"])
          expect(hitIds(yield* store.search("primary"))).toEqual(["primary"])
          const write = yield* Effect.either(store.write([{ id: "replica", content: "nope", kind: "fact" }]))
          expect(Either.isLeft(write) && write.left._tag).toBe("MemoryStoreFailure")
          const review = yield* Effect.either(store.setReviewState("primary", "rejected"))
          expect(Either.isLeft(review) && review.left._tag).toBe("MemoryStoreFailure")
          expect((yield* store.get(["primary"])).records[0]!.reviewState).toBe("pending")
        }),
        replica(readOnlyStores)
      )
    }).pipe(Effect.scoped, Effect.provide(IdGenerator.sequential())))

  it.effect("refuses a schema name that would need quoting", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(
        Effect.provide(
          MemoryStore.MemoryStore,
          PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema: "Robert'); DROP" })))
        )
      )
      expect(Exit.isFailure(exit)).toBe(true)
      expect(String(Exit.isFailure(exit) ? exit.cause : "")).toContain("is not allowed")
    }))
})

describePg("PgMemoryStore search statistics", (url) => {
  const fresh = PgEngram.layerStores().pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, maxConnections: 4 })),
    Layer.provideMerge(IdGenerator.sequential())
  )

  /** The counter rows' figures next to the same figures counted from the records. */
  const counted = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [kept] = yield* sql<{ records: string; length: string }>`
      SELECT coalesce(sum(records), 0)::text AS records, coalesce(sum(search_length), 0)::text AS length
      FROM engram_memory_totals`
    const [real] = yield* sql<{ records: string; length: string }>`
      SELECT count(*)::text AS records, coalesce(sum(search_length), 0)::text AS length FROM engram_memories`
    const keptFrequencies = yield* sql<{ token: string; docs: string }>`
      SELECT token, sum(docs)::text AS docs FROM engram_memory_frequencies GROUP BY token HAVING sum(docs) <> 0
      ORDER BY token`
    const realFrequencies = yield* sql<{ token: string; docs: string }>`
      SELECT token COLLATE "C" AS token, count(*)::text AS docs
      FROM engram_memories, unnest(tsvector_to_array(search_vector)) AS token GROUP BY 1 ORDER BY 1`
    return { kept: { ...kept, frequencies: keptFrequencies }, real: { ...real, frequencies: realFrequencies } }
  })

  it.effect("totals and document frequencies follow every write, update and forget, on several connections", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      // Several fibers write at once: they run on the pool's connections, hence on several shards.
      yield* Effect.forEach(
        Array.from({ length: 8 }, (_, i) => i),
        (i) =>
          store.write([
            { content: `alpha beta shared ${i}`, kind: "note", scope: "global" },
            { content: `gamma shared w${i}`, kind: "fact", scope: i % 2 === 0 ? "project:a" : "project:b" }
          ]),
        { concurrency: 4 }
      )
      const listed = yield* store.list({ limit: 100 })
      const [first, second, third] = listed.records
      yield* store.setReviewState(first!.id, "rejected")
      yield* store.supersede(second!.id, { content: "a successor with new words", kind: "fact" })
      yield* store.expire(third!.id)
      yield* store.forget({ scope: "project:a" }, { by: "test" })
      yield* store.forget({ ids: [first!.id] }, { by: "test" })
      const { kept, real } = yield* counted
      expect(kept).toEqual(real)
      expect(Number(real.records)).toBeGreaterThan(5)
      // What search plans by: the frequency of "shared" is the records holding it.
      const sql = yield* SqlClient.SqlClient
      const token = SearchTokenizer.tokenize("shared")[0]!
      const [shared] = yield* sql<{ n: string }>`
        SELECT count(*)::text AS n FROM engram_memories WHERE search_vector @@ ${quoteLexeme(token)}::tsquery`
      expect(Number(shared!.n)).toBeGreaterThan(0)
      expect(kept.frequencies.find((f) => f.token === token)?.docs).toBe(shared!.n)
    }).pipe(Effect.provide(fresh)))

  it.effect("a search reads its size and its tokens' frequencies in one statement, then ranks in one", () =>
    Effect.gen(function*() {
      const raw = yield* SqlClient.SqlClient
      const log: Array<Recorded> = []
      const client = yield* recording(raw, PgClient.makeCompiler(), log)
      const store = yield* Effect.provide(
        MemoryStore.MemoryStore,
        PgEngram.layerStores().pipe(
          Layer.provide(Layer.succeed(SqlClient.SqlClient, client)),
          Layer.provideMerge(IdGenerator.sequential())
        )
      )
      yield* store.write([{ content: "alpha beta", kind: "note" }, { content: "beta gamma", kind: "note" }])
      log.length = 0
      // A new store: its size is due and no frequency is cached.
      const found = yield* store.search("gamma beta")
      expect(found.hits.map((hit) => hit.record.content)).toEqual(["beta gamma", "alpha beta"])
      expect(log).toHaveLength(2)
      expect(log[0]!.sql).toContain("engram_memory_totals")
      expect(log[0]!.sql).toContain("engram_memory_frequencies")
    }).pipe(Effect.provide(PgDatabase.layerTemporarySchema({ url, maxConnections: 2 }))))

  it.effect("the migration counts the records already stored", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const sql = yield* SqlClient.SqlClient
      yield* store.write([{ content: "alpha beta", kind: "note" }, { content: "beta gamma", kind: "note" }])
      // As a store before migration 0005 left it (so without 0010's to 0012's columns too), then migrated again.
      yield* sql.unsafe(`DROP TABLE engram_memory_totals, engram_memory_frequencies, engram_memory_write_order;
        DROP FUNCTION engram_memories_count_insert, engram_memories_count_delete, engram_memories_count_update CASCADE;
        DROP INDEX engram_memories_always_idx, engram_memories_delivery_idx, engram_memories_review_idx,
          engram_memories_kind_idx;
        ALTER TABLE engram_memories DROP COLUMN valid_from, DROP COLUMN valid_to, DROP COLUMN corroborations,
          DROP COLUMN corroboration_sessions, DROP COLUMN corroborated_at, DROP COLUMN write_turn;
        DELETE FROM engram_memory_migrations WHERE migration_id >= 5`)
      yield* Effect.provide(MemoryStore.MemoryStore, PgEngram.layerStores())
      const { kept, real } = yield* counted
      expect(kept).toEqual(real)
      expect(real.records).toBe("2")
      const found = yield* store.search("beta")
      expect(found.hits.length).toBe(2)
    }).pipe(Effect.provide(fresh)))

  it.effect("the write-order migration places the episodes already stored in the order they were written", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const sql = yield* SqlClient.SqlClient
      const episode = (id: string, scope = "project:a") => ({
        id,
        content: `turn ${id}`,
        kind: "episode" as const,
        scope
      })
      // Each write a second after the one before: PostgreSQL keeps no row order, so the migration
      // reads the write order from the creation time (a batch is stamped in item order).
      yield* store.write([episode("a0"), episode("b0", "project:b"), episode("a1")])
      yield* TestClock.adjust(1000)
      yield* store.write([{ id: "n0", content: "a note", kind: "note", scope: "project:a" }, episode("a2")])
      yield* TestClock.adjust(1000)
      yield* store.write([{ ...episode("p0"), position: { thread: "t", turn: 0 } }, episode("a3")])
      // As a store before migration 0012 left it, then migrated again.
      yield* sql.unsafe(`DROP TABLE engram_memory_write_order;
        ALTER TABLE engram_memories DROP COLUMN write_turn;
        DELETE FROM engram_memory_migrations WHERE migration_id >= 12`)
      yield* Effect.provide(MemoryStore.MemoryStore, PgEngram.layerStores())
      yield* store.write([episode("a4")])
      const read = yield* store.neighbours({ positions: [], around: ["a2"], window: 5 })
      expect(read.records.map((r) => r.id)).toEqual(["a0", "a1", "a2", "a3", "a4"])
      expect(read.places.map((p) => [p.id, p.thread, p.turn])).toEqual([
        ["a2", "", 2],
        ["a0", "", 0],
        ["a1", "", 1],
        ["a2", "", 2],
        ["a3", "", 3],
        ["a4", "", 4]
      ])
      expect(read.records.every((r) => r.position === undefined)).toBe(true)
    }).pipe(Effect.provide(fresh)))
})
