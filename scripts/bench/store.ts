/**
 * `npm run bench -- store [options]` — run with `--help` for them.
 *
 * For each size, on conversational records (`scripts/lib/conversation.ts`, a fixed seed):
 *
 * - **writes**: `MemoryStore.write` in batches of 1,000 into a fresh SQLite file, side by side with
 *   the raw floor — the same rows and FTS5 tokens inserted by better-sqlite3 with prepared
 *   multi-row INSERTs into the same layout, 1,000 rows per transaction — batch by batch, the order
 *   swapped every batch.
 * - **cold open**: building the store on the written file and answering the first question.
 * - **search**: question-shaped queries (about ten distinct tokens, stopwords included, with the
 *   runtime's scope filter `global` + `project:p3`, deliverable only, limit 20) and short
 *   queries (1–3 words, no filter), each timed side by side — interleaved, engine order rotated per
 *   query — on `MemoryStore.search` (SQLite; `layerMemory` with `--memory`; PostgreSQL with
 *   `--pg`) and two floors of the same shape on the same file:
 *     - naive: FTS5 MATCH of all tokens OR-joined, `ORDER BY rank LIMIT 20`, then the 20 rows read;
 *     - pruned: the same without the tokens held by more than 5% of the records;
 *     - SQLite BM25 floor (`bm25Floor`, decision 0204): the store's own ranking — the planner's
 *       tokens at its share, its weights, the same filters — in one statement, without the
 *       conversation context: the like-for-like floor (same top k, as PostgreSQL's).
 *   For questions, hit@10 is the share whose evidence record is in an engine's top 10.
 * - **memory use**: the process's RSS and heap after loading, per size.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { IdGenerator, type MemoryRecord, MemoryStore, MemoryWrite, SearchTokenizer } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { MemoryRow } from "@engram/store-sql"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import {
  appendChart,
  collectGarbage,
  type Engine,
  fmt,
  interleave,
  machine,
  megabytes,
  mermaidBars,
  option,
  percentile,
  pgUrl,
  table,
  writeJson
} from "../lib/benchKit.js"
import { generateQuestions, generateShortQueries, generateTurns, type ScopeLayout } from "../lib/conversation.js"
import { bm25Floor, floorConnection, orQuery } from "../lib/ftsFloor.js"
import { pgFloor } from "../lib/pgFloor.js"

export const USAGE = `usage: npm run bench -- store [options]

  --sizes N,N,…     record counts (default 10000,100000; 1000000 takes minutes and ~2 GB)
  --queries N       queries per workload (default 300)
  --memory          also time layerMemory (the in-memory store) on the same data
  --pg [url]        also time PostgreSQL (url, or ENGRAM_PG_URL)
  --json FILE       write every figure as JSON
  --chart FILE      append Mermaid charts of the question-shaped p50s (for docs/benchmarks.md)
  --tenants         issue #39's scope layout: 10% global, one project scope per 1,000 records (default:
                    half global, ten projects, fifty sessions)
  --partitions N    with --pg: also time the same rows in a second schema whose memory table is hash-
                    partitioned by scope into N partitions (reads only: issue #39's layout check)
  --writes-only     time the writes (store and raw floor) and nothing else (e.g. under node --cpu-prof)
  --help            this text`

/** The scope filter the runtime passes on a project's turn. */
export const RUNTIME_SCOPES = ["global", "project:p3"]
const SEARCH_LIMIT = 20
/** The single-statement BM25 floor on PostgreSQL (`scripts/lib/pgFloor.ts`). */
const PG_FLOOR = "PostgreSQL BM25 floor"
/** SQLite's like-for-like floor (`bm25Floor`, decision 0204). */
const SQLITE_FLOOR = "SQLite BM25 floor"
const WRITE_BATCH = 1_000
/**
 * The pruned floor as issue #14 defines it: tokens held by more than 5% of the records dropped
 * (the planner's default; decision 0039 says why it stays there).
 */
const PRUNE_SHARE = 0.05

