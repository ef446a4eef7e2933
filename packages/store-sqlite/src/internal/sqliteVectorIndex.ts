/**
 * The SQLite vector index (decisions 0053, 0088): a sqlite-vec `vec0` virtual table keyed by the
 * record's rowid (`seq`) that carries, next to each vector, the record's filter columns as vec0
 * metadata — scope, kind, delivery policy, review state, whether it is live (not superseded) and
 * when it expires — so a KNN query (`embedding MATCH ? AND k = ?`) applies the search filters
 * while it scans, before the top k. Its partition key is a scope bucket: the first scopes each
 * get a bucket of their own (round robin over {@link BUCKETS}), so a scoped search scans only its
 * scopes' chunks, and a store with thousands of session scopes still holds at most
 * {@link BUCKETS} partly filled chunks.
 *
 * Triggers on the memory table keep the metadata in step with the record (a review, a supersede,
 * an expiry change) and delete a record's vector with the record; they need the vec0 module on
 * the connection that writes, so the memory store loads sqlite-vec whenever the table exists
 * ({@link loadForWrites}), with or without an embedder. The identity of the embedder is in
 * `engram_memory_vector_meta`; the vec0 table exists exactly when an identity is recorded (its
 * dimensions are part of its DDL), so claiming a store creates it and a reset recreates it.
 *
 * A read-only connection never migrates or claims: {@link open} returns none when the index is
 * not there yet (the store then searches lexically, with a logged note).
 *
 * @internal
 */
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Embeddings, MemoryQuery, type MemoryRecord, MemoryStoreError, type VectorIndex } from "@engram/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqliteVec from "sqlite-vec"
import { TABLE } from "./memoryTable.js"
import { runMigrations } from "./migrations.js"
import { filterClauses } from "./sqlFilters.js"
import { chunksOf } from "./sqlText.js"

/** The vec0 table (decision 0088). */
export const VECTOR_TABLE = "engram_memory_vec"
/** sqlite-vec's shadow table of the vec0 table's rowids: a plain table, readable without the module. */
const ROWIDS_TABLE = `${VECTOR_TABLE}_rowids`
/** The first layout (decision 0053): one BLOB per record in a plain table, scanned with a join. */
export const LEGACY_VECTOR_TABLE = "engram_memory_vectors"
export const VECTOR_META_TABLE = "engram_memory_vector_meta"
export const VECTOR_BUCKETS_TABLE = "engram_memory_vector_buckets"
export const VECTOR_MIGRATIONS_TABLE = "engram_memory_vector_migrations"

/** Partitions of the vec0 table: scopes share one when there are more scopes than this. */
export const BUCKETS = 16
/**
 * Vectors per vec0 chunk. vec0 allocates a chunk whole: 128 vectors of 1,536 dimensions is
 * 768 KiB, so at most {@link BUCKETS} partly filled chunks stay small; scans measured no slower
 * than with the default 1,024 at 10,000 vectors a scope.
 */
const CHUNK_SIZE = 128
/** The largest `k` sqlite-vec 0.1.9 accepts in a KNN query; a larger search scans exactly. */
const MAX_K = 4096
/** Extra neighbours a KNN query asks for, so ties at the k-th score can be ordered by id. */
const SPARE = 8
/**
 * The memory map a connection with the vector index reads through (decision 0102): SQLite's
 * largest (`SQLITE_MAX_MMAP_SIZE` of better-sqlite3's build; a larger request is clamped).
 */
const MMAP_BYTES = 2_147_418_112
/** `expires_at` of a record that never expires (vec0 metadata columns hold no NULL). */
const NEVER = "9223372036854775807"

const TRIGGERS = [`${VECTOR_TABLE}_sync`, `${VECTOR_TABLE}_forget`, `${VECTOR_TABLE}_rescope`]

