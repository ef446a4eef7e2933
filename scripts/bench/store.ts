/**
 * `npm run bench -- store [--sizes 10000,100000] [--queries 200] [--pg [url]]`
 *
 * For each size, on a fresh temporary SQLite file: batched write throughput, search p50/p95,
 * list p50 (a first page under a filter), and the same searches as raw better-sqlite3 FTS5
 * queries on the same file — the floor the store's search is measured against.
 *
 * With `--pg` (the URL, or `ENGRAM_PG_URL` when none follows), PostgreSQL gets a row next to
 * SQLite for every size: the same data and queries through `PgMemoryStore` in a temporary schema
 * (dropped afterwards), and as its floor the store's own search statement sent as plain SQL.
 *
 * Content is generated from a fixed seed, so every run measures the same data, after a warm-up run
 * on a throwaway in-memory store. A backend is benchmarked by {@link benchBackend}; adding one is
 * adding a row per size.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { IdGenerator, MemoryRecord, MemoryStore, SearchTokenizer } from "@engram/core"
import { EngramPg, PgMemoryStore } from "@engram/store-pg"
import { SqliteMemoryStore } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { prng } from "../lib/prng.js"

// ---------------------------------------------------------------------------------------------
// Deterministic data


const COMMON = (
  "the of and to in is that for it as with was on be by at this are from or have an they which one you " +
  "had not but what all were when we there can more if no out so said up its about into than them only " +
  "other new some could time these two may then do first any my now such like our over man me even most " +
  "made after also did many before must through back years where much your way well down should because " +
  "each just those people how too little state good very make world still own see men work long get here " +
  "between both life being under never day same another know while last might us great old year off come " +
  "since against go came right used take three"
).split(" ")

const DOMAIN = (
  "deploy release schedule meeting customer invoice database migration backup server cluster latency " +
  "incident rollback review checklist budget quarter roadmap design prototype feedback interview hiring " +
  "onboarding timezone preference coffee lunch travel flight hotel conference keynote slides draft " +
  "contract vendor license renewal security audit password rotation certificate dashboard metric alert " +
  "pager oncall weekend holiday birthday anniversary family project alpha beta gamma delta kernel " +
  "compiler typescript python postgres sqlite index query cache token budget prompt model agent memory " +
  "café naïve résumé Zürich München Straße Ελλάδα Αθήνα Москва встреча 東京 会議"
).split(" ")

/** Pseudo-words for the long tail: syllable strings, deterministic. */
const tail = (() => {
  const random = prng(7)
  const syllables = ["ka", "lo", "mi", "ren", "tor", "vel", "shi", "an", "qu", "dro", "pel", "zu", "ith", "mar", "os"]
  const words = new Set<string>()
  while (words.size < 6_000) {
    const length = 2 + Math.floor(random() * 3)
    let word = ""
    for (let i = 0; i < length; i++) word += syllables[Math.floor(random() * syllables.length)]
    words.add(word)
  }
  return [...words]
})()

const VOCABULARY = [...COMMON, ...DOMAIN, ...tail]

/** A Zipf-like pick: rank r drawn with weight ~ 1/r. */
const zipf = (random: () => number, size: number) => Math.min(size - 1, Math.floor(Math.exp(random() * Math.log(size + 1)) - 1))

const KINDS = MemoryRecord.MemoryKind.literals
const SOURCES = MemoryRecord.SourceType.literals
const TAGS = ["work", "home", "travel", "health", "finance", "people", "tools", "ideas"]

const sentence = (random: () => number) => {
  const length = 6 + Math.floor(random() * 28)
  const words: Array<string> = []
  for (let i = 0; i < length; i++) words.push(VOCABULARY[zipf(random, VOCABULARY.length)]!)
  const text = words.join(" ")
  return text.charAt(0).toUpperCase() + text.slice(1) + (random() < 0.2 ? "?" : ".")
}

