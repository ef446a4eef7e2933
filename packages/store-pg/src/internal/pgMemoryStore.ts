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
  SearchPlan,
  SearchTokenizer,
  VectorIndex
} from "@engram/core"
import { IndexLanguage, MemoryRow, NeighbourWindow, SearchStatistics, StoredRows } from "@engram/store-sql"
import * as Clock from "effect/Clock"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Metric from "effect/Metric"
import { reasonOf } from "../PgError.js"
import * as Filters from "./filters.js"
import { lexemeOf, lexemesOf, quoteLexeme, searchLength, tierQuery } from "./lexemes.js"
import {
  ensure,
  ensureMigrated,
  frequencyTable,
  memoryTable,
  metaTable,
  migrate,
  run,
  tombstones,
  tombstoneTable,
  totalsTable
} from "./migrations.js"
import { readNeighbours } from "./neighbourRead.js"
import * as PgText from "./pgText.js"
import * as PgVectorIndex from "./pgVectorIndex.js"
import { checkSearchTokens, syncSearchTokens } from "./reindex.js"

/**
 * A row as `pg` returns it: BIGINT arrives as a string; tags are selected as JSON text, the form
 * the core row codec reads.
 */
type Row = Readonly<Record<MemoryRow.Column, unknown>> & { readonly id: string; readonly created_at: string | number }

const columns = MemoryRow.COLUMNS.map((column) => (column === "tags" ? "tags::text AS tags" : column)).join(", ")

const skippedRows = MemoryStore.rowsSkipped.pipe(Metric.tagged("backend", "postgres"))

// Rows per INSERT statement: the arrays of one `unnest` insert are bound as 23 parameters
// whatever their length; chunks keep one statement's payload moderate.
const INSERT_CHUNK = 5_000

const fromBigint = (value: unknown): unknown => (typeof value === "string" ? Number(value) : value)

/** The row in the form the core row codec reads (epoch milliseconds as numbers). */
const readable = <R extends Row>(row: R) => ({
  ...row,
  created_at: fromBigint(row.created_at),
  expires_at: fromBigint(row.expires_at),
  invalidated_at: fromBigint(row.invalidated_at),
  valid_from: fromBigint(row.valid_from),
  valid_to: fromBigint(row.valid_to),
  corroborated_at: fromBigint(row.corroborated_at)
})

/** Logs and counts rows that failed to decode. */
const reportSkipped = (skipped: ReadonlyArray<StoredRows.Skipped<string>>) =>
  StoredRows.reportSkipped(
    skipped,
    "skipped a stored memory row that does not decode",
    ({ key, reason }) => ({ backend: "postgres", id: key, problem: reason }),
    skippedRows
  )

/** Decodes rows one by one: a row that fails is logged, counted and left out; the rest stand. */
const decodeRows = <R extends Row, A>(rows: ReadonlyArray<R>, make: (record: MemoryRecord.MemoryRecord, row: R) => A) =>
  Effect.gen(function*() {
    const { skipped, values } = MemoryRow.decodeRows(rows.map(readable), make)
    yield* reportSkipped(skipped)
    return { values, skipped: skipped.length }
  })

const millis = (at: DateTime.Utc | undefined): number | null => (at === undefined ? null : DateTime.toEpochMillis(at))

const unstorableField = (record: MemoryRecord.MemoryRecord): string | undefined =>
  PgText.unstorableField([
    ["id", record.id],
    ["content", record.content],
    ["label", record.label],
    ["scope", record.scope],
    ["epoch", record.epoch],
    ["invalidationReason", record.invalidationReason],
    ["supersededBy", record.supersededBy],
    ["supersedes", record.supersedes],
    ["domain", record.domain],
    ...record.tags.map((tag, i) => [`tags.${i}`, tag] as const)
  ])

const ensureStorable = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) => {
  for (let index = 0; index < records.length; index++) {
    const field = unstorableField(records[index]!)
    if (field !== undefined) {
      return Effect.fail(
        new MemoryStoreError.InvalidMemoryInput({
          index,
          problem: `${field}: ${PgText.UNSTORABLE}`
        })
      )
    }
  }
  return Effect.void
}

/** The record columns, each prefixed with `alias`. */
const selectColumnsOf = (alias: string) =>
  MemoryRow.COLUMNS.map((column) => (column === "tags" ? `${alias}tags::text AS tags` : `${alias}${column}`)).join(", ")

/**
 * The ranked statement's middle, after `s` (each filtered match's own score and conversation
 * position): `f`, each match with its contextual bound `u` (`Bm25.bound`) rounded as core rounds a
 * score, and, with the context on, its neighbours' own scores `n0…` in `Bm25.neighbourOffsets`
 * order, read through the window both stores share (`NeighbourWindow`). Only positioned matches
 * are joined to it (each has its one `x` row), as on SQLite: a match without a position is its own
 * bound, already rounded (`s.score`), and costs no join, no sort for one and no numeric rounding
 * (the positioned branch filters on the position itself, so the join sorts or hashes only those).
 * Numbers only: safe as SQL text.
 */