/** The vec0 table for `dimensions`-long vectors, and the triggers that keep it in step with the records. */
const createIndexTable = (sql: SqlClient.SqlClient, dimensions: number) =>
  Effect.gen(function*() {
    yield* sql.unsafe(
      `CREATE VIRTUAL TABLE ${VECTOR_TABLE} USING vec0(seq INTEGER PRIMARY KEY, bucket INTEGER PARTITION KEY, ` +
        "scope TEXT, kind TEXT, delivery_policy TEXT, review_state TEXT, live INTEGER, expires_at INTEGER, " +
        `embedding float[${dimensions}] distance_metric=cosine, chunk_size=${CHUNK_SIZE})`
    )
    yield* sql.unsafe(
      `CREATE TRIGGER ${TRIGGERS[0]} AFTER UPDATE OF kind, delivery_policy, review_state, invalidated_at, expires_at ` +
        `ON ${TABLE} BEGIN UPDATE ${VECTOR_TABLE} SET kind = new.kind, delivery_policy = new.delivery_policy, ` +
        "review_state = new.review_state, live = (new.invalidated_at IS NULL), " +
        `expires_at = coalesce(new.expires_at, ${NEVER}) WHERE seq = new.seq; END`
    )
    yield* sql.unsafe(
      `CREATE TRIGGER ${TRIGGERS[1]} AFTER DELETE ON ${TABLE} ` +
        `BEGIN DELETE FROM ${VECTOR_TABLE} WHERE seq = old.seq; END`
    )
    // The store never moves a record to another scope; if anything does, its vector goes (its
    // bucket would be wrong) and `engram embed` backfills it.
    yield* sql.unsafe(
      `CREATE TRIGGER ${TRIGGERS[2]} AFTER UPDATE OF scope ON ${TABLE} WHEN old.scope IS NOT new.scope ` +
        `BEGIN DELETE FROM ${VECTOR_TABLE} WHERE seq = old.seq; END`
    )
  })

const dropIndexTable = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    for (const trigger of TRIGGERS) yield* sql.unsafe(`DROP TRIGGER IF EXISTS ${trigger}`)
    yield* sql.unsafe(`DROP TABLE IF EXISTS ${VECTOR_TABLE}`)
    yield* sql.unsafe(`DELETE FROM ${VECTOR_BUCKETS_TABLE}`)
  })

/** Gives every scope of the records `seqSource` selects a bucket, round robin in order of arrival. */
const assignBuckets = (sql: SqlClient.SqlClient, scopes: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    if (scopes.length === 0) return
    const known = new Set(
      (yield* sql<{ scope: string }>`SELECT scope FROM ${sql(VECTOR_BUCKETS_TABLE)} WHERE ${sql.in("scope", scopes)}`)
        .map((row) => row.scope)
    )
    const fresh = [...new Set(scopes)].filter((scope) => !known.has(scope)).sort()
    if (fresh.length === 0) return
    const [count] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(VECTOR_BUCKETS_TABLE)}`
    let next = count?.n ?? 0
    for (const chunk of chunksOf(fresh, 400)) {
      yield* sql.unsafe(
        `INSERT INTO ${VECTOR_BUCKETS_TABLE} (scope, bucket) VALUES ${chunk.map(() => "(?, ?)").join(", ")}`,
        chunk.flatMap((scope) => [scope, next++ % BUCKETS])
      )
    }
  })

/** `INSERT INTO vec0 … SELECT` the record's filter columns from the memory table, by record id. */
const insertVectorsSql = (rows: number) =>
  `INSERT INTO ${VECTOR_TABLE} (seq, bucket, scope, kind, delivery_policy, review_state, live, expires_at, embedding) ` +
  "SELECT m.seq, b.bucket, m.scope, m.kind, m.delivery_policy, m.review_state, m.invalidated_at IS NULL, " +
  `coalesce(m.expires_at, ${NEVER}), x.column2 FROM (VALUES ${new Array(rows).fill("(?, ?)").join(", ")}) x ` +
  `JOIN ${TABLE} m ON m.id = x.column1 JOIN ${VECTOR_BUCKETS_TABLE} b ON b.scope = m.scope`

const decodeIdentity = Schema.decodeUnknownOption(Schema.parseJson(Embeddings.EmbedderIdentity))

/** {@link decodeIdentity}, remembering the last text decoded: every search reads the same one. */
const decodeStoredIdentity = (() => {
  let last: { readonly text: string; readonly identity: Option.Option<Embeddings.EmbedderIdentity> } | undefined
  return (text: string) => {
    if (last?.text !== text) last = { text, identity: decodeIdentity(text) }
    return last.identity
  }
})()

const readIdentityWith = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<{ value: string }>`SELECT value FROM ${sql(VECTOR_META_TABLE)} WHERE key = 'embedder'`,
    (rows) => (rows[0] === undefined ? Option.none() : decodeIdentity(rows[0].value))
  )

const tableExists = (sql: SqlClient.SqlClient, name: string) =>
  Effect.map(
    sql<{ n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE name = ${name}`,
    (rows) => (rows[0]?.n ?? 0) > 0
  )