export const generateInputs = (count: number, seed: number): Array<MemoryRecord.MemoryWriteInput> => {
  const random = prng(seed)
  return Array.from({ length: count }, (_, i) => {
    const scopeRoll = random()
    const scope = scopeRoll < 0.5
      ? "global"
      : scopeRoll < 0.85
      ? `project:p${Math.floor(random() * 10)}`
      : `session:s${Math.floor(random() * 50)}`
    const sentences = 1 + Math.floor(random() * 3)
    const content = Array.from({ length: sentences }, () => sentence(random)).join(" ")
    return {
      id: `bench-${String(i).padStart(7, "0")}`,
      content,
      kind: KINDS[Math.floor(random() * KINDS.length)]!,
      ...(random() < 0.3 ? { label: DOMAIN[Math.floor(random() * DOMAIN.length)]! } : {}),
      tags: random() < 0.5 ? [TAGS[Math.floor(random() * TAGS.length)]!] : [],
      sourceType: SOURCES[Math.floor(random() * SOURCES.length)]!,
      scope,
      deliveryPolicy: random() < 0.05 ? "always" : random() < 0.1 ? "on_demand" : "retrieved"
    }
  })
}

/** Search texts: one to three words, a third frequent, a third mid-range, a third rare. */
export const generateQueries = (count: number, seed: number): Array<string> => {
  const random = prng(seed)
  return Array.from({ length: count }, (_, i) => {
    const words = 1 + Math.floor(random() * 3)
    const band = i % 3
    return Array.from({ length: words }, () => {
      const rank = band === 0
        ? Math.floor(random() * 100)
        : band === 1
        ? 100 + Math.floor(random() * 900)
        : 1_000 + Math.floor(random() * (VOCABULARY.length - 1_000))
      return VOCABULARY[rank]!
    }).join(" ")
  })
}

const LIST_FILTERS = [
  { scopes: ["project:p3"], limit: 20 },
  { scopes: ["global", "session:s7"], deliverable: true, limit: 20 },
  { kinds: ["fact", "decision"], limit: 20 },
  { deliveryPolicies: ["always"], deliverable: true, limit: 20 }
] as const

// ---------------------------------------------------------------------------------------------
// Measuring

const percentile = (samples: ReadonlyArray<number>, p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN
}

const WRITE_BATCH = 1_000
const SEARCH_LIMIT = 20

/**
 * A floor to hold a backend's search against: the same query run natively on the same data.
 * `search` runs one query and returns its row count.
 */
export interface SearchFloor {
  readonly search: (query: string) => number | Promise<number>
  readonly close: () => void | Promise<void>
}

/**
 * What one backend measured on one data set. Search times of the floor, when there is one, were
 * taken query by query alternately with the backend's, so both saw the same machine load.
 */
export interface BackendFigures {
  readonly backend: string
  readonly records: number
  /** Wall-clock throughput of the batched writes. */
  readonly writesPerSecond: number
  /** The same, over the process's CPU time: what the writes cost regardless of machine load. */
  readonly writesPerCpuSecond: number
  readonly searchP50: number
  readonly searchP95: number
  readonly listP50: number
  readonly meanHits: number
  readonly floor: { readonly searchP50: number; readonly searchP95: number; readonly meanHits: number } | undefined
}

const cpuMillis = () => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const start = performance.now()
    const value = yield* effect
    return [performance.now() - start, value] as const
  })

/**
 * Writes the inputs in batches, then runs every query and list filter (after a warm-up round)
 * through the `MemoryStore` interface only. `floor`, opened once the data is written, is timed on
 * the same queries, alternating with the backend.
 */