const quiet = Logger.withMinimumLogLevel(LogLevel.Warning)

/** Records as the store would write them (ids, timestamps stamped), prepared once per size. */
const prepare = (inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  Effect.runSync(
    MemoryWrite.prepareRecords(inputs).pipe(Effect.provide(IdGenerator.sequential("bench")), Effect.orDie)
  )

/** The store's own column list: the row's columns between its `seq` and its BM25 length. */
const columnList = ["seq", ...MemoryRow.COLUMNS, "search_length"]

/**
 * Raw inserts of the same rows into the same layout: the write floor. `write` inserts one batch in
 * one transaction and returns the milliseconds it took. Records are prepared (ids, timestamps)
 * outside the timing, a batch at a time, so a 1M-record run never holds a second copy of the data.
 */
const rawWriter = (filename: string) => {
  const db = new Database(filename)
  // The store's own connection settings (SqliteDatabase.make): WAL, and commits that do not
  // wait for the disk (synchronous = NORMAL). With SQLite's default (FULL) every raw commit would
  // also wait for an fsync the store's commits do not: a floor slower than the store's own layout.
  db.pragma("journal_mode = WAL")
  db.pragma("synchronous = NORMAL")
  db.pragma("cache_size = -65536") // and its page cache (decision 0104)
  db.pragma("foreign_keys = ON") // and its foreign-key checks (none apply to these tables; measured: no change)
  const rowTuple = `(${columnList.map(() => "?").join(",")})`
  const chunk = 500
  const insertRows = (n: number) =>
    db.prepare(`INSERT INTO engram_memories (${columnList.join(", ")}) VALUES ${new Array(n).fill(rowTuple).join(",")}`)
  const insertTokens = (n: number) =>
    db.prepare(`INSERT INTO engram_memories_fts (rowid, tokens) VALUES ${new Array(n).fill("(?,?)").join(",")}`)
  const fullRows = insertRows(chunk)
  const fullTokens = insertTokens(chunk)
  let seq = 1
  return {
    /** Milliseconds of the inserts, and of the preparing (outside the floor's time). */
    write: (
      inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>
    ): { readonly insert: number; readonly prepare: number } => {
      const prepared = performance.now()
      const records = prepare(inputs)
      const start = performance.now()
      db.transaction(() => {
        for (let j = 0; j < records.length; j += chunk) {
          const slice = records.slice(j, j + chunk)
          const values: Array<unknown> = []
          const tokens: Array<unknown> = []
          for (const record of slice) {
            const indexed = SearchTokenizer.tokenize(SearchTokenizer.searchableText(record))
            values.push(seq, ...MemoryRow.rowValues(record), new Set(indexed).size)
            tokens.push(seq, indexed.join(" "))
            seq++
          }
          ;(slice.length === chunk ? fullRows : insertRows(slice.length)).run(values)
          ;(slice.length === chunk ? fullTokens : insertTokens(slice.length)).run(tokens)
        }
      })()
      return { insert: performance.now() - start, prepare: start - prepared }
    },
    close: () => db.close()
  }
}

/**
 * Writes every input twice, batch by batch: through `MemoryStore.write` and as raw inserts, one
 * after the other with the order swapped every batch, so that drift in the machine's speed or the
 * heap's state over the run weighs on both alike. Returns records per second for each, and the
 * share of the store's time that preparing the records takes (`MemoryWrite.prepareRecords`:
 * decoding, the poisoning screen, ids — what the store does before its inserts, and the floor
 * does outside its timing).
 */
const writeSideBySide = async (
  runtime: StoreRuntime,
  rawFile: string,
  inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>
): Promise<{ readonly store: number; readonly raw: number; readonly prepareShare: number }> => {
  const raw = rawWriter(rawFile)
  const store = await runtime.runPromise(MemoryStore.MemoryStore)
  let storeMillis = 0
  let rawMillis = 0
  let prepareMillis = 0
  try {
    for (let i = 0; i < inputs.length; i += WRITE_BATCH) {
      const batch = inputs.slice(i, i + WRITE_BATCH)
      const timeStore = async () => {
        const start = performance.now()
        await runtime.runPromise(store.write(batch))
        storeMillis += performance.now() - start
      }
      if ((i / WRITE_BATCH) % 2 === 0) await timeStore()
      const timed = raw.write(batch)
      rawMillis += timed.insert
      prepareMillis += timed.prepare
      if ((i / WRITE_BATCH) % 2 === 1) await timeStore()
    }
  } finally {
    raw.close()
  }
  return {
    store: inputs.length / (storeMillis / 1000),
    raw: inputs.length / (rawMillis / 1000),
    prepareShare: prepareMillis / storeMillis
  }
}

/** An empty database with the store's layout (its migrations), for the raw floor. */
const emptyStoreFile = (filename: string) =>
  Effect.runPromise(
    Effect.asVoid(
      Effect.scoped(
        Layer.build(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))))
      )
    ).pipe(quiet)
  )

