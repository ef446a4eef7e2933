import type * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import type * as Migrator from "@effect/sql/Migrator"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import type * as Statement from "@effect/sql/Statement"
import {
  Bm25,
  type Embeddings,
  MemoryForget,
  MemoryQuery,
  type MemoryRecord,
  MemoryStore,
  MemoryStoreError,
  MemoryWrite,
  type PromotionStore,
  SearchPlan,
  SearchTokenizer,
  type TelemetryStore,
  VectorIndex
} from "@engram/core"
import { IndexLanguage, MemoryRow, NeighbourWindow, StoredRows } from "@engram/store-sql"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import * as Option from "effect/Option"
import { coverageGap } from "./integrity.js"
import {
  FTS_TABLE,
  META_TABLE,
  migrations,
  MIGRATIONS_TABLE,
  rowOf,
  SEARCH_ROWS_INDEX,
  selectColumns,
  TABLE,
  WRITE_ORDER_TABLE
} from "./memoryTable.js"
import { runMigrations } from "./migrations.js"
import { readNeighbours } from "./neighbourRead.js"
import { syncSearchIndex } from "./reindex.js"
import {
  ftsInsertSql,
  indexedTokens,
  makeFrequencies,
  removeFromIndex,
  searchLength,
  tierExpression
} from "./searchIndex.js"
import * as SearchTotals from "./searchTotals.js"
import { filterClauses } from "./sqlFilters.js"
import { causeOf, isDamaged, isFull } from "./sqliteErrors.js"
import * as SqliteVectorIndex from "./sqliteVectorIndex.js"
import { chunksOf, multiRowInsert } from "./sqlText.js"
import {
  migrateTombstones,
  TOMBSTONE_COLUMNS,
  TOMBSTONE_MIGRATIONS,
  TOMBSTONE_MIGRATIONS_TABLE,
  TOMBSTONE_TABLE
} from "./tombstoneTable.js"

type Row = Record<string, unknown>

/** Rows per multi-row INSERT: 18 binds a row stays far below SQLite's 32,766-variable limit. */
const INSERT_CHUNK = 500
/** Rows a ranked search reads past the ones it still wants, to stand in for rows that fail to decode. */
const SPARE_ROWS = 4
/**
 * The connection's page cache, as SQLite's negative `cache_size` (KiB): 64 MiB, allocated only as
 * pages are read (decision 0104).
 */
export const PAGE_CACHE_KIB = -65_536
/** Ids per `IN (…)` lookup. */
const LOOKUP_CHUNK = 500

const insertRows = multiRowInsert(TABLE, [...MemoryRow.COLUMNS, "search_length", "write_turn"])
/**
 * The multi-row INSERT of `n` records: SQLite numbers each row (`seq`, the largest so far plus
 * one) and says which record got which, so the index rows need no look-up of their own.
 */
const insertSql = (rows: number) => `${insertRows(rows)} RETURNING seq, id`
const tombstoneInsertSql = multiRowInsert(TOMBSTONE_TABLE, TOMBSTONE_COLUMNS)

/** A stored row's conversation position, when both columns hold one (a bad row's are ignored). */
const positionOf = (thread: unknown, turn: unknown): MemoryRecord.ConversationPosition | undefined =>
  typeof thread === "string" && typeof turn === "number" ? { thread, turn } : undefined

/** The SQLite result code better-sqlite3 attached to a failure, e.g. `SQLITE_CONSTRAINT_UNIQUE`. */
const sqliteCode = (error: SqlError): unknown =>
  typeof error.cause === "object" && error.cause !== null && "code" in error.cause ? error.cause.code : undefined

type SkippedRow = StoredRows.Skipped<string>

const skippedRows = Metric.tagged(MemoryStore.rowsSkipped, "backend", "sqlite")

const reportSkipped = (operation: string, skipped: ReadonlyArray<SkippedRow>): Effect.Effect<void> =>
  StoredRows.reportSkipped(
    skipped,
    "skipped a stored memory row that failed to decode",
    ({ key, reason }) => ({ operation, memoryId: key, reason }),
    skippedRows
  )

const unreadable = (operation: string, id: string, reason: string) =>
  new MemoryStoreError.MemoryStoreFailure({
    operation,
    cause: new Error(`stored memory "${id}" cannot be read (${reason}); repair or remove the row`)
  })

/**
 * Maps a SQL failure to the store's typed failure, at the service boundary, keeping the driver's
 * own explanation ("no such table", "database is locked") in the message.
 */
const toFailure = (operation: string) => (error: SqlError) => {
  const detail = error.cause instanceof Error ? error.cause.message : undefined
  const damaged = isDamaged(error)
    ? "; the database file is damaged: run `engram doctor` for a full check, and `engram doctor --repair` " +
      "to rebuild the search index from the records"
    : ""
  const message = (detail === undefined ? error.message : `${error.message.trim()}: ${detail}`) + damaged
  return Effect.fail(
    new MemoryStoreError.MemoryStoreFailure({
      operation,
      cause: isFull(error) ? causeOf(error, message) : new Error(message, { cause: error })
    })
  )
}