export const benchBackend = <E>(
  backend: string,
  layer: Layer.Layer<MemoryStore.MemoryStore, E>,
  inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>,
  queries: ReadonlyArray<string>,
  floor?: () => SearchFloor | Promise<SearchFloor>
): Promise<BackendFigures> =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    let writing = 0
    const cpuStart = cpuMillis()
    for (let i = 0; i < inputs.length; i += WRITE_BATCH) {
      const [ms] = yield* timed(store.write(inputs.slice(i, i + WRITE_BATCH)))
      writing += ms
    }
    const writingCpu = cpuMillis() - cpuStart

    const reference = floor === undefined ? undefined : yield* Effect.promise(async () => floor())
    const floorSearch = (query: string) => Effect.promise(async () => reference!.search(query))
    for (const query of queries.slice(0, 20)) {
      yield* store.search(query, { limit: SEARCH_LIMIT })
      if (reference !== undefined) yield* floorSearch(query)
    }
    const searches: Array<number> = []
    const floorSearches: Array<number> = []
    let hits = 0
    let floorHits = 0
    for (const query of queries) {
      const [ms, result] = yield* timed(store.search(query, { limit: SEARCH_LIMIT }))
      searches.push(ms)
      hits += result.hits.length
      if (reference !== undefined) {
        const [floorMs, count] = yield* timed(floorSearch(query))
        floorSearches.push(floorMs)
        floorHits += count
      }
    }
    if (reference !== undefined) yield* Effect.promise(async () => reference.close())

    const lists: Array<number> = []
    for (let round = 0; round < 51; round++) {
      for (const filter of LIST_FILTERS) {
        const [ms] = yield* timed(store.list(filter))
        if (round > 0) lists.push(ms)
      }
    }
    return {
      backend,
      records: inputs.length,
      writesPerSecond: inputs.length / (writing / 1000),
      writesPerCpuSecond: inputs.length / (writingCpu / 1000),
      searchP50: percentile(searches, 50),
      searchP95: percentile(searches, 95),
      listP50: percentile(lists, 50),
      meanHits: hits / queries.length,
      floor: reference === undefined ? undefined : {
        searchP50: percentile(floorSearches, 50),
        searchP95: percentile(floorSearches, 95),
        meanHits: floorHits / queries.length
      }
    }
  }).pipe(
    Effect.provide(layer),
    Effect.provide(IdGenerator.sequential("bench")),
    Logger.withMinimumLogLevel(LogLevel.Warning),
    Effect.runPromise
  )

/**
 * The SQLite floor: the store's search as a hand-written FTS5 query through better-sqlite3 on the
 * same file — same MATCH expression, same join and default filter, rows fetched, nothing decoded.
 */
const sqliteFloor = (filename: string) => (): SearchFloor => {
  const db = new Database(filename, { readonly: true })
  const statement = db.prepare(
    `SELECT m.id, m.content, m.kind, m.label, m.tags, m.source_type, m.scope, m.delivery_policy, m.review_state,
       m.created_at, m.epoch, m.expires_at, m.invalidated_at, m.invalidation_reason, m.superseded_by, m.supersedes,
       m.domain, -bm25(engram_memories_fts) AS score
     FROM engram_memories_fts JOIN engram_memories m ON m.seq = engram_memories_fts.rowid
     WHERE engram_memories_fts MATCH ? AND m.invalidated_at IS NULL
     ORDER BY score DESC LIMIT ${SEARCH_LIMIT}`
  )
  return {
    search: (query) => {
      const tokens = SearchTokenizer.distinctTokens(query)
      return tokens.length === 0 ? 0 : statement.all(tokens.map((token) => `"${token}"`).join(" OR ")).length
    },
    close: () => {
      db.close()
    }
  }
}

/**
 * The PostgreSQL floor: the store's own search statement (same `tsquery`, join-free table scan
 * of the GIN index, default filter, rank order) sent as plain SQL on its own connection.
 */
const pgFloor = (url: string, schema: string) => async (): Promise<SearchFloor> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(EngramPg.layerClient({ url, schema, maxConnections: 1 }), scope)
  )
  const sql = Context.get(context, SqlClient.SqlClient)
  // Untimed, once the data is written: what autovacuum does within a minute of a bulk load
  // (planner statistics, the GIN pending list merged). Without it the first minute's plans are
  // measured — a listing at 100k records then sorts half the table instead of walking an index.
  await Effect.runPromise(sql.unsafe("VACUUM (ANALYZE) engram_memories"))
  const statement = `SELECT id, content, kind, label, tags, source_type, scope, delivery_policy, review_state,
      created_at, epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain,
      ts_rank(search_vector, q.query) AS score
    FROM engram_memories, CAST($1 AS tsquery) AS q(query)
    WHERE search_vector @@ q.query AND invalidated_at IS NULL
    ORDER BY score DESC, created_at DESC, id ASC LIMIT ${SEARCH_LIMIT}`
  return {
    search: async (query) => {
      const tokens = SearchTokenizer.distinctTokens(query)
      if (tokens.length === 0) return 0
      const rows = await Effect.runPromise(sql.unsafe(statement, [tokens.map((t) => `'${t}'`).join(" | ")]))
      return rows.length
    },
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Drops a benchmark schema and everything in it. */
const dropPgSchema = (url: string, schema: string): Promise<void> =>
  Effect.runPromise(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)).pipe(
      Effect.provide(EngramPg.layerClient({ url, maxConnections: 1 })),
      Effect.asVoid
    )
  )