const migrations = {
  "0001_memory_vectors": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${LEGACY_VECTOR_TABLE} (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL)`)
    yield* sql.unsafe(`CREATE TABLE ${VECTOR_META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`)
    yield* sql.unsafe(
      `CREATE TRIGGER ${LEGACY_VECTOR_TABLE}_forget AFTER DELETE ON ${TABLE} ` +
        `BEGIN DELETE FROM ${LEGACY_VECTOR_TABLE} WHERE seq = old.seq; END`
    )
  }),
  // The vec0 layout (decision 0088): the vectors of a store already embedded move over, those
  // of the embedder's dimensions; the plain table and its trigger go.
  "0002_vec0_index": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe(`CREATE TABLE ${VECTOR_BUCKETS_TABLE} (scope TEXT PRIMARY KEY, bucket INTEGER NOT NULL)`)
    yield* sql.unsafe(`DROP TRIGGER IF EXISTS ${LEGACY_VECTOR_TABLE}_forget`)
    const identity = yield* readIdentityWith(sql)
    if (Option.isSome(identity)) {
      const dimensions = identity.value.dimensions
      yield* createIndexTable(sql, dimensions)
      const scopes = yield* sql<{ scope: string }>`SELECT DISTINCT m.scope AS scope FROM ${sql(LEGACY_VECTOR_TABLE)} v
        JOIN ${sql(TABLE)} m ON m.seq = v.seq ORDER BY m.scope`
      yield* assignBuckets(sql, scopes.map((row) => row.scope))
      yield* sql.unsafe(
        `INSERT INTO ${VECTOR_TABLE} (seq, bucket, scope, kind, delivery_policy, review_state, live, expires_at, ` +
          "embedding) SELECT m.seq, b.bucket, m.scope, m.kind, m.delivery_policy, m.review_state, " +
          `m.invalidated_at IS NULL, coalesce(m.expires_at, ${NEVER}), v.embedding FROM ${LEGACY_VECTOR_TABLE} v ` +
          `JOIN ${TABLE} m ON m.seq = v.seq JOIN ${VECTOR_BUCKETS_TABLE} b ON b.scope = m.scope ` +
          `WHERE length(v.embedding) = ${dimensions * 4} ORDER BY m.seq`
      )
      const [moved] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(ROWIDS_TABLE)}`
      yield* Effect.logInfo(`moved ${moved?.n ?? 0} stored vectors to the sqlite-vec index (decision 0088)`)
    }
    yield* sql.unsafe(`DROP TABLE ${LEGACY_VECTOR_TABLE}`)
  })
}

/** Rows per multi-row upsert: two binds a row, far below SQLite's variable limit. */
const UPSERT_CHUNK = 500

const blobOf = (vector: Float32Array): Uint8Array => new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)