/**
 * The ranked statement's middle, after `s` (each filtered match's own score and conversation
 * position): `f`, each match with its contextual bound `u` (`Bm25.bound`) and, with the context
 * on, its neighbours' scores `n0…` in `Bm25.neighbourOffsets` order, read through the window both
 * stores share (`NeighbourWindow`); only positioned matches are joined to it. Numbers only: safe
 * as SQL text.
 */
const rankedSql = (offsets: ReadonlyArray<number>, weight: number): string => {
  if (offsets.length === 0) return "f AS (SELECT s.*, s.score AS u FROM s)"
  const { columns, ctes, none, sum } = NeighbourWindow.windowSql(offsets)
  return `${ctes},
    f AS (
      SELECT s.*, ${none}, s.score AS u FROM s WHERE s.thread IS NULL
      UNION ALL
      SELECT s.*, ${columns}, s.score + ${weight} * (${sum}) AS u
      FROM s JOIN x ON x.scope = s.scope AND x.thread = s.thread AND x.turn = s.turn)`
}

/**
 * The ranked statement's leading columns: own score, thread, turn, the tier's match count, and
 * whether the row came from the capped band (see `searchTier`).
 */
const RANKED_COLUMNS = 5
const CAPPED = 4
const ID = MemoryRow.COLUMNS.indexOf("id")
const SCOPE = MemoryRow.COLUMNS.indexOf("scope")
const CREATED_AT = MemoryRow.COLUMNS.indexOf("created_at")

/** The ranked tier's statement for a bound `k`, and how its rows are laid out. */
interface RankedStatement {
  readonly bounded: (k: number) => Statement.Statement<Row>
  readonly width: number
  readonly offsets: ReadonlyArray<number>
}

/** A search's plan, fixed at its first take: its tiers' statements and its ranking parameters. */
interface Opened {
  readonly ranked: RankedStatement | undefined
  readonly tail: Statement.Fragment | undefined
  readonly parameters: Bm25.Parameters
}

/** A ranked match as the statement returned it. */
interface RankedMatch extends Bm25.Match {
  readonly values: ReadonlyArray<unknown>
  readonly id: string
}

/** One run of the ranked statement: its bound, rows and match count, candidates ranked, each decoded once. */
interface Ranking {
  readonly k: number
  readonly rows: number
  readonly total: number
  readonly candidates: ReadonlyArray<{ readonly match: RankedMatch; readonly score: number }>
  readonly decoded: Array<Either.Either<MemoryRecord.MemoryRecord, string>>
}

/** A tail row read: its record, or what kept it from decoding. */
type TailRow = MemoryRecord.MemoryRecord | (SkippedRow & { readonly seq: number })

/** Runs the store's migrations (idempotent), in their own migrations table. */
export const migrate = runMigrations(MIGRATIONS_TABLE, migrations)

/**
 * True when every migration is applied: opening the store then runs no DDL, so a read-only file
 * opens and readers never take the write lock (with an index that is current, it writes nothing).
 */
const migrationsCurrent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [applied] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(MIGRATIONS_TABLE)}`
  const [tombstones] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(TOMBSTONE_MIGRATIONS_TABLE)}`
  return applied?.n === Object.keys(migrations).length && tombstones?.n === TOMBSTONE_MIGRATIONS
}).pipe(Effect.orElseSucceed(() => false))

/** The lexical SQLite memory store over the ambient SQL client, in its language. Migrates first. */
const makeLexical = (given: SearchTokenizer.Language | undefined): Effect.Effect<
  MemoryStore.Service,
  SqlError | Migrator.MigrationError | MemoryStoreError.MemoryStoreFailure | SearchTokenizer.LanguageMismatch,
  SqlClient.SqlClient | SqliteClient.SqliteClient | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore
> =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // forget reaches the promotion rows and telemetry of the same database (decision 0164).
    const cascade = yield* MemoryForget.cascade
    // A search reads every match's row by its key; with SQLite's default 2 MB page cache a store past
    // ~10,000 records reads most of them through the OS on every query (decision 0104).
    yield* sql.unsafe(`PRAGMA cache_size = ${PAGE_CACHE_KIB}`)
    if (!(yield* migrationsCurrent)) {
      yield* migrate
      yield* migrateTombstones
    }
    // The language the index was built in, or the one asked for a store that records none (0196).
    const { language, recorded } = yield* IndexLanguage.open(META_TABLE, given)
    if (!IndexLanguage.isCurrent(recorded, language)) yield* syncSearchIndex(language)

    const columns = sql.literal(selectColumns("m"))

    // Whether the search index covers every record, checked once, at the first search (two counts:
    // milliseconds at 100,000 records). An index that lost rows would answer with a silent partial result.
    const indexGap = yield* Effect.cached(coverageGap(sql))

    const frequencies = makeFrequencies(sql)

    const findDuplicate = (records: ReadonlyArray<MemoryRecord.MemoryRecord>, error: SqlError) =>
      Effect.gen(function*() {
        const stored = new Set<string>()
        for (const chunk of chunksOf(records.map((r) => r.id), LOOKUP_CHUNK)) {
          const rows = yield* sql<{ id: string }>`SELECT id FROM ${sql(TABLE)} WHERE ${sql.in("id", chunk)}`
          for (const row of rows) stored.add(row.id)
        }
        const taken = records.find((r) => stored.has(r.id))
        return yield* taken === undefined
          ? Effect.fail(error)
          : Effect.fail(new MemoryStoreError.DuplicateMemoryId({ id: taken.id }))
      })

    /**
     * Each record's place in its scope's write order (decision 0233), `null` for a record that
     * takes none (`MemoryQuery.writePlaces`): one step of each scope's counter row per write,
     * places given in item order.
     */
    const writeTurns = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
      MemoryQuery.writePlaces(records, (scope, count) =>
        Effect.map(
          sql<{ next: number }>`INSERT INTO ${sql(WRITE_ORDER_TABLE)} (scope, next)
            VALUES (${scope}, ${count})
            ON CONFLICT (scope) DO UPDATE SET next = ${sql(WRITE_ORDER_TABLE)}.next + excluded.next
            RETURNING next`,
          ([row]) => row!.next
        ))

    /** Inserts records and their index rows in one transaction (a savepoint when nested). */
    const insertRecords = (
      records: ReadonlyArray<MemoryRecord.MemoryRecord>
    ): Effect.Effect<void, MemoryStoreError.DuplicateMemoryId | SqlError> =>
      records.length === 0 ? Effect.void : sql.withTransaction(Effect.gen(function*() {
        let lengths = 0
        const turns = yield* writeTurns(records)
        let item = 0
        for (const chunk of chunksOf(records, INSERT_CHUNK)) {
          const values: Array<string | number | null> = []
          const tokensOf = new Map<string, string>()
          for (const record of chunk) {
            const tokens = indexedTokens(record, language)
            const length = searchLength(tokens)
            lengths += length
            values.push(...MemoryRow.rowValues(record), length, turns[item++]!)
            tokensOf.set(record.id, tokens.join(" "))
          }
          const numbered = yield* sql.unsafe<{ seq: number; id: string }>(insertSql(chunk.length), values)
          yield* sql.unsafe(ftsInsertSql(chunk.length), numbered.flatMap((row) => [row.seq, tokensOf.get(row.id)!]))
        }
        yield* SearchTotals.add(sql, records.length, lengths)
        return lengths
      })).pipe(
        Effect.tap((lengths) => frequencies.written(records.length, lengths)),
        Effect.asVoid,
        Effect.catchIf(
          (error) => error._tag === "SqlError" && sqliteCode(error) === "SQLITE_CONSTRAINT_UNIQUE",
          (error) => findDuplicate(records, error as SqlError)
        )
      )

    const readOne = (operation: string, id: MemoryRecord.MemoryId) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT ${columns} FROM ${sql(TABLE)} m WHERE m.id = ${id}`
        if (rows.length === 0) return yield* new MemoryStoreError.MemoryNotFound({ id })
        const decoded = MemoryRow.fromRow(rows[0])
        if (Either.isLeft(decoded)) {
          return yield* unreadable(operation, id, decoded.left)
        }
        return decoded.right
      })

    /**
     * The ranked tier's statement: core's BM25 computed in SQL over every match of the tier that
     * passes the filters, and of them the rows that can be among the best `k` (see below), as
     * arrays. Returns the statement for a `k`.
     */
    const rankedStatement = (
      tier: SearchPlan.Tier,
      filters: ReadonlyArray<Statement.Fragment>,
      statistics: SearchPlan.TokenStatistics & { readonly averageLength: number },
      parameters: Bm25.Parameters
    ): RankedStatement => {
      // BM25 (core's Bm25) in SQL: each ranked token's FTS5 match set weighted by the plan's weight (its IDF), summed
      // per row, times the row's length normalisation, filtered and put in order in SQL, so only
      // the best rows are read into JavaScript (decision 0051).
      const hits = sql.join(" UNION ALL ", false)(
        tier.include.map((token, t) =>
          sql`SELECT rowid AS seq, ${tier.weights[t]!} AS w
        FROM ${sql(FTS_TABLE)} WHERE ${sql(FTS_TABLE)} MATCH ${`"${token}"`}`
        )
      )
      // One token's matches are distinct already: summing them would only sort them.
      const matched = tier.include.length === 1 ? hits : sql`SELECT seq, sum(w) AS w FROM (${hits}) GROUP BY seq`
      const k1 = parameters.k1
      const b = parameters.b
      const averageLength = Math.max(statistics.averageLength, 1e-9)
      const score = sql.literal(
        `round(c.w * (${k1 + 1} / (1 + ${k1} * (${
          1 - b
        } + ${b} * m.search_length / ${averageLength}))), ${Bm25.SCORE_DIGITS})`
      )
      const offsets = parameters.neighbourWeight === 0 ? [] : Bm25.neighbourOffsets(parameters)
      const ranked = sql.literal(rankedSql(offsets, parameters.neighbourWeight))
      // One statement per query (decisions 0083, 0113): the matches drive the join to the records
      // (CROSS JOIN keeps SQLite's order: with a scope filter the planner would otherwise scan the
      // whole scope through its index and probe the matches); only the matches within
      // Bm25.BOUND_MARGIN of the k-th best contextual bound come back, with their neighbours'
      // scores and their full rows, and core ranks those exactly. Rows come back as arrays (one
      // per candidate, columns in RANKED_COLUMNS order, then the record's): building a keyed object
      // per row in the driver costs more than the query, and only the rows kept are decoded. A
      // larger k runs only past rows that fail to decode.
      //
      // Ties (decision 0157): a match whose bound is its final score (no conversation context
      // applies to it) is ordered by SQL exactly as core ranks it — score, then newest, then id
      // (ids are ASCII, so SQLite's byte order is JavaScript's) — so of those within the margin
      // of the k-th bound only the first k come back (`capped`), not every one tied there
      // (thousands on a store of look-alike records). A match past them cannot be in the top k
      // unless more than the spare rows fail to decode, which the loop below detects and answers
      // by asking for more.
      const exact = offsets.length === 0 ? sql.literal("1") : sql.literal("f.thread IS NULL")
      const margin = Bm25.BOUND_MARGIN
      const bounded = (k: number) =>
        sql`WITH c AS (${matched}),
            s AS MATERIALIZED (
              SELECT m.seq, m.scope, ${score} AS score,
                CASE WHEN typeof(m.thread) = 'text' AND typeof(m.turn) = 'integer' THEN m.thread
                  WHEN typeof(m.write_turn) = 'integer' THEN '' END AS thread,
                CASE WHEN typeof(m.thread) = 'text' AND typeof(m.turn) = 'integer' THEN m.turn
                  WHEN typeof(m.write_turn) = 'integer' THEN m.write_turn END AS turn
              FROM c CROSS JOIN ${sql(TABLE)} m INDEXED BY ${sql(SEARCH_ROWS_INDEX)} ON m.seq = c.seq
              WHERE ${sql.and(filters)}),
            ${ranked},
            t AS (SELECT coalesce((SELECT u FROM f ORDER BY u DESC LIMIT 1 OFFSET ${k - 1}), -1e300) AS kth),
            r AS MATERIALIZED (
              SELECT f.*, 0 AS capped FROM f CROSS JOIN t
              WHERE f.u > t.kth + ${margin} OR (f.u >= t.kth - ${margin} AND NOT ${exact})
              UNION ALL
              SELECT * FROM (
                SELECT f.*, 1 AS capped FROM f CROSS JOIN t CROSS JOIN ${sql(TABLE)} o ON o.seq = f.seq
                WHERE f.u >= t.kth - ${margin} AND f.u <= t.kth + ${margin} AND ${exact}
                ORDER BY f.u DESC, o.created_at DESC, o.id LIMIT ${k}))
          SELECT r.score, r.thread, r.turn, (SELECT count(*) FROM s), r.capped${
          sql.literal(
            offsets.map((_, i) => `, r.n${i}`).join("")
          )
        }, ${columns}
          FROM r CROSS JOIN ${sql(TABLE)} m ON m.seq = r.seq`
      return { bounded, width: RANKED_COLUMNS + offsets.length, offsets }
    }

    /**
     * One search read on demand (`MemoryStore.SearchPages`, decision 0226): the plan, time and
     * statistics of its first take, and what each tier read so far. Every search is its one take.
     *
     * Ranked tier: one statement of bound `k` ranks the tier's matches; its candidates stay in
     * hand, ranked and decoded as far as a take reads them, so a later take needs no statement
     * while the candidates still hold its exact prefix; past them it runs again, reading `ahead`.
     * Tail tier: the newest-written matches first (FTS5 streams its postings by rowid), joined and
     * filtered as they stream; a take reads only the rows it still needs, after the last row read
     * (`rowid <` it), so the tiers' rows are read once however many takes there are.
     */
    const openPages = (text: string, raw: MemoryQuery.SearchOptions | undefined): MemoryStore.SearchPages => {
      // The plan of the first take (undefined: the text has no token), once opened.
      let opened: { readonly plan: Opened | undefined } | undefined
      let searches = 0
      const open: Effect.Effect<
        Opened | undefined,
        SqlError | MemoryStoreError.InvalidMemoryQuery | MemoryStoreError.MemoryStoreFailure
      > = Effect.gen(function*() {
        const options = yield* MemoryWrite.decodeQuery(MemoryQuery.SearchOptions, raw ?? {})
        const tokens = SearchTokenizer.distinctTokens(text, language)
        if (tokens.length === 0) return undefined
        const gap = yield* indexGap
        if (gap !== undefined) {
          return yield* new MemoryStoreError.MemoryStoreFailure({
            operation: "search",
            cause: new Error(
              `the search index is damaged (${gap}), so a search would miss records; ` +
                "run `engram doctor --repair` to rebuild it from the records"
            )
          })
        }
        const at = yield* DateTime.now
        const statistics = yield* frequencies.statistics(tokens)
        const tuning = SearchPlan.resolve(options)
        const searchPlan = SearchPlan.plan(tokens, statistics, tuning.plan)
        const filters = filterClauses(sql, options, DateTime.toEpochMillis(at))
        const matching = (tier: SearchPlan.Tier) => [sql`${sql(FTS_TABLE)} MATCH ${tierExpression(tier)}`, ...filters]
        // The tiers SearchPlan.run would fetch.
        const { ranked: rankedTier, tail: tailTier } = SearchPlan.tiersOf(searchPlan, options.order)
        return {
          ranked: rankedTier === undefined
            ? undefined
            : rankedStatement(rankedTier, filters, statistics, tuning.ranking),
          tail: tailTier === undefined ? undefined : sql.and(matching(tailTier)),
          parameters: tuning.ranking
        } satisfies Opened
      })

      // The ranked tier: the last statement's candidates, ranked, and each one decoded once.
      let ranking: Ranking | undefined
      // The tail tier: every row read so far in order (a record, or the id of a row that did not
      // decode), the last row's seq, and whether the rows ran out.
      const tailRows: Array<TailRow> = []
      let tailDecoded = 0
      let tailLast: number | undefined
      let tailDone = false
      // Rows that did not decode are logged and counted once per search, however many takes read them.
      const reported = new Set<number>()
      const reportedIds = new Set<string>()

      const rank = (plan: Opened, statement: RankedStatement, k: number) =>
        Effect.map(statement.bounded(k).values, (rows): Ranking => {
          searches++
          return {
            k,
            rows: rows.length,
            total: rows.length === 0 ? 0 : Number(rows[0]![3]),
            candidates: Bm25.rankCandidates(
              rows.map((values) => ({
                match: {
                  values,
                  id: String(values[statement.width + ID]),
                  scope: String(values[statement.width + SCOPE]),
                  position: positionOf(values[1], values[2]),
                  createdAtMillis: Number(values[statement.width + CREATED_AT]),
                  score: Number(values[0])
                },
                neighbours: statement.offsets.map((_, i) => (values[RANKED_COLUMNS + i] as number | null) ?? undefined)
              })),
              plan.parameters
            ),
            decoded: []
          }
        })

      /**
       * The first `limit` records of a ranking that decode, and the ids of those that did not,
       * when they are the search's exact prefix: `limit` records found before the capped rows ran
       * out (if all k were read, a match the cap left out could rank before the last one taken), or
       * every match read.
       */
      const prefixOf = (held: Ranking, limit: number) => {
        const found: Array<MemoryStore.SearchHit> = []
        const bad: Array<SkippedRow> = []
        let cappedRead = 0
        for (let i = 0; i < held.candidates.length && found.length < limit; i++) {
          const { match, score } = held.candidates[i]!
          if (match.values[CAPPED] === 1) cappedRead++
          let decoded = held.decoded[i]
          if (decoded === undefined) {
            const width = match.values.length - MemoryRow.COLUMNS.length
            decoded = held.decoded[i] = MemoryRow.fromRow(rowOf(match.values, width))
          }
          if (Either.isRight(decoded)) found.push({ record: decoded.right, score })
          else bad.push({ key: match.id, reason: decoded.left })
        }
        const exact = (found.length === limit && cappedRead < held.k) || held.rows >= held.total
        return { found, bad, exact }
      }

      const takeRanked = (plan: Opened, statement: RankedStatement, limit: number, ahead: number) =>
        Effect.gen(function*() {
          if (ranking !== undefined) {
            const prefix = prefixOf(ranking, limit)
            if (prefix.exact) return prefix
          }
          // A larger k runs only past rows that fail to decode.
          for (let k = Math.max(limit, ahead) + SPARE_ROWS;; k *= 4) {
            ranking = yield* rank(plan, statement, k)
            const prefix = prefixOf(ranking, limit)
            if (prefix.exact) return prefix
          }
        })

      /** Reads tail rows after the last one read until `want` records decode or the rows run out. */
      const readTail = (where: Statement.Fragment, want: number) =>
        Effect.gen(function*() {
          while (tailDecoded < want && !tailDone) {
            const missing = want - tailDecoded
            const after = tailLast === undefined ? [] : [sql`${sql(FTS_TABLE)}.rowid < ${tailLast}`]
            // Rows as arrays, keyed in JavaScript: cheaper than the driver's keyed rows (decision 0113).
            const page = yield* sql`SELECT ${sql(FTS_TABLE)}.rowid, ${columns} FROM ${sql(FTS_TABLE)} CROSS JOIN ${
              sql(TABLE)
            } m ON m.seq = ${sql(FTS_TABLE)}.rowid
              WHERE ${sql.and([where, ...after])} ORDER BY ${sql(FTS_TABLE)}.rowid DESC LIMIT ${missing}`.values
            for (const values of page) {
              tailLast = Number(values[0])
              const decoded = MemoryRow.fromRow(rowOf(values, 1))
              if (Either.isRight(decoded)) {
                tailRows.push(decoded.right)
                tailDecoded++
              } else tailRows.push({ key: String(values[1 + ID]), reason: decoded.left, seq: tailLast })
            }
            if (page.length < missing) tailDone = true
          }
        })

      /** The tail's first `want` records, and the rows that did not decode before the last of them. */
      const tailPrefix = (want: number) => {
        const records: Array<MemoryRecord.MemoryRecord> = []
        const bad: Array<SkippedRow & { readonly seq: number }> = []
        for (const row of tailRows) {
          if (records.length === want) break
          if ("reason" in row) bad.push(row)
          else records.push(row)
        }
        return { records, bad }
      }

      const take = (limit: number, ahead: number): Effect.Effect<
        MemoryStore.SearchResult,
        SqlError | MemoryStoreError.InvalidMemoryQuery | MemoryStoreError.MemoryStoreFailure
      > =>
        Effect.gen(function*() {
          opened ??= { plan: yield* open }
          const plan = opened.plan
          if (plan === undefined || limit <= 0) return { hits: [], skipped: 0 }
          const head = plan.ranked === undefined
            ? { found: [], bad: [] }
            : yield* takeRanked(plan, plan.ranked, limit, ahead)
          const freshHead = head.bad.filter((row) => !reportedIds.has(row.key))
          for (const row of freshHead) reportedIds.add(row.key)
          yield* reportSkipped("search", freshHead)
          if (plan.ranked === undefined && searches === 0) searches = 1
          if (head.found.length >= limit || plan.tail === undefined) {
            return { hits: head.found, skipped: head.bad.length }
          }
          yield* readTail(plan.tail, limit - head.found.length)
          const rest = tailPrefix(limit - head.found.length)
          const fresh = rest.bad.filter((row) => !reported.has(row.seq))
          for (const row of fresh) reported.add(row.seq)
          yield* reportSkipped("search", fresh)
          const listed = rest.records.map((record, i) => ({ record, score: SearchPlan.tailScore(i) }))
          return {
            hits: plan.ranked === undefined ? listed : [...head.found, ...SearchPlan.belowScores(head.found, listed)],
            skipped: head.bad.length + rest.bad.length
          }
        })

      return {
        take: (limit, ahead) => take(limit, ahead).pipe(Effect.catchTag("SqlError", toFailure("search"))),
        searches: () => searches
      }
    }

    const service: MemoryStore.Service = {
      capabilities: { search: "keyword" },

      write: (inputs) =>
        Effect.flatMap(MemoryWrite.prepareRecords(inputs), (records) => Effect.as(insertRecords(records), records))
          .pipe(
            Effect.catchTag("SqlError", toFailure("write"))
          ),

      restore: (records) =>
        Effect.flatMap(MemoryWrite.validateRecords(records), insertRecords).pipe(
          Effect.catchTag("SqlError", toFailure("restore"))
        ),

      get: (ids, options) =>
        Effect.gen(function*() {
          const found = new Map<string, MemoryRecord.MemoryRecord>()
          const skipped: Array<SkippedRow> = []
          for (const chunk of chunksOf([...new Set(ids)], LOOKUP_CHUNK)) {
            // Look up by primary key only and check scopes here: a scope predicate in SQL lets the
            // planner pick the scope index and scan the whole scope instead.
            const rows = yield* sql<Row>`SELECT ${columns} FROM ${sql(TABLE)} m WHERE ${sql.in("m.id", chunk)}`
            const decoded = MemoryRow.decodeRows(rows, (record) => record)
            for (const record of decoded.values) {
              if (options?.scopes === undefined || options.scopes.includes(record.scope)) found.set(record.id, record)
            }
            skipped.push(...decoded.skipped)
          }
          yield* reportSkipped("get", skipped)
          return { records: ids.flatMap((id) => found.get(id) ?? []), skipped: skipped.length }
        }).pipe(Effect.catchTag("SqlError", toFailure("get"))),

      list: (raw) =>
        Effect.gen(function*() {
          const query = yield* MemoryWrite.decodeQuery(MemoryQuery.ListQuery, raw ?? {})
          const position = query.cursor === undefined ? undefined : yield* MemoryQuery.decodeCursor(query.cursor)
          const at = yield* Clock.currentTimeMillis
          const limit = query.limit ?? MemoryQuery.DEFAULT_LIST_LIMIT
          const clauses = filterClauses(sql, query, at)
          if (position !== undefined) {
            clauses.push(
              sql`(m.created_at < ${position.createdAtMillis} OR (m.created_at = ${position.createdAtMillis} AND m.id > ${position.id}))`
            )
          }
          const where = sql.and(clauses)
          // A page is the next `limit` stored rows (one row past them tells whether another page
          // follows). A row that does not decode is skipped and counted on this page, and the cursor
          // is the last row's position, decodable or not, so it is never read or counted twice —
          // exactly as on every other backend.
          const rows = yield* sql<Row>`SELECT ${columns} FROM ${sql(TABLE)} m WHERE ${where}
          ORDER BY m.created_at DESC, m.id LIMIT ${limit + 1}`
          const pageRows = rows.slice(0, limit)
          const { skipped, values: records } = MemoryRow.decodeRows(pageRows, (record) => record)
          yield* reportSkipped("list", skipped)
          const last = pageRows[pageRows.length - 1]
          return {
            records,
            skipped: skipped.length,
            nextCursor: rows.length > limit && last !== undefined
              ? MemoryQuery.encodeCursor({ createdAtMillis: Number(last.created_at), id: String(last.id) })
              : undefined
          }
        }).pipe(Effect.catchTag("SqlError", toFailure("list"))),

      // A search is its one take (decision 0226): the same statements as a search read in pages.
      search: (text, raw) => {
        const limit = raw?.limit ?? MemoryQuery.DEFAULT_SEARCH_LIMIT
        return openPages(text, raw).take(limit, limit)
      },

      neighbours: (raw) =>
        Effect.gen(function*() {
          const query = yield* MemoryWrite.decodeNeighbourQuery(raw)
          const { places, skipped, values } = yield* readNeighbours(sql, query, yield* Clock.currentTimeMillis)
          yield* reportSkipped("neighbours", skipped)
          return { records: values, skipped: skipped.length, places }
        }).pipe(Effect.catchTag("SqlError", toFailure("neighbours"))),

      setReviewState: (id, state) =>
        sql.withTransaction(Effect.gen(function*() {
          const updated = MemoryWrite.withReviewState(yield* readOne("setReviewState", id), state)
          yield* sql`UPDATE ${sql(TABLE)} SET review_state = ${updated.reviewState} WHERE id = ${id}`
          return updated
        })).pipe(Effect.catchTag("SqlError", toFailure("setReviewState"))),

      supersede: (oldId, input) =>
        sql.withTransaction(Effect.gen(function*() {
          const original = yield* readOne("supersede", oldId)
          const successor = yield* MemoryWrite.prepareSuccessor(original, input)
          yield* insertRecords([successor])
          const superseded = MemoryWrite.invalidatedBy(original, successor)
          // Guarded on the original still being valid: losing that race rolls the insert back.
          const changed = yield* sql<{ id: string }>`UPDATE ${sql(TABLE)}
          SET invalidated_at = ${DateTime.toEpochMillis(successor.createdAt)},
              invalidation_reason = ${superseded.invalidationReason ?? null},
              superseded_by = ${successor.id}
          WHERE id = ${oldId} AND invalidated_at IS NULL
          RETURNING id`
          if (changed.length === 0) {
            return yield* new MemoryStoreError.MemoryConflict({
              id: oldId,
              reason: "another writer invalidated it first"
            })
          }
          return { superseded, successor }
        })).pipe(Effect.catchTag("SqlError", toFailure("supersede"))),

      expire: (id) =>
        sql.withTransaction(Effect.gen(function*() {
          const record = yield* readOne("expire", id)
          const updated = MemoryWrite.expiredAt(record, yield* DateTime.now)
          if (updated !== record && updated.expiresAt !== undefined) {
            yield* sql`UPDATE ${sql(TABLE)} SET expires_at = ${
              DateTime.toEpochMillis(updated.expiresAt)
            } WHERE id = ${id}`
          }
          return updated
        })).pipe(Effect.catchTag("SqlError", toFailure("expire"))),

      corroborate: (id, options) =>
        Effect.flatMap(
          MemoryWrite.checkCorroboratingSession(options?.session),
          (session) =>
            sql.withTransaction(Effect.gen(function*() {
              const updated = MemoryWrite.corroborated(yield* readOne("corroborate", id), {
                session,
                at: yield* DateTime.now
              })
              const row = MemoryRow.toRow(updated)
              yield* sql`UPDATE ${sql(TABLE)} SET corroborations = ${row.corroborations},
              corroboration_sessions = ${row.corroboration_sessions}, corroborated_at = ${row.corroborated_at}
              WHERE id = ${id}`
              return updated
            }))
        ).pipe(Effect.catchTag("SqlError", toFailure("corroborate"))),

      forget: (rawTarget, options) =>
        Effect.gen(function*() {
          const { by, target } = yield* MemoryForget.decodeForget(rawTarget, options.by)
          const at = yield* DateTime.now
          const where = "scope" in target
            ? [sql`scope = ${target.scope}`]
            : chunksOf([...new Set(target.ids)], LOOKUP_CHUNK).map((chunk) =>
              sql.and([sql.in("id", chunk), ...(target.scopes === undefined ? [] : [sql.in("scope", target.scopes)])])
            )
          return yield* sql.withTransaction(Effect.gen(function*() {
            // Raw columns, not decoded records: a row too damaged to read can still be forgotten.
            type Doomed = {
              seq: number
              id: string
              scope: string
              label: string | null
              content: string
              tags: string
              supersedes: string | null
              superseded_by: string | null
              search_length: number
            }
            const doomed: Array<Doomed> = []
            for (const clause of where) {
              doomed.push(
                ...(yield* sql<Doomed>`SELECT seq, id, scope, label, content, tags, supersedes, superseded_by,
                search_length
              FROM ${sql(TABLE)} WHERE ${clause}`)
              )
            }
            doomed.sort((a, b) => MemoryQuery.compareRaw(a.id, b.id))
            const tombstones = doomed.map((row) =>
              MemoryForget.tombstoneOf({ ...row, supersededBy: row.superseded_by }, at, by)
            )
            for (const chunk of chunksOf(doomed, INSERT_CHUNK)) {
              for (const row of chunk) yield* removeFromIndex(sql, row, language)
              yield* sql`DELETE FROM ${sql(TABLE)} WHERE ${sql.in("seq", chunk.map((row) => row.seq))}`
            }
            yield* SearchTotals.add(
              sql,
              -doomed.length,
              -doomed.reduce((sum, row) => sum + Number(row.search_length), 0)
            )
            for (const chunk of chunksOf(tombstones, INSERT_CHUNK)) {
              yield* sql.unsafe(
                tombstoneInsertSql(chunk.length),
                chunk.flatMap((t) => Object.values(MemoryForget.tombstoneRow(t)))
              )
            }
            yield* MemoryForget.forgetDependents(
              cascade,
              tombstones.map((t) => t.memoryId),
              doomed.map((row) => ({ id: row.id, content: row.content }))
            )
            return { tombstones }
          }))
        }).pipe(Effect.catchTag("SqlError", toFailure("forget"))),

      tombstones: (query) =>
        Effect.gen(function*() {
          if (query?.ids?.length === 0 || query?.scopes?.length === 0) return []
          const clauses = [sql.literal("1=1")]
          if (query?.ids !== undefined) clauses.push(sql.in("memory_id", query.ids))
          if (query?.scopes !== undefined) clauses.push(sql.in("scope", query.scopes))
          const rows = yield* sql<Record<string, unknown>>`SELECT ${sql.literal(TOMBSTONE_COLUMNS.join(", "))}
          FROM ${sql(TOMBSTONE_TABLE)} WHERE ${sql.and(clauses)} ORDER BY memory_id, forgotten_at, seq`
          return rows.flatMap((row) => MemoryForget.fromTombstoneRow(row) ?? [])
        }).pipe(Effect.catchTag("SqlError", toFailure("tombstones")))
    }
    return MemoryStore.withContract(MemoryStore.withPages(service, openPages))
  })

/**
 * Builds the SQLite memory store over the ambient SQL client. Migrates first. With `embeddings` it
 * keeps vectors (sqlite-vec) and searches hybrid; without, it is lexical (decision 0161 (c)).
 */
export const make = (options: MemoryStore.StoreOptions, embeddings?: Embeddings.Service): Effect.Effect<
  MemoryStore.Service,
  | SqlError
  | Migrator.MigrationError
  | MemoryStoreError.MemoryStoreFailure
  | MemoryStoreError.InvalidStoreOptions
  | Embeddings.EmbedderMismatch
  | SearchTokenizer.LanguageMismatch,
  SqlClient.SqlClient | SqliteClient.SqliteClient | PromotionStore.PromotionStore | TelemetryStore.TelemetryStore
> =>
  Effect.gen(function*() {
    const store = yield* makeLexical(options.language)
    if (embeddings === undefined) {
      // The memory table's triggers update the vec0 index: a writer needs the module loaded.
      yield* SqliteVectorIndex.loadForWrites
      return yield* MemoryStore.withSearchDefaults(store, options.search)
    }
    const index = yield* SqliteVectorIndex.open
    if (Option.isNone(index)) {
      yield* Effect.logWarning(
        "the database is open read-only and has no vector index for an embedder yet: searching lexically " +
          "(open it writable once, or run `engram embed`, to build it)"
      )
      return yield* MemoryStore.withSearchDefaults(store, options.search)
    }
    const hybrid = yield* VectorIndex.withVectors(store, index.value, embeddings)
    return yield* MemoryStore.withSearchDefaults(hybrid, options.search)
  })