// ---------------------------------------------------------------------------------------------
// Running and printing

const option = (args: ReadonlyArray<string>, name: string): string | undefined => {
  const index = args.indexOf(name)
  return index >= 0 ? args[index + 1] : undefined
}

const fmt = (value: number, digits = 2) =>
  Number.isFinite(value) ? value.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "-"

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ")
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n")
}

/** The PostgreSQL URL of `--pg [url]`: the URL after the flag, else `ENGRAM_PG_URL`. */
const pgUrl = (args: ReadonlyArray<string>): string | undefined => {
  const index = args.indexOf("--pg")
  if (index < 0) return undefined
  const next = args[index + 1]
  const url = next !== undefined && !next.startsWith("--") ? next : process.env.ENGRAM_PG_URL
  if (url === undefined || url === "") throw new Error("--pg needs a postgres:// URL, after the flag or in ENGRAM_PG_URL")
  return url
}

const figuresRow = (figures: BackendFigures, floorName: string): Array<string> => [
  figures.records.toLocaleString("en-US"),
  figures.backend,
  fmt(figures.writesPerSecond, 0),
  fmt(figures.writesPerCpuSecond, 0),
  fmt(figures.searchP50, 3),
  fmt(figures.searchP95, 3),
  floorName,
  fmt(figures.floor?.searchP50 ?? Number.NaN, 3),
  fmt(figures.floor?.searchP95 ?? Number.NaN, 3),
  figures.floor === undefined ? "-" : `${fmt(figures.searchP50 / figures.floor.searchP50)}x`,
  fmt(figures.listP50, 3),
  fmt(figures.meanHits, 1)
]

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  const sizes = (option(args, "--sizes") ?? "10000,100000").split(",").map(Number)
  const queryCount = Number(option(args, "--queries") ?? "200")
  const pg = pgUrl(args)
  const queries = generateQueries(queryCount, 42)
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-"))
  const rows: Array<Array<string>> = []
  // Warm the JIT on a throwaway store, so the first size measures steady state like the others.
  await benchBackend("warm-up", SqliteMemoryStore.layer({ filename: ":memory:" }), generateInputs(5_000, 99), queries)
  try {
    for (const size of sizes) {
      const inputs = generateInputs(size, 1)
      const filename = NodePath.join(directory, `store-${size}.db`)
      process.stdout.write(`store bench: ${size.toLocaleString("en-US")} records, sqlite … `)
      const sqlite = await benchBackend(
        "sqlite",
        SqliteMemoryStore.layer({ filename }),
        inputs,
        queries,
        sqliteFloor(filename)
      )
      rows.push(figuresRow(sqlite, "FTS5 via better-sqlite3"))
      process.stdout.write("done\n")
      if (pg !== undefined) {
        process.stdout.write(`store bench: ${size.toLocaleString("en-US")} records, postgres … `)
        const schema = EngramPg.temporarySchemaName("engram_bench")
        try {
          const figures = await benchBackend(
            "postgres",
            PgMemoryStore.layer({ url: pg, schema }),
            inputs,
            queries,
            pgFloor(pg, schema)
          )
          rows.push(figuresRow(figures, "same SQL, plain"))
        } finally {
          await dropPgSchema(pg, schema)
        }
        process.stdout.write("done\n")
      }
    }
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
  console.log()
  console.log(table(
    [
      "records",
      "backend",
      "writes/s",
      "writes/CPU-s",
      "search p50 ms",
      "search p95 ms",
      "floor",
      "floor p50 ms",
      "floor p95 ms",
      "p50 ratio",
      "list p50 ms",
      "hits/query"
    ],
    rows
  ))
  const load = NodeOs.loadavg().map((n) => n.toFixed(2)).join(" ")
  console.log(
    `\n${queryCount} searches (limit ${SEARCH_LIMIT}, 1-3 words, frequent/mid/rare), each followed by the same ` +
      `query on the floor; ${LIST_FILTERS.length} list filters x 50 rounds; writes in batches of ${WRITE_BATCH}.` +
      `\nwrites/CPU-s counts this process's CPU time (not a database server's) instead of wall time. ` +
      `Load average: ${load} on ` +
      `${NodeOs.availableParallelism()} CPUs.` +
      "\nTargets: writes >= 20,000 records/s; search p50 within 1.5x of the raw FTS5 floor at 100k."
  )
}