const rankedSql = (offsets: ReadonlyArray<number>, weight: number): string => {
  if (offsets.length === 0) return "f AS (SELECT s.*, s.score AS u FROM s)"
  const { columns, ctes, sum } = NeighbourWindow.windowSql(offsets)
  const none = offsets.map((_, i) => `NULL::float8 AS n${i}`).join(", ")
  return `${ctes},
    f AS (
      SELECT s.*, ${none}, s.score AS u FROM s WHERE s.thread IS NULL
      UNION ALL
      SELECT s.*, ${columns}, round((s.score + ${weight}::float8 * (${sum}))::numeric, ${Bm25.SCORE_DIGITS})::float8 AS u
      FROM s JOIN x ON x.scope = s.scope AND x.thread = s.thread AND x.turn = s.turn
      WHERE s.thread IS NOT NULL)`
}

/** Rows a ranked search reads past the ones it still wants, to stand in for rows that fail to decode. */
const SPARE_ROWS = 4

/**
 * The ranked tier's score: core's BM25 (`Bm25`) over the tier's tokens — each token's weight from
 * the plan (`SearchPlan.weightOf`: its IDF, raised to the planner's power) where the record holds
 * it, summed, times the record's length normalisation from its stored `search_length` — rounded as
 * on every backend, so PostgreSQL ranks exactly like the in-memory store and SQLite (decisions 0051,
 * 0153).
 */
const bm25Score = (
  sql: SqlClient.SqlClient,
  tier: SearchPlan.Tier,
  statistics: SearchStatistics.Statistics,
  parameters: Bm25.Parameters
): Statement.Fragment => {
  const terms = tier.include.map((token, t) =>
    sql`CASE WHEN search_vector @@ ${quoteLexeme(lexemeOf(token))}::tsquery THEN ${tier.weights[t]!}::float8 ELSE 0 END`
  )
  const { b, k1 } = parameters
  const norm = sql`(${k1 + 1}::float8 / (1 + ${k1}::float8 * (${1 - b}::float8 + ${b}::float8 * search_length / ${
    Math.max(statistics.averageLength, 1e-9)
  }::float8)))`
  return sql`round(((${sql.join(" + ", false)(terms)}) * ${norm})::numeric, ${Bm25.SCORE_DIGITS})::float8`
}

/**
 * A row of the ranked statement: the match's id, scope, creation time, own score, position and
 * neighbours' scores, then its record's columns (null past the statement's first `k` rows).
 */
type RankedRow = Readonly<Record<string, unknown>> & {
  readonly match_id: string
  readonly match_scope: string
  readonly match_created_at: string | number
  readonly score: number
  readonly position_thread: unknown
  readonly position_turn: unknown
  readonly id: string | null
}

/**
 * The ranked tier's statement: the ranking's first `max(k, candidates)` matches, the first `k`
 * with their records; and the neighbour offsets its rows carry scores for.
 */
interface RankedStatement {
  readonly bounded: (k: number, candidates: number) => Statement.Statement<RankedRow>
  readonly offsets: ReadonlyArray<number>
}

/**
 * How many matches a search read in pages ranks ahead, per record it reads: a take past the
 * records in hand reads the next ones by id, in one short statement, instead of ranking again.
 */
const CANDIDATES_AHEAD = 4

/** A search's plan, fixed at its first take: its tiers' statements and its ranking parameters. */
interface Opened {
  readonly ranked: RankedStatement | undefined
  readonly tail: { readonly tier: SearchPlan.Tier; readonly clauses: ReadonlyArray<Statement.Fragment> } | undefined
  readonly parameters: Bm25.Parameters
}

/**
 * One run of the ranked statement: how many matches it asked for and got, its candidates ranked,
 * each one's stored row once read (with the statement or by id after it) and decoded once.
 */
interface Ranking {
  readonly bound: number
  readonly rows: number
  readonly candidates: ReadonlyArray<{ readonly match: Bm25.Match; readonly score: number }>
  readonly records: Array<Row | undefined>
  readonly decoded: Array<Either.Either<MemoryRecord.MemoryRecord, string>>
}

/** A tail row read: its record, or what kept it from decoding. */
type TailRow = MemoryRecord.MemoryRecord | StoredRows.Skipped<string>

/**
 * Exact statistics, as every backend plans and ranks by the same figures: the rows and their
 * summed lengths, and each token's document frequency, read from the counter rows the write
 * transaction keeps current (migration `0005_search_statistics`, decision 0141) — a sum over at
 * most `SHARDS` rows each, never a scan of the memory table — cached by core's
 * `SearchStatistics` policy.
 */