/**
 * The two FTS5 floors on one read-only connection: the top 20 by bm25 from the index alone, then
 * those rows read by primary key. `pruned` first drops the tokens held by more than 5% of the
 * records (document frequencies looked up once, outside the timing: the floor gets them free).
 */
const sqliteFloors = (filename: string) => {
  const connection = floorConnection(filename)
  const db = connection.db
  const top = db.prepare(
    `SELECT rowid AS seq FROM engram_memories_fts WHERE engram_memories_fts MATCH ? ORDER BY rank LIMIT ${SEARCH_LIMIT}`
  )
  const rows = db.prepare(
    `SELECT m.* FROM engram_memories m WHERE m.seq IN (SELECT value FROM json_each(?))`
  )
  const run = (tokens: ReadonlyArray<string>) => {
    if (tokens.length === 0) return Promise.resolve([])
    const seqs = (top.all(orQuery(tokens)) as Array<{ seq: number }>).map((r) => r.seq)
    const byId = new Map(
      (rows.all(JSON.stringify(seqs)) as Array<{ seq: number; id: string }>).map((r) => [r.seq, r.id])
    )
    return Promise.resolve(seqs.map((s) => byId.get(s)!))
  }
  return {
    prime: connection.prime,
    naive: { name: "FTS5 naive floor", search: (q: string) => run(SearchTokenizer.distinctTokens(q)) } satisfies Engine,
    pruned: {
      name: "FTS5 pruned floor",
      search: (q: string) => run(connection.selective(SearchTokenizer.distinctTokens(q), PRUNE_SHARE))
    } satisfies Engine,
    close: connection.close
  }
}

type StoreRuntime = ManagedRuntime.ManagedRuntime<MemoryStore.MemoryStore, unknown>

/** The memory table's columns a copy writes (all but the generated search vector). */
const copiedColumns = [...MemoryRow.COLUMNS, "search_tokens", "search_length"].join(", ")

/**
 * The rows of the store in `source` copied into a new schema whose memory table is hash-
 * partitioned by scope (`PARTITION BY HASH (scope)`, `partitions` partitions, every index local,
 * the primary key `(scope, id)` as a partitioned table requires), with the store's statistics
 * tables copied: PostgreSQL search and the floor on that layout. Reads only — a partitioned table
 * cannot enforce a unique id across scopes, which the store's writes rely on (docs/guides/scale.md).
 */