const failure = (operation: string) => (error: SqlError) =>
  new MemoryStoreError.MemoryStoreFailure({
    operation,
    cause: new Error(
      error.cause instanceof Error ? `${error.message.trim()}: ${error.cause.message}` : error.message,
      { cause: error }
    )
  })

/**
 * Memory-maps the database file for the connection, unless it maps more already (decision 0102).
 * vec0 keeps each chunk's vectors in one blob of many overflow pages, and SQLite (built with
 * `SQLITE_DIRECT_OVERFLOW_READ`) reads overflow pages that are not in the write-ahead log straight
 * from the file, one `pread` a page, bypassing its page cache: a scoped KNN over 10,000 vectors of
 * 256 dimensions made 2,500 system calls. Through the map it copies them from memory.
 */
const mapFile = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const [current] = yield* sql.unsafe<{ mmap_size: number }>("PRAGMA mmap_size")
    if ((current?.mmap_size ?? 0) < MMAP_BYTES) yield* sql.unsafe(`PRAGMA mmap_size = ${MMAP_BYTES}`)
  }).pipe(Effect.mapError(failure("map the database file")))

/** Loads sqlite-vec into the SQLite connection of the context. */
const loadExtension = (client: SqliteClient.SqliteClient) =>
  Effect.try({
    // getLoadablePath throws on a platform sqlite-vec ships no binary for, or when its binary
    // package was not installed.
    try: () => SqliteVec.getLoadablePath(),
    catch: (cause) =>
      new MemoryStoreError.MemoryStoreFailure({
        operation: "load sqlite-vec",
        cause: cause instanceof Error ? cause : new Error(String(cause))
      })
  }).pipe(
    Effect.flatMap((path) => client.loadExtension(path).pipe(Effect.mapError(failure("load sqlite-vec"))))
  )

// sqlite-vec is loaded into this connection: the index runs on the SqliteClient, never a bare SqlClient.
const sqliteClient = SqliteClient.SqliteClient

/**
 * For a store opened without an embedder: when the database holds the vec0 index and the
 * connection may write, loads sqlite-vec so the memory table's triggers (which update the index)
 * can run. A failure to load is logged: reads work, and a write that fires a trigger fails with
 * SQLite's "no such module: vec0".
 */
export const loadForWrites: Effect.Effect<void, never, SqlClient.SqlClient | SqliteClient.SqliteClient> = Effect
  .gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const client = yield* SqliteClient.SqliteClient
    if (client.config.readonly === true) return
    if (!(yield* tableExists(sql, VECTOR_TABLE))) return
    yield* loadExtension(client)
  }).pipe(
    Effect.catchAll((error) =>
      Effect.logWarning("sqlite-vec could not be loaded: writes that change embedded records will fail").pipe(
        Effect.annotateLogs({ cause: String(error) })
      )
    )
  )

/**
 * What a search reads before its KNN queries, in one statement: the stored embedder identity
 * (no row when none is stored) and the buckets of the scopes it names (`scopes` undefined: none).
 */
const searchPrelude = (sql: SqlClient.SqlClient, scopes: ReadonlyArray<string> | undefined) =>
  sql<{ identity: string; scope: string | null; bucket: number | null }>`
    SELECT m.value AS identity, b.scope AS scope, b.bucket AS bucket FROM ${sql(VECTOR_META_TABLE)} m
    LEFT JOIN ${sql(VECTOR_BUCKETS_TABLE)} b ON ${
    scopes === undefined || scopes.length === 0 ? sql.literal("0") : sql`b.scope IN ${sql.in(scopes)}`
  }
    WHERE m.key = 'embedder'`

/** The scopes of a search's prelude grouped by their bucket; scopes without a bucket have no vectors. */
const bucketGroups = (rows: ReadonlyArray<{ readonly scope: string | null; readonly bucket: number | null }>) => {
  const groups = new Map<number, Array<string>>()
  for (const { bucket, scope } of rows) {
    if (bucket !== null && scope !== null) groups.set(bucket, [...(groups.get(bucket) ?? []), scope])
  }
  return [...groups.entries()].map(([bucket, scopes]) => ({ bucket, scopes }))
}