const makeStatistics = (sql: SqlClient.SqlClient) => {
  const totals = sql<{ total: number | null; length: number | null }>`
    SELECT coalesce(sum(records), 0)::float8 AS total, coalesce(sum(search_length), 0)::float8 AS length
    FROM ${sql(totalsTable)}`
  const sizeOf = (row: { total: number | null; length: number | null } | undefined) => ({
    total: Number(row?.total ?? 0),
    length: Number(row?.length ?? 0)
  })
  const frequency = sql`coalesce((SELECT sum(f.docs) FROM ${
    sql(frequencyTable)
  } f WHERE f.token = t.lexeme), 0)::float8`
  const tokensOf = (tokens: ReadonlyArray<string>) =>
    sql`unnest(${tokens}::text[], ${tokens.map(lexemeOf)}::text[]) AS t(token, lexeme)`
  const pairs = (rows: ReadonlyArray<{ token: string; doc: number }>) =>
    rows.map((row) => [row.token, Number(row.doc)] as const)
  return SearchStatistics.cached({
    size: Effect.map(totals, ([row]) => sizeOf(row)),
    frequencies: (tokens) =>
      Effect.map(
        sql<{ token: string; doc: number }>`SELECT t.token, ${frequency} AS doc FROM ${tokensOf(tokens)}`,
        pairs
      ),
    // One round trip where the size is due too (decision 0210): every row carries the totals.
    sizeAndFrequencies: (tokens) =>
      Effect.map(
        sql<{ total: number | null; length: number | null; token: string; doc: number }>`
          SELECT s.total, s.length, t.token, ${frequency} AS doc FROM (${totals}) AS s, ${tokensOf(tokens)}`,
        (rows) => ({ size: sizeOf(rows[0]), frequencies: pairs(rows) })
      )
  }).statistics
}

/**
 * Creates the store over the ambient `SqlClient` in its language (decision 0196), after `prepare`
 * (migrating, or checking the version) and `index` (bringing the stored search tokens up to date
 * in that language, or checking them).
 */