const partitionedCopy = async (url: string, source: string, partitions: number) => {
  const schema = PgDatabase.temporarySchemaName("engram_bench_part")
  const runtime = ManagedRuntime.make(
    PgEngram.layerStores().pipe(
      Layer.provideMerge(PgDatabase.layer({ url, schema, maxConnections: 2 })),
      Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
    )
  )
  await runtime.runPromise(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.forEach([
      "DROP TABLE engram_memories CASCADE",
      `CREATE TABLE engram_memories (LIKE "${source}".engram_memories INCLUDING DEFAULTS INCLUDING GENERATED)
        PARTITION BY HASH (scope)`,
      ...Array.from({ length: partitions }, (_, i) =>
        `CREATE TABLE engram_memories_${i} PARTITION OF engram_memories
          FOR VALUES WITH (MODULUS ${partitions}, REMAINDER ${i})`),
      `INSERT INTO engram_memories (${copiedColumns}) SELECT ${copiedColumns} FROM "${source}".engram_memories`,
      "ALTER TABLE engram_memories ADD PRIMARY KEY (scope, id)",
      "CREATE INDEX ON engram_memories (id)",
      "CREATE INDEX ON engram_memories (created_at DESC, id)",
      "CREATE INDEX ON engram_memories (scope, created_at DESC, id)",
      "CREATE INDEX ON engram_memories USING GIN (search_vector) WITH (gin_pending_list_limit = 256)",
      "CREATE INDEX ON engram_memories (thread, turn) WHERE thread IS NOT NULL",
      "CREATE INDEX ON engram_memories (scope, created_at DESC, id) WHERE delivery_policy = 'always'",
      "DELETE FROM engram_memory_totals",
      "DELETE FROM engram_memory_frequencies",
      `INSERT INTO engram_memory_totals SELECT * FROM "${source}".engram_memory_totals`,
      `INSERT INTO engram_memory_frequencies SELECT * FROM "${source}".engram_memory_frequencies`,
      "VACUUM (ANALYZE) engram_memories"
    ], (statement) =>
      sql.unsafe(statement), { discard: true })))
  const floor = pgFloor((effect) => runtime.runPromise(effect))
  return {
    filtered: storeEngine(`PostgreSQL search, ${partitions} partitions`, runtime, true),
    plain: storeEngine(`PostgreSQL search, ${partitions} partitions`, runtime, false),
    floor,
    floorEngines: {
      filtered: {
        name: `PostgreSQL BM25 floor, ${partitions} partitions`,
        search: (q: string) => floor.search(q, SEARCH_LIMIT, RUNTIME_SCOPES)
      },
      plain: {
        name: `PostgreSQL BM25 floor, ${partitions} partitions`,
        search: (q: string) => floor.search(q, SEARCH_LIMIT, undefined)
      }
    },
    dispose: async () => {
      await runtime.runPromise(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
      )
      await runtime.dispose()
    }
  }
}

const storeEngine = (name: string, runtime: StoreRuntime, filtered: boolean): Engine => ({
  name,
  search: (query) =>
    runtime.runPromise(
      Effect.map(
        Effect.flatMap(MemoryStore.MemoryStore, (store) =>
          store.search(
            query,
            filtered ? { scopes: RUNTIME_SCOPES, deliverable: true, limit: SEARCH_LIMIT } : { limit: SEARCH_LIMIT }
          )),
        (result) => result.hits.map((hit) => hit.record.id)
      )
    )
})

const writeAll = (runtime: StoreRuntime, inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput>) =>
  runtime.runPromise(Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    for (let i = 0; i < inputs.length; i += WRITE_BATCH) yield* store.write(inputs.slice(i, i + WRITE_BATCH))
  }))

interface WorkloadFigures {
  readonly workload: "question" | "short" | "unscoped"
  readonly engines: ReadonlyArray<{
    readonly name: string
    readonly p50: number
    readonly p95: number
    readonly hitAt10: number | undefined
  }>
}

interface SizeFigures {
  readonly records: number
  readonly writesPerSecond: number
  readonly rawWritesPerSecond: number
  /** The share of the store's write time that `MemoryWrite.prepareRecords` takes (0–1). */
  readonly prepareShare: number
  readonly coldOpenMs: number
  readonly rssMb: number
  readonly heapMb: number
  readonly memoryStoreHeapMb: number | undefined
  readonly workloads: ReadonlyArray<WorkloadFigures>
  readonly load: string
}