/** The filters as vec0 KNN constraints over the table's metadata columns (decision 0088). */
const knnClauses = (sql: SqlClient.SqlClient, filters: MemoryQuery.MemoryFilters, nowMillis: number) => {
  const clauses = [sql.literal("1=1")]
  if (filters.kinds !== undefined) clauses.push(sql.in("kind", filters.kinds))
  if (filters.deliveryPolicies !== undefined) clauses.push(sql.in("delivery_policy", filters.deliveryPolicies))
  if (filters.reviewStates !== undefined) clauses.push(sql.in("review_state", filters.reviewStates))
  if (filters.deliverable === true) {
    clauses.push(sql`review_state != 'rejected' AND live = 1 AND expires_at > CAST(${nowMillis} AS INTEGER)`)
  } else if (filters.includeSuperseded !== true) {
    clauses.push(sql.literal("live = 1"))
  }
  return clauses
}

type Match = { readonly id: MemoryRecord.MemoryId; readonly score: number }

const byScoreThenId = (a: Match, b: Match) => b.score - a.score || MemoryQuery.compareRaw(a.id, b.id)

/**
 * Opens the index over the ambient connection: loads sqlite-vec and migrates the vector tables.
 * On a read-only connection it writes nothing: when the tables are not current, or no embedder
 * has claimed the store, it returns none.
 */
export const open: Effect.Effect<
  Option.Option<VectorIndex.Service>,
  MemoryStoreError.MemoryStoreFailure,
  SqlClient.SqlClient | SqliteClient.SqliteClient
> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const client = yield* sqliteClient
  const readonly = client.config.readonly === true
  yield* loadExtension(client)
  yield* mapFile(sql)
  if (readonly) {
    const current = yield* Effect.gen(function*() {
      if (!(yield* tableExists(sql, VECTOR_MIGRATIONS_TABLE))) return false
      const [applied] = yield* sql<{ n: number }>`SELECT count(*) AS n FROM ${sql(VECTOR_MIGRATIONS_TABLE)}`
      return applied?.n === Object.keys(migrations).length && Option.isSome(yield* readIdentityWith(sql))
    }).pipe(Effect.mapError(failure("open vectors")))
    if (!current) return Option.none()
  } else {
    yield* runMigrations(VECTOR_MIGRATIONS_TABLE, migrations).pipe(
      Effect.mapError((error) =>
        new MemoryStoreError.MemoryStoreFailure({ operation: "migrate vectors", cause: new Error(error.message) })
      )
    )
  }

  const readIdentity = readIdentityWith(sql).pipe(Effect.mapError(failure("vectors identity")))

  const writeIdentity = (identity: Embeddings.EmbedderIdentity) =>
    sql`INSERT INTO ${sql(VECTOR_META_TABLE)} (key, value) VALUES ('embedder', ${JSON.stringify(identity)})
        ON CONFLICT (key) DO UPDATE SET value = excluded.value`

  /** Records `identity` and creates its vec0 table: the two exist together. */
  const adopt = (identity: Embeddings.EmbedderIdentity, operation = "vectors claim") =>
    sql.withTransaction(Effect.gen(function*() {
      yield* dropIndexTable(sql)
      yield* createIndexTable(sql, identity.dimensions)
      yield* writeIdentity(identity)
    })).pipe(Effect.mapError(failure(operation)))

  /** Fails unless `given` is the stored identity (or none is stored and `claim` records it). */
  const check = (given: Embeddings.EmbedderIdentity, claim: boolean) =>
    Embeddings.checkIdentity(readIdentity, (identity) => adopt(identity), given, claim && !readonly)

  /** The exact scan the KNN query stands in for: every admitted vector, through the memory table. */
  const exactScan = (vector: Float32Array, filters: MemoryQuery.MemoryFilters, limit: number, now: number) =>
    sql<Match>`
      SELECT m.id AS id, round(1 - vec_distance_cosine(v.embedding, ${blobOf(vector)}), 6) AS score
      FROM ${sql(TABLE)} m JOIN ${sql(VECTOR_TABLE)} v ON v.seq = m.seq
      WHERE ${sql.and(filterClauses(sql, filters, now))}
      ORDER BY score DESC, m.id ASC LIMIT ${limit}`

  /**
   * One KNN query (one bucket, or all), with enough neighbours that the `limit`-th score's ties
   * are all in: ties are ordered by id here, and vec0 orders them as it finds them.
   */
  const knn = (
    vector: Float32Array,
    filters: MemoryQuery.MemoryFilters,
    bucket: { readonly bucket: number; readonly scopes: ReadonlyArray<string> } | undefined,
    limit: number,
    now: number
  ): Effect.Effect<ReadonlyArray<Match>, SqlError> =>
    Effect.gen(function*() {
      const constraints = knnClauses(sql, filters, now)
      if (bucket !== undefined) {
        constraints.push(sql`bucket = CAST(${bucket.bucket} AS INTEGER)`, sql.in("scope", bucket.scopes))
      }
      for (let k = limit + SPARE; k <= MAX_K; k *= 4) {
        const rows = yield* sql<Match>`
          WITH knn AS (
            SELECT seq, distance FROM ${sql(VECTOR_TABLE)}
            WHERE embedding MATCH ${blobOf(vector)} AND k = CAST(${k} AS INTEGER) AND ${sql.and(constraints)}
          )
          SELECT m.id AS id, round(1 - knn.distance, 6) AS score FROM knn JOIN ${sql(TABLE)} m ON m.seq = knn.seq
          ORDER BY score DESC, m.id ASC`
        const sorted = [...rows].sort(byScoreThenId)
        const settled = rows.length < k || sorted.length <= limit ||
          sorted[sorted.length - 1]!.score < sorted[limit - 1]!.score
        if (settled) return sorted.slice(0, limit)
      }
      return yield* exactScan(
        vector,
        {
          ...filters,
          ...(bucket === undefined ? {} : { scopes: bucket.scopes })
        },
        limit,
        now
      )
    })

  const service: VectorIndex.Service = {
    method: "sqlite-vec",
    identity: readIdentity,
    claim: (identity) => check(identity, true),
    reset: (identity) => adopt(identity, "vectors reset"),
    upsert: (identity, entries) =>
      Effect.gen(function*() {
        yield* Embeddings.checkLengths(identity, entries.map((entry) => entry.vector))
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* check(identity, true)
          for (const chunk of chunksOf(entries, UPSERT_CHUNK)) {
            const ids = chunk.map((entry) => entry.id)
            const scopes = yield* sql<{ scope: string }>`SELECT DISTINCT scope FROM ${sql(TABLE)} WHERE ${
              sql.in("id", ids)
            }`
            yield* assignBuckets(sql, scopes.map((row) => row.scope))
            // vec0 has no upsert: the old vectors go first. They are looked up in the rowids
            // shadow table and deleted one by one: vec0 answers `seq IN (…)` with a scan of the
            // whole table, which made every batch of a large store's writes read all its vectors
            // (decision 0102). Only ids of stored records are inserted: a vector never outlives
            // (or precedes) its record.
            const replaced = yield* sql<{ seq: number }>`SELECT rowid AS seq FROM ${sql(ROWIDS_TABLE)}
              WHERE rowid IN (SELECT seq FROM ${sql(TABLE)} WHERE ${sql.in("id", ids)})`
            for (const { seq } of replaced) {
              yield* sql`DELETE FROM ${sql(VECTOR_TABLE)} WHERE seq = CAST(${seq} AS INTEGER)`
            }
            yield* sql.unsafe(
              insertVectorsSql(chunk.length),
              chunk.flatMap((entry) => [entry.id, blobOf(entry.vector)])
            )
          }
        })).pipe(
          Effect.catchTag("SqlError", (error) => Effect.fail(failure("vectors upsert")(error)))
        )
      }),
    search: (identity, vector, filters, limit) =>
      Effect.gen(function*() {
        // One statement for the identity check and the buckets: a search's fixed cost is its
        // statements (decision 0102).
        const prelude = yield* searchPrelude(sql, filters.scopes).pipe(Effect.mapError(failure("vector search")))
        const stored = prelude[0] === undefined ? Option.none() : decodeStoredIdentity(prelude[0].identity)
        yield* Embeddings.checkIdentity(Effect.succeed(stored), () => Effect.void, identity, false)
        yield* Embeddings.checkLengths(identity, [vector])
        if (Option.isNone(stored)) return []
        const now = yield* Clock.currentTimeMillis
        const empty = [filters.scopes, filters.kinds, filters.deliveryPolicies, filters.reviewStates]
          .some((values) => values !== undefined && values.length === 0)
        if (empty) return []
        if (limit > MAX_K - SPARE) {
          return yield* exactScan(vector, filters, limit, now).pipe(Effect.mapError(failure("vector search")))
        }
        const groups = filters.scopes === undefined ? [undefined] : bucketGroups(prelude)
        const found: Array<Match> = []
        for (const group of groups) {
          found.push(
            ...(yield* knn(vector, filters, group, limit, now).pipe(Effect.mapError(failure("vector search"))))
          )
        }
        return found.sort(byScoreThenId).slice(0, limit)
      }),
    unembedded: (limit) =>
      Effect.flatMap(
        Clock.currentTimeMillis,
        (now) =>
          Effect.flatMap(tableExists(sql, ROWIDS_TABLE), (exists) =>
            sql<{ id: MemoryRecord.MemoryId }>`
            SELECT m.id AS id FROM ${sql(TABLE)} m ${
              exists
                ? sql`LEFT JOIN ${sql(ROWIDS_TABLE)} v ON v.rowid = m.seq WHERE v.rowid IS NULL AND`
                : sql.literal("WHERE")
            } ${sql.and(filterClauses(sql, { deliverable: true }, now))}
            ORDER BY m.seq LIMIT ${limit}`)
      ).pipe(Effect.map((rows) => rows.map((row) => row.id))).pipe(
        Effect.mapError(failure("vectors backfill"))
      ),
    coverage: Effect.flatMap(
      Clock.currentTimeMillis,
      (now) =>
        Effect.flatMap(tableExists(sql, ROWIDS_TABLE), (exists) =>
          sql<{ deliverable: number; embedded: number }>`
          SELECT count(*) AS deliverable, ${exists ? sql.literal("count(v.rowid)") : sql.literal("0")} AS embedded
          FROM ${sql(TABLE)} m ${exists ? sql`LEFT JOIN ${sql(ROWIDS_TABLE)} v ON v.rowid = m.seq` : sql.literal("")}
          WHERE ${sql.and(filterClauses(sql, { deliverable: true }, now))}`)
    ).pipe(
      Effect.map((rows) => ({ deliverable: rows[0]?.deliverable ?? 0, embedded: rows[0]?.embedded ?? 0 }))
    ).pipe(Effect.mapError(failure("vectors coverage")))
  }
  return Option.some(service)
})

/** Loads sqlite-vec into the connection, migrates the vector tables and builds the index. */
export const make: Effect.Effect<
  VectorIndex.Service,
  MemoryStoreError.MemoryStoreFailure,
  SqlClient.SqlClient | SqliteClient.SqliteClient
> = Effect
  .flatMap(
    open,
    (index) =>
      Option.isSome(index) ? Effect.succeed(index.value) : new MemoryStoreError.MemoryStoreFailure({
        operation: "open vectors",
        cause: new Error(
          "the database is open read-only and has no vector index for an embedder yet: open it writable once " +
            "(any command that writes, or `engram embed`)"
        )
      })
  )