const makeAfter = <E, EI>(
  prepare: Effect.Effect<unknown, E, SqlClient.SqlClient>,
  index: (language: SearchTokenizer.Language) => Effect.Effect<unknown, EI, SqlClient.SqlClient>
) =>
(options: MemoryStore.StoreOptions, embeddings?: Embeddings.Service) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // forget reaches the promotion rows and telemetry of the same database (decision 0164).
    const cascade = yield* MemoryForget.cascade
    yield* prepare
    const { language, recorded } = yield* IndexLanguage.open(metaTable, options.language)
    if (!IndexLanguage.isCurrent(recorded, language)) yield* index(language)

    const failure = (operation: string) => (cause: SqlError) =>
      new MemoryStoreError.MemoryStoreFailure({ operation, cause: reasonOf(cause) })

    const table = sql(memoryTable)
    const selectColumns = sql.literal(columns)

    /**
     * Each record's place in its scope's write order (decision 0233), `null` for a record that
     * takes none (`MemoryQuery.writePlaces`): one step of each scope's counter row per write (the
     * row stays locked to the end of the transaction, so concurrent writes to one scope take places
     * one after the other), places given in item order.
     */
    const writeTurns = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
      MemoryQuery.writePlaces(records, (scope, count) =>
        Effect.map(
          sql<{ next: number }>`INSERT INTO engram_memory_write_order AS o (scope, next)
            VALUES (${scope}, ${count})
            ON CONFLICT (scope) DO UPDATE SET next = o.next + excluded.next
            RETURNING next`,
          ([row]) => Number(row!.next)
        ))

    /** Inserts records; fails with the first id that is already stored (the caller's transaction rolls back). */
    const insertAll = (records: ReadonlyArray<MemoryRecord.MemoryRecord>) =>
      Effect.gen(function*() {
        const turns = yield* writeTurns(records)
        for (let start = 0; start < records.length; start += INSERT_CHUNK) {
          const chunk = records.slice(start, start + INSERT_CHUNK)
          const chunkTurns = turns.slice(start, start + INSERT_CHUNK)
          const rows = chunk.map(MemoryRow.toRow)
          const lexemes = chunk.map((r) => lexemesOf(r, language))
          const column = (name: MemoryRow.Column) => rows.map((row) => row[name])
          const inserted = yield* sql<{ id: string }>`
          INSERT INTO ${table} (id, content, kind, label, tags, source_type, scope, delivery_policy, review_state,
            created_at, epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain,
            thread, turn, valid_from, valid_to, corroborations, corroboration_sessions, corroborated_at,
            search_tokens, search_length, write_turn)
          SELECT id, content, kind, label, tags::jsonb, source_type, scope, delivery_policy, review_state,
            created_at, epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain,
            thread, turn, valid_from, valid_to, corroborations, corroboration_sessions, corroborated_at,
            search_tokens, search_length, write_turn
          FROM unnest(
            ${column("id")}::text[], ${column("content")}::text[], ${column("kind")}::text[],
            ${column("label")}::text[], ${column("tags")}::text[], ${column("source_type")}::text[],
            ${column("scope")}::text[], ${column("delivery_policy")}::text[], ${column("review_state")}::text[],
            ${column("created_at")}::bigint[], ${column("epoch")}::text[], ${column("expires_at")}::bigint[],
            ${column("invalidated_at")}::bigint[], ${column("invalidation_reason")}::text[],
            ${column("superseded_by")}::text[], ${column("supersedes")}::text[], ${column("domain")}::text[],
            ${column("thread")}::text[], ${column("turn")}::int[],
            ${column("valid_from")}::bigint[], ${column("valid_to")}::bigint[],
            ${column("corroborations")}::int[], ${column("corroboration_sessions")}::text[],
            ${column("corroborated_at")}::bigint[],
            ${lexemes.map((l) => l.join(" "))}::text[], ${lexemes.map(searchLength)}::int[], ${chunkTurns}::int[]
          ) AS u(id, content, kind, label, tags, source_type, scope, delivery_policy, review_state, created_at,
            epoch, expires_at, invalidated_at, invalidation_reason, superseded_by, supersedes, domain, thread, turn,
            valid_from, valid_to, corroborations, corroboration_sessions, corroborated_at, search_tokens, search_length,
            write_turn)
          ON CONFLICT (id) DO NOTHING
          RETURNING id`
          if (inserted.length < chunk.length) {
            const stored = new Set(inserted.map((row) => row.id))
            const taken = chunk.find((r) => !stored.has(r.id))!
            return yield* new MemoryStoreError.DuplicateMemoryId({ id: taken.id })
          }
        }
        return records
      })

    /** The record, locked for the rest of the transaction. */
    const lockForUpdate = (id: MemoryRecord.MemoryId, operation: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE id = ${id} FOR UPDATE`
        const row = rows[0]
        if (row === undefined) return yield* new MemoryStoreError.MemoryNotFound({ id })
        const decoded = MemoryRow.fromRow(readable(row))
        if (Either.isLeft(decoded)) {
          return yield* new MemoryStoreError.MemoryStoreFailure({
            operation,
            cause: new Error(
              `the stored row of memory "${id}" does not decode (${decoded.left}); ` +
                `repair or delete it first`
            )
          })
        }
        return decoded.right
      })

    const filterClauses = (filters: MemoryQuery.MemoryFilters, nowMillis: number) =>
      Filters.filterClauses(sql, filters, nowMillis)

    const nowMillis = Clock.currentTimeMillis
    const statistics = makeStatistics(sql)

    /**
     * The ranked tier in one statement (decision 0140, as SQLite's decision 0113): every match's
     * own BM25 score and conversation context computed in SQL, put in ranking order there, and
     * only the best `k` rows read, with their neighbours' scores and their full rows; core ranks
     * those exactly (`Bm25.rankCandidates`). The filters sit in one WHERE list beside the index
     * condition. Returns the statement for a `k` and a number of candidates: the ranking's first
     * `max(k, candidates)` matches, the records of the first `k` (a candidate past them joins on a
     * null key, so PostgreSQL reads no row for it: with `place <= k` as a join filter it read every
     * candidate's row, 15–60 ms of 2,450 at 1M, then dropped it).
     */
    const rankedStatement = (
      tier: SearchPlan.Tier,
      clauses: ReadonlyArray<Statement.Fragment>,
      tokenStatistics: SearchStatistics.Statistics,
      parameters: Bm25.Parameters
    ): RankedStatement => {
      const offsets = parameters.neighbourWeight === 0 ? [] : Bm25.neighbourOffsets(parameters)
      const ranked = sql.literal(rankedSql(offsets, parameters.neighbourWeight))
      const neighbourColumns = sql.literal(offsets.map((_, i) => `, r.n${i}`).join(""))
      const score = bm25Score(sql, tier, tokenStatistics, parameters)
      const bounded = (k: number, candidates: number) =>
        sql<RankedRow>`
          WITH s AS MATERIALIZED (
            SELECT id, scope, created_at, ${score} AS score,
              CASE WHEN thread IS NOT NULL AND turn IS NOT NULL THEN thread
                WHEN write_turn IS NOT NULL THEN '' END AS thread,
              CASE WHEN thread IS NOT NULL AND turn IS NOT NULL THEN turn ELSE write_turn END AS turn
            FROM ${table}, CAST(${tierQuery(tier)} AS tsquery) AS q(query)
            WHERE search_vector @@ q.query AND ${sql.and(clauses)}),
          ${ranked},
          c AS MATERIALIZED (
            SELECT f.* FROM f
            ORDER BY f.u DESC, f.created_at DESC, f.id LIMIT ${Math.max(k, candidates)}),
          r AS (SELECT c.*, row_number() OVER (ORDER BY c.u DESC, c.created_at DESC, c.id) AS place FROM c)
          SELECT r.id AS match_id, r.scope AS match_scope, r.created_at AS match_created_at, r.score,
            r.thread AS position_thread, r.turn AS position_turn${neighbourColumns}, ${
          sql.literal(selectColumnsOf("m."))
        }
          FROM r LEFT JOIN ${table} m ON m.id = CASE WHEN r.place <= ${k} THEN r.id END`
      return { bounded, offsets }
    }

    /**
     * One search read on demand (`MemoryStore.SearchPages`, decisions 0226, 0236): the plan, time
     * and statistics of its first take, and what each tier read so far. Every search is its one take.
     *
     * Ranked tier: one statement of bound `k` ranks the tier's matches in SQL (ties as core breaks
     * them: score, newest, id in code-unit order), so its rows are the ranking's exact first `k`;
     * they stay in hand, ranked and decoded as far as a take reads them, and a later take runs no
     * statement while they hold its `limit` records (or are every match); past them it runs again,
     * reading `ahead`. Tail tier: the newest matches first (`created_at DESC, id`, the listing
     * order); a take reads only the rows it still needs, after the last row read (keyset), so the
     * tiers' rows are read once however many takes there are.
     */
    const openPages = (
      text: string,
      raw: MemoryQuery.SearchOptions | undefined,
      candidatesAhead: number
    ): MemoryStore.SearchPages => {
      // The plan of the first take (undefined: the text has no token), once opened.
      let opened: { readonly plan: Opened | undefined } | undefined
      let searches = 0
      const open: Effect.Effect<Opened | undefined, SqlError | MemoryStoreError.InvalidMemoryQuery> = Effect.gen(
        function*() {
          const options = yield* MemoryWrite.decodeQuery(MemoryQuery.SearchOptions, raw ?? {})
          const tokens = SearchTokenizer.distinctTokens(text, language)
          if (tokens.length === 0) return undefined
          const clauses = filterClauses(options, yield* nowMillis)
          const tokenStatistics = yield* statistics(tokens)
          const tuning = SearchPlan.resolve(options)
          const searchPlan = SearchPlan.plan(tokens, tokenStatistics, tuning.plan)
          if (searchPlan.ranked.length === 0) return undefined
          // The tiers SearchPlan.run would fetch.
          const { ranked: rankedTier, tail: tailTier } = SearchPlan.tiersOf(searchPlan, options.order)
          return {
            ranked: rankedTier === undefined
              ? undefined
              : rankedStatement(rankedTier, clauses, tokenStatistics, tuning.ranking),
            tail: tailTier === undefined ? undefined : { tier: tailTier, clauses },
            parameters: tuning.ranking
          } satisfies Opened
        }
      )

      // The ranked tier: the last statement's candidates, ranked, and each one decoded once.
      let ranking: Ranking | undefined
      // The tail tier: every row read so far in order (a record, or the id of a row that did not
      // decode), the last row's place in the order, and whether the rows ran out.
      const tailRows: Array<TailRow> = []
      let tailDecoded = 0
      let tailLast: { readonly createdAt: string | number; readonly id: string } | undefined
      let tailDone = false
      // Rows that did not decode are logged and counted once per search, however many takes read them.
      const reported = new Set<string>()
      const report = (bad: ReadonlyArray<StoredRows.Skipped<string>>) => {
        const fresh = bad.filter((row) => !reported.has(row.key))
        for (const row of fresh) reported.add(row.key)
        return reportSkipped(fresh)
      }

      const rank = (plan: Opened, statement: RankedStatement, k: number) =>
        Effect.map(statement.bounded(k, k * candidatesAhead), (rows): Ranking => {
          searches++
          const ranked = Bm25.rankCandidates(
            rows.map((row) => ({
              match: {
                row,
                id: row.match_id,
                scope: String(row.match_scope),
                position: typeof row.position_thread === "string" && row.position_turn !== null
                  ? { thread: row.position_thread, turn: Number(row.position_turn) }
                  : undefined,
                createdAtMillis: Number(row.match_created_at),
                score: Number(row.score)
              },
              neighbours: statement.offsets.map((_, i) => {
                const n = row[`n${i}`]
                return n === null || n === undefined ? undefined : Number(n)
              })
            })),
            plan.parameters
          )
          return {
            bound: Math.max(k, k * candidatesAhead),
            rows: rows.length,
            candidates: ranked,
            records: ranked.map(({ match }) => (match.row.id === null ? undefined : match.row as unknown as Row)),
            decoded: []
          }
        })

      /**
       * Reads the records of `count` candidates from `from` on, by id; false when one is gone since
       * the ranking ran (the caller ranks again).
       */
      const readCandidates = (held: Ranking, from: number, count: number) =>
        Effect.gen(function*() {
          const ids = held.candidates.slice(from, from + count).map(({ match }) => match.id)
          const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE id = ANY(${ids}::text[])`
          const byId = new Map(rows.map((row) => [row.id, row]))
          for (const [j, id] of ids.entries()) {
            const row = byId.get(id)
            if (row === undefined) return false
            held.records[from + j] = row
          }
          return true
        })

      /**
       * The first `limit` records of a ranking that decode, and the ids of those before them that
       * did not; `exact` when they are the search's: `limit` records found (the statement's rows
       * are the ranking's first ones, so any prefix of them is the ranking's), or every match read.
       * A candidate whose record is not in hand is read by id with the ones after it, as far as
       * `ahead` reaches.
       */
      const prefixOf = (held: Ranking, limit: number, ahead: number) =>
        Effect.gen(function*() {
          const found: Array<MemoryStore.SearchHit> = []
          const bad: Array<StoredRows.Skipped<string>> = []
          for (let i = 0; i < held.candidates.length && found.length < limit; i++) {
            const { match, score } = held.candidates[i]!
            let decoded = held.decoded[i]
            if (decoded === undefined) {
              if (held.records[i] === undefined) {
                const count = Math.max(limit, ahead) - found.length + SPARE_ROWS
                if (!(yield* readCandidates(held, i, count))) return { found, bad, exact: false }
              }
              decoded = held.decoded[i] = MemoryRow.fromRow(readable(held.records[i]!))
            }
            if (Either.isRight(decoded)) found.push({ record: decoded.right, score })
            else bad.push({ key: match.id, reason: decoded.left })
          }
          return { found, bad, exact: found.length === limit || held.rows < held.bound }
        })

      const takeRanked = (plan: Opened, statement: RankedStatement, limit: number, ahead: number) =>
        Effect.gen(function*() {
          if (ranking !== undefined) {
            const prefix = yield* prefixOf(ranking, limit, ahead)
            if (prefix.exact) return prefix
          }
          // A larger k runs only past rows that fail to decode (or records gone since the last run).
          for (let k = Math.max(limit, ahead) + SPARE_ROWS;; k *= 4) {
            ranking = yield* rank(plan, statement, k)
            const prefix = yield* prefixOf(ranking, limit, ahead)
            if (prefix.exact) return prefix
          }
        })

      /**
       * Reads tail rows after the last one read until `want` records decode or the rows run out.
       * The filters sit beside the index condition, so PostgreSQL combines them before ordering;
       * the tier needs no rank, so it may stop after the rows asked for.
       */
      const readTail = (tail: NonNullable<Opened["tail"]>, want: number) =>
        Effect.gen(function*() {
          while (tailDecoded < want && !tailDone) {
            const missing = want - tailDecoded
            // Strictly after the last row in (created_at DESC, id) order; the separate
            // "created_at <=" bound lets an index scan start there (as `list`'s cursor).
            const after = tailLast === undefined
              ? []
              : [
                sql`created_at <= ${tailLast.createdAt} AND (created_at < ${tailLast.createdAt} OR id > ${tailLast.id})`
              ]
            const page = yield* sql<Row>`
              SELECT ${selectColumns}
              FROM ${table}, CAST(${tierQuery(tail.tier)} AS tsquery) AS q(query)
              WHERE search_vector @@ q.query AND ${sql.and([...tail.clauses, ...after])}
              ORDER BY created_at DESC, id ASC
              LIMIT ${missing}`
            for (const row of page) {
              tailLast = { createdAt: row.created_at, id: row.id }
              const decoded = MemoryRow.fromRow(readable(row))
              if (Either.isRight(decoded)) {
                tailRows.push(decoded.right)
                tailDecoded++
              } else tailRows.push({ key: row.id, reason: decoded.left })
            }
            if (page.length < missing) tailDone = true
          }
        })

      /** The tail's first `want` records, and the rows that did not decode before the last of them. */
      const tailPrefix = (want: number) => {
        const records: Array<MemoryRecord.MemoryRecord> = []
        const bad: Array<StoredRows.Skipped<string>> = []
        for (const row of tailRows) {
          if (records.length === want) break
          if ("reason" in row) bad.push(row)
          else records.push(row)
        }
        return { records, bad }
      }

      const take = (
        limit: number,
        ahead: number
      ): Effect.Effect<MemoryStore.SearchResult, SqlError | MemoryStoreError.InvalidMemoryQuery> =>
        Effect.gen(function*() {
          opened ??= { plan: yield* open }
          const plan = opened.plan
          if (plan === undefined || limit <= 0) return { hits: [], skipped: 0 }
          const head = plan.ranked === undefined
            ? { found: [], bad: [] }
            : yield* takeRanked(plan, plan.ranked, limit, ahead)
          yield* report(head.bad)
          if (plan.ranked === undefined && searches === 0) searches = 1
          if (head.found.length >= limit || plan.tail === undefined) {
            return { hits: head.found, skipped: head.bad.length }
          }
          yield* readTail(plan.tail, limit - head.found.length)
          const rest = tailPrefix(limit - head.found.length)
          yield* report(rest.bad)
          const listed = rest.records.map((record, i) => ({ record, score: SearchPlan.tailScore(i) }))
          return {
            hits: plan.ranked === undefined ? listed : [...head.found, ...SearchPlan.belowScores(head.found, listed)],
            skipped: head.bad.length + rest.bad.length
          }
        })

      return {
        take: (limit, ahead) =>
          take(limit, ahead).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("search")(e)))),
        searches: () => searches
      }
    }

    const service: MemoryStore.Service = {
      capabilities: { search: "keyword" },

      write: (inputs) =>
        Effect.gen(function*() {
          const records = yield* MemoryWrite.prepareRecords(inputs)
          if (records.length === 0) return records
          yield* ensureStorable(records)
          return yield* sql.withTransaction(insertAll(records)).pipe(
            Effect.catchTag("SqlError", (e) => Effect.fail(failure("write")(e)))
          )
        }),

      restore: (input) =>
        Effect.gen(function*() {
          const records = yield* MemoryWrite.validateRecords(input)
          if (records.length === 0) return
          yield* ensureStorable(records)
          yield* sql.withTransaction(insertAll(records)).pipe(
            Effect.catchTag("SqlError", (e) => Effect.fail(failure("restore")(e)))
          )
        }),

      get: (ids, options) =>
        Effect.gen(function*() {
          if (ids.length === 0) return { records: [], skipped: 0 }
          const scopes = options?.scopes
          const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE id = ANY(${[
            ...new Set(ids)
          ]}::text[])
          ${scopes === undefined ? sql`` : sql`AND scope = ANY(${scopes}::text[])`}`.pipe(
            Effect.mapError(failure("get"))
          )
          const { skipped, values: records } = yield* decodeRows(rows, (record) => record)
          const byId = new Map(records.map((r) => [r.id, r]))
          return { records: ids.flatMap((id) => byId.get(id) ?? []), skipped }
        }),

      list: (raw) =>
        Effect.gen(function*() {
          const query = yield* MemoryWrite.decodeQuery(MemoryQuery.ListQuery, raw ?? {})
          const position = query.cursor === undefined ? undefined : yield* MemoryQuery.decodeCursor(query.cursor)
          const limit = query.limit ?? MemoryQuery.DEFAULT_LIST_LIMIT
          const clauses = filterClauses(query, yield* nowMillis)
          if (position !== undefined) {
            // Strictly after the position in (created_at DESC, id ASC) order. The separate
            // "created_at <=" bound lets an index scan start at the position instead of filtering
            // every newer row (mixed sort directions rule out a row comparison).
            const at = position.createdAtMillis
            clauses.push(sql`created_at <= ${at} AND (created_at < ${at} OR id > ${position.id})`)
          }
          const rows = yield* sql<Row>`SELECT ${selectColumns} FROM ${table} WHERE ${sql.and(clauses)}
          ORDER BY created_at DESC, id ASC LIMIT ${limit + 1}`.pipe(Effect.mapError(failure("list")))
          const pageRows = rows.slice(0, limit)
          const { skipped, values: records } = yield* decodeRows(pageRows, (record) => record)
          // The cursor is the last row's position, decodable or not, so a bad row is never read twice.
          const last = pageRows[pageRows.length - 1]
          return {
            records,
            skipped,
            nextCursor: rows.length > limit && last !== undefined
              ? MemoryQuery.encodeCursor({ createdAtMillis: Number(last.created_at), id: last.id })
              : undefined
          }
        }),

      // A search is its one take (decision 0236): the same statements as a search read in pages.
      search: (text, raw) => {
        const limit = raw?.limit ?? MemoryQuery.DEFAULT_SEARCH_LIMIT
        return openPages(text, raw, 1).take(limit, limit)
      },

      neighbours: (raw) =>
        Effect.gen(function*() {
          const query = yield* MemoryWrite.decodeNeighbourQuery(raw)
          const columns = MemoryRow.COLUMNS.map((c) => (c === "tags" ? "m.tags::text AS tags" : `m.${c}`)).join(", ")
          const read = yield* readNeighbours<Row>(sql, columns, query, yield* nowMillis).pipe(
            Effect.mapError(failure("neighbours"))
          )
          const { skipped, values: records } = yield* decodeRows(read.rows.map(({ row }) => row), (record) => record)
          const placeOf = new Map(read.rows.map(({ place }) => [place.id, place]))
          // The places of the records around, then of the rows that decoded.
          return { records, skipped, places: [...read.around, ...records.map((record) => placeOf.get(record.id)!)] }
        }),

      setReviewState: (id, state) =>
        sql.withTransaction(
          Effect.gen(function*() {
            const record = yield* lockForUpdate(id, "setReviewState")
            const updated = MemoryWrite.withReviewState(record, state)
            yield* sql`UPDATE ${table} SET review_state = ${state} WHERE id = ${id}`
            return updated
          })
        ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("setReviewState")(e)))),

      supersede: (oldId, input) =>
        sql.withTransaction(
          Effect.gen(function*() {
            // The row lock makes concurrent supersessions of one record take turns: the second
            // one finds the record invalidated and fails with MemoryConflict.
            const original = yield* lockForUpdate(oldId, "supersede")
            const successor = yield* MemoryWrite.prepareSuccessor(original, input)
            yield* ensureStorable([successor])
            yield* insertAll([successor])
            const superseded = MemoryWrite.invalidatedBy(original, successor)
            yield* sql`UPDATE ${table} SET invalidated_at = ${millis(superseded.invalidatedAt)},
            invalidation_reason = ${superseded.invalidationReason ?? null},
            superseded_by = ${superseded.supersededBy ?? null}
            WHERE id = ${oldId}`
            return { superseded, successor }
          })
        ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("supersede")(e)))),

      expire: (id) =>
        sql.withTransaction(
          Effect.gen(function*() {
            const record = yield* lockForUpdate(id, "expire")
            const updated = MemoryWrite.expiredAt(record, yield* DateTime.now)
            if (updated !== record) {
              yield* sql`UPDATE ${table} SET expires_at = ${millis(updated.expiresAt)} WHERE id = ${id}`
            }
            return updated
          })
        ).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("expire")(e)))),

      corroborate: (id, options) =>
        Effect.flatMap(MemoryWrite.checkCorroboratingSession(options?.session), (session) =>
          sql.withTransaction(
            Effect.gen(function*() {
              // The row lock makes concurrent corroborations of one record take turns: none is lost.
              const record = yield* lockForUpdate(id, "corroborate")
              const updated = MemoryWrite.corroborated(record, { session, at: yield* DateTime.now })
              const row = MemoryRow.toRow(updated)
              yield* sql`UPDATE ${table} SET corroborations = ${row.corroborations},
              corroboration_sessions = ${row.corroboration_sessions}, corroborated_at = ${row.corroborated_at}
              WHERE id = ${id}`
              return updated
            })
          )).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("corroborate")(e)))),

      forget: (rawTarget, options) =>
        Effect.gen(function*() {
          const { by, target } = yield* MemoryForget.decodeForget(rawTarget, options.by)
          const at = yield* DateTime.now
          const where = "scope" in target
            ? sql`scope = ${target.scope}`
            : sql`id = ANY(${[...new Set(target.ids)]}::text[])
            ${target.scopes === undefined ? sql`` : sql`AND scope = ANY(${target.scopes}::text[])`}`
          return yield* sql.withTransaction(Effect.gen(function*() {
            // Deleting the row takes its tsvector (the search index) with it.
            const gone = yield* sql<
              { id: string; scope: string; content: string; supersedes: string | null; superseded_by: string | null }
            >`DELETE FROM ${table} WHERE ${where} RETURNING id, scope, content, supersedes, superseded_by`
            const tombstones = gone
              .map((row) => MemoryForget.tombstoneOf({ ...row, supersededBy: row.superseded_by }, at, by))
              .sort(MemoryForget.compareTombstones)
            if (tombstones.length > 0) {
              const rows = tombstones.map(MemoryForget.tombstoneRow)
              yield* sql`INSERT INTO ${sql(tombstoneTable)}
              (memory_id, scope, forgotten_at, forgotten_by, supersedes, superseded_by)
              SELECT * FROM unnest(${rows.map((r) => r.memory_id)}::text[], ${rows.map((r) => r.scope)}::text[],
                ${rows.map((r) => r.forgotten_at)}::bigint[], ${rows.map((r) => r.forgotten_by)}::text[],
                ${rows.map((r) => r.supersedes)}::text[], ${rows.map((r) => r.superseded_by)}::text[])`
            }
            yield* MemoryForget.forgetDependents(
              cascade,
              tombstones.map((t) => t.memoryId),
              gone.map((row) => ({ id: row.id, content: row.content }))
            )
            return { tombstones }
          }))
        }).pipe(Effect.catchTag("SqlError", (e) => Effect.fail(failure("forget")(e)))),

      tombstones: (query) =>
        Effect.gen(function*() {
          if (query?.ids?.length === 0 || query?.scopes?.length === 0) return []
          const rows = yield* sql<Record<string, unknown>>`
          SELECT memory_id, scope, forgotten_at, forgotten_by, supersedes, superseded_by FROM ${sql(tombstoneTable)}
          WHERE true
          ${query?.ids === undefined ? sql`` : sql`AND memory_id = ANY(${query.ids}::text[])`}
          ${query?.scopes === undefined ? sql`` : sql`AND scope = ANY(${query.scopes}::text[])`}
          ORDER BY memory_id, forgotten_at, seq`
          return rows.flatMap((row) => MemoryForget.fromTombstoneRow(row) ?? [])
        }).pipe(Effect.mapError(failure("tombstones")))
    }
    const store = yield* VectorIndex.attach(
      MemoryStore.withContract(
        MemoryStore.withPages(service, (text, options) => openPages(text, options, CANDIDATES_AHEAD))
      ),
      PgVectorIndex.make,
      embeddings
    )
    return yield* MemoryStore.withSearchDefaults(store, options.search)
  })

/** The store, after bringing its tables and stored search tokens up to date. */
export const make = makeAfter(Effect.zipRight(migrate, run(tombstones)), syncSearchTokens)

/** The store, after checking that the tables are already up to date (no DDL, no writes). */
export const makeWithoutMigrations = makeAfter(
  Effect.zipRight(ensureMigrated, ensure(tombstones)),
  () => checkSearchTokens
)