const summarize = (
  workload: WorkloadFigures["workload"],
  timings: Awaited<ReturnType<typeof interleave>>,
  evidence: ReadonlyArray<string> | undefined
): WorkloadFigures => ({
  workload,
  engines: timings.map((t) => ({
    name: t.name,
    p50: percentile(t.samples, 50),
    p95: percentile(t.samples, 95),
    hitAt10: evidence === undefined
      ? undefined
      : t.results.filter((ids, i) => ids.slice(0, 10).includes(evidence[i]!)).length / t.results.length
  }))
})

const benchSize = async (
  size: number,
  queryCount: number,
  directory: string,
  withMemory: boolean,
  pg: string | undefined,
  writesOnly = false,
  layout: ScopeLayout = "mixed",
  partitions = 0
): Promise<SizeFigures> => {
  // The generated turns are dropped once the questions are drawn, the inputs once every engine
  // is loaded, so the memory figures are the stores', not the generator's.
  const data = (() => {
    const turns = generateTurns(size, 1, layout)
    return {
      inputs: turns.map((t) => t.input),
      questions: generateQuestions(turns, queryCount, 42, RUNTIME_SCOPES)
    }
  })()
  let inputs: ReadonlyArray<MemoryRecord.MemoryWriteInput> = data.inputs
  const questions = data.questions
  data.inputs = []
  const shorts = generateShortQueries(queryCount, 43)

  // Writes: the store and the raw floor side by side, batch by batch, in this run.
  const rawFile = NodePath.join(directory, `raw-${size}.db`)
  await emptyStoreFile(rawFile)
  const filename = NodePath.join(directory, `store-${size}.db`)
  const writer = ManagedRuntime.make(
    Layer.provide(
      SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
      Logger.minimumLogLevel(LogLevel.Warning)
    )
  )
  const { prepareShare, raw: rawWritesPerSecond, store: writesPerSecond } = await writeSideBySide(
    writer,
    rawFile,
    inputs
  )
  NodeFs.rmSync(rawFile, { force: true })
  await writer.dispose()
  if (writesOnly) {
    const memoryUse = process.memoryUsage()
    return {
      records: size,
      writesPerSecond,
      rawWritesPerSecond,
      prepareShare,
      coldOpenMs: Number.NaN,
      rssMb: megabytes(memoryUse.rss),
      heapMb: megabytes(memoryUse.heapUsed),
      memoryStoreHeapMb: undefined,
      workloads: [],
      load: machine()
    }
  }

  // Cold open: a new connection on the written file, migrations checked, first question answered.
  const coldStart = performance.now()
  const sqlite = ManagedRuntime.make(
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename })))
  )
  await storeEngine("cold", sqlite, true).search(questions[0]!.text)
  const coldOpenMs = performance.now() - coldStart

  const floors = sqliteFloors(filename)
  floors.prime([...questions.map((q) => q.text), ...shorts])
  const bm25 = bm25Floor(filename)
  bm25.prime([...questions.map((q) => q.text), ...shorts])
  const bm25Scoped: Engine = { name: SQLITE_FLOOR, search: (q) => bm25.search(q, SEARCH_LIMIT, RUNTIME_SCOPES) }
  const bm25Plain: Engine = { name: SQLITE_FLOOR, search: (q) => bm25.search(q, SEARCH_LIMIT, undefined) }
  let memoryStoreHeapMb: number | undefined
  const extra: Array<{ filtered: Engine; plain: Engine; dispose: () => Promise<void> }> = []
  if (withMemory) {
    const before = process.memoryUsage().heapUsed
    const memory = ManagedRuntime.make(Layer.merge(MemoryStore.layerMemory, IdGenerator.sequential("bench")))
    await writeAll(memory, inputs)
    memoryStoreHeapMb = megabytes(process.memoryUsage().heapUsed - before)
    extra.push({
      filtered: storeEngine("layerMemory search", memory, true),
      plain: storeEngine("layerMemory search", memory, false),
      dispose: () => memory.dispose()
    })
  }
  if (pg !== undefined) {
    const schema = PgDatabase.temporarySchemaName("engram_bench")
    const postgres = ManagedRuntime.make(
      PgEngram.layerStores().pipe(
        Layer.provideMerge(PgDatabase.layer({ url: pg, schema, maxConnections: 2 })),
        Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
      )
    )
    await writeAll(postgres, inputs)
    // What autovacuum does within a minute of a bulk load: statistics for the planner (ours too).
    await postgres.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe("VACUUM (ANALYZE) engram_memories"))
    )
    if (partitions > 0) {
      const copy = await partitionedCopy(pg, schema, partitions)
      await copy.floor.prime([...questions.map((q) => q.text), ...shorts])
      extra.push({ filtered: copy.filtered, plain: copy.plain, dispose: () => Promise.resolve() })
      extra.push({ ...copy.floorEngines, dispose: copy.dispose })
    }
    const floor = pgFloor((effect) => postgres.runPromise(effect))
    await floor.prime([...questions.map((q) => q.text), ...shorts])
    extra.push({
      filtered: storeEngine("PostgreSQL search", postgres, true),
      plain: storeEngine("PostgreSQL search", postgres, false),
      dispose: () => Promise.resolve()
    })
    extra.push({
      filtered: { name: PG_FLOOR, search: (q) => floor.search(q, SEARCH_LIMIT, RUNTIME_SCOPES) },
      plain: { name: PG_FLOOR, search: (q) => floor.search(q, SEARCH_LIMIT, undefined) },
      dispose: async () => {
        await postgres.runPromise(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`))
        )
        await postgres.dispose()
      }
    })
  }
  inputs = []
  collectGarbage()
  const memoryUse = process.memoryUsage()

  const question = await interleave(
    [
      storeEngine("SQLite search", sqlite, true),
      floors.naive,
      floors.pruned,
      bm25Scoped,
      ...extra.map((e) => e.filtered)
    ],
    questions.map((q) => q.text)
  )
  const short = await interleave(
    [storeEngine("SQLite search", sqlite, false), floors.naive, floors.pruned, bm25Plain, ...extra.map((e) => e.plain)],
    shorts
  )
  const unscoped = await interleave(
    [storeEngine("SQLite search", sqlite, false), floors.naive, floors.pruned, bm25Plain, ...extra.map((e) => e.plain)],
    questions.map((q) => q.text)
  )
  floors.close()
  bm25.close()
  await sqlite.dispose()
  for (const e of extra) await e.dispose()
  return {
    records: size,
    writesPerSecond,
    rawWritesPerSecond,
    prepareShare,
    coldOpenMs,
    rssMb: megabytes(memoryUse.rss),
    heapMb: megabytes(memoryUse.heapUsed),
    memoryStoreHeapMb,
    workloads: [
      summarize("question", question, questions.map((q) => q.evidence)),
      summarize("short", short, undefined),
      summarize("unscoped", unscoped, questions.map((q) => q.evidence))
    ],
    load: machine()
  }
}

const print = (figures: SizeFigures) => {
  const n = figures.records.toLocaleString("en-US")
  if (figures.workloads.length === 0) {
    console.log(
      `\n${n} records — writes ${fmt(figures.writesPerSecond, 0)}/s vs raw floor ${
        fmt(figures.rawWritesPerSecond, 0)
      }/s ` +
        `(${fmt((100 * figures.writesPerSecond) / figures.rawWritesPerSecond, 0)}%; preparing the records ` +
        `${fmt(100 * figures.prepareShare, 0)}% of the store's time); ${figures.load}`
    )
    return
  }
  console.log(
    `\n${n} records — writes ${fmt(figures.writesPerSecond, 0)}/s vs raw floor ${
      fmt(figures.rawWritesPerSecond, 0)
    }/s ` +
      `(${fmt((100 * figures.writesPerSecond) / figures.rawWritesPerSecond, 0)}%; preparing the records ` +
      `${fmt(100 * figures.prepareShare, 0)}% of the store's time); cold open + first question ` +
      `${fmt(figures.coldOpenMs, 1)} ms; RSS ${fmt(figures.rssMb, 0)} MB, heap ${fmt(figures.heapMb, 0)} MB` +
      (figures.memoryStoreHeapMb === undefined ? "" : ` (layerMemory ~${fmt(figures.memoryStoreHeapMb, 0)} MB of it)`) +
      `; ${figures.load}`
  )
  for (const w of figures.workloads) {
    const naive = w.engines.find((e) => e.name === "FTS5 naive floor")!
    const pgFloorTiming = w.engines.find((e) => e.name === PG_FLOOR)
    const pruned = w.engines.find((e) => e.name === "FTS5 pruned floor")!
    const sqliteFloor = w.engines.find((e) => e.name === SQLITE_FLOOR)!
    console.log(
      `\n${
        w.workload === "question"
          ? "question-shaped (scope global+project:p3, deliverable)"
          : w.workload === "short"
          ? "short queries"
          : "question-shaped, unscoped"
      }`
    )
    console.log(table(
      [
        "engine",
        "p50 ms",
        "p95 ms",
        "vs naive",
        "vs pruned",
        "vs SQLite BM25 floor",
        ...(pgFloorTiming === undefined ? [] : ["vs PG floor"]),
        ...(w.workload === "short" ? [] : ["hit@10"])
      ],
      w.engines.map((e) => [
        e.name,
        fmt(e.p50, 3),
        fmt(e.p95, 3),
        `${fmt(e.p50 / naive.p50)}x`,
        `${fmt(e.p50 / pruned.p50)}x`,
        `${fmt(e.p50 / sqliteFloor.p50)}x`,
        ...(pgFloorTiming === undefined ? [] : [`${fmt(e.p50 / pgFloorTiming.p50)}x`]),
        ...(e.hitAt10 === undefined ? [] : [`${fmt(100 * e.hitAt10, 1)}%`])
      ])
    ))
  }
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const sizes = (option(args, "--sizes") ?? "10000,100000").split(",").map(Number)
  const queryCount = Number(option(args, "--queries") ?? "300")
  const pg = pgUrl(args)
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-"))
  const all: Array<SizeFigures> = []
  try {
    // Warm the JIT on a small size first, so the first real size measures steady state.
    const writesOnly = args.includes("--writes-only")
    // In a directory of its own: its files are named by size, like the measured sizes' files.
    const warmUp = NodePath.join(directory, "warm-up")
    NodeFs.mkdirSync(warmUp)
    await benchSize(2_000, 60, warmUp, args.includes("--memory") && !writesOnly, undefined, writesOnly)
    for (const size of sizes) {
      process.stdout.write(`store bench: ${size.toLocaleString("en-US")} records … `)
      const figures = await benchSize(
        size,
        queryCount,
        directory,
        args.includes("--memory"),
        pg,
        writesOnly,
        args.includes("--tenants") ? "tenants" : "mixed",
        Number(option(args, "--partitions") ?? "0")
      )
      process.stdout.write("done\n")
      print(figures)
      all.push(figures)
      // Written after every size, so a long run's figures survive an interrupted last size.
      writeJson(option(args, "--json"), { bench: "store", sizes: all })
    }
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
  console.log(
    `\n${queryCount} queries per workload, limit ${SEARCH_LIMIT}, interleaved with the engine order rotated per query ` +
      `after ${20} warm-up queries. Floors: FTS5 top-${SEARCH_LIMIT} by bm25 from the index, then those rows read; ` +
      `"pruned" drops tokens held by > ${PRUNE_SHARE * 100}% of records; the FTS5 floors apply no scope filter. ` +
      `"SQLite BM25 floor": the store's own ranking (planner's tokens and weights, same filters) in one ` +
      `statement, without the conversation context.`
  )
  const chart = option(args, "--chart")
  for (const f of all) {
    const question = f.workloads.find((w) => w.workload === "question")
    if (question === undefined) continue
    appendChart(
      chart,
      mermaidBars(
        `Question-shaped search p50, ${f.records.toLocaleString("en-US")} records (ms)`,
        "ms",
        question.engines.map((e) => [e.name.replace(" search", "").replace(" floor", ""), e.p50] as const)
      )
    )
  }
}
