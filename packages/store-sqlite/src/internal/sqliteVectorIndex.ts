/**
 * The SQLite vector index (decision 0053): one BLOB of 32-bit floats per record (by its rowid) in
 * `engram_memory_vectors`, the embedder's identity in `engram_memory_vector_meta`, and a search
 * that scans the vectors the filters admit with sqlite-vec's SIMD `vec_distance_cosine`, inside
 * SQLite, joined with the memory table so the filters apply before the top k. A trigger deletes a
 * record's vector with the record, so `forget` leaves nothing behind even without an embedder.
 * The tables are created by their own migrations, the first time a store is opened with an
 * embedder: a store never opened with one has none.
 *
 * @internal
 */
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Embeddings, type MemoryRecord, MemoryStoreError, type VectorIndex } from "@engram/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as SqliteVec from "sqlite-vec"
import { TABLE } from "./memoryTable.js"
import { runMigrations } from "./migrations.js"
import { filterClauses } from "./sqlFilters.js"
import { chunksOf } from "./sqlText.js"

export const VECTOR_TABLE = "engram_memory_vectors"
export const VECTOR_META_TABLE = "engram_memory_vector_meta"
export const VECTOR_MIGRATIONS_TABLE = "engram_memory_vector_migrations"

const migrations = {
  "0001_memory_vectors": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // Keyed by the record's rowid (`seq`): a rowid lookup per admitted record. A WITHOUT ROWID
    // table keyed by the text id measured ~10x slower per lookup with kilobyte-sized rows.
    yield* sql.unsafe(`CREATE TABLE ${VECTOR_TABLE} (seq INTEGER PRIMARY KEY, embedding BLOB NOT NULL)`)
    yield* sql.unsafe(`CREATE TABLE ${VECTOR_META_TABLE} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`)
    yield* sql.unsafe(
      `CREATE TRIGGER ${VECTOR_TABLE}_forget AFTER DELETE ON ${TABLE} ` +
        `BEGIN DELETE FROM ${VECTOR_TABLE} WHERE seq = old.seq; END`
    )
  })
}

/** Rows per multi-row upsert: two binds a row, far below SQLite's variable limit. */
const UPSERT_CHUNK = 500

const decodeIdentity = Schema.decodeUnknownOption(Schema.parseJson(Embeddings.EmbedderIdentity))

const blobOf = (vector: Float32Array): Uint8Array => new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength)

const failure = (operation: string) => (error: SqlError) =>
  new MemoryStoreError.MemoryStoreFailure({
    operation,
    cause: new Error(
      error.cause instanceof Error ? `${error.message.trim()}: ${error.cause.message}` : error.message,
      { cause: error }
    )
  })

/** Loads sqlite-vec into the connection, migrates the vector tables and builds the index. */
export const make: Effect.Effect<VectorIndex.Service, MemoryStoreError.MemoryStoreFailure, SqlClient.SqlClient> = Effect
  .gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const client = yield* Effect.serviceOption(SqliteClient.SqliteClient)
    if (Option.isNone(client)) {
      return yield* new MemoryStoreError.MemoryStoreFailure({
        operation: "vectors",
        cause: new Error("the SQLite vector index needs the SqliteClient (sqlite-vec is loaded into its connection)")
      })
    }
    // getLoadablePath throws on a platform sqlite-vec ships no binary for, or when its binary
    // package was not installed.
    const path = yield* Effect.try({
      try: () => SqliteVec.getLoadablePath(),
      catch: (cause) =>
        new MemoryStoreError.MemoryStoreFailure({
          operation: "load sqlite-vec",
          cause: cause instanceof Error ? cause : new Error(String(cause))
        })
    })
    yield* client.value.loadExtension(path).pipe(Effect.mapError(failure("load sqlite-vec")))
    yield* runMigrations(VECTOR_MIGRATIONS_TABLE, migrations).pipe(
      Effect.mapError((error) =>
        new MemoryStoreError.MemoryStoreFailure({ operation: "migrate vectors", cause: new Error(error.message) })
      )
    )

    const readIdentity = Effect.map(
      sql<{ value: string }>`SELECT value FROM ${sql(VECTOR_META_TABLE)} WHERE key = 'embedder'`,
      (rows) => (rows[0] === undefined ? Option.none() : decodeIdentity(rows[0].value))
    ).pipe(Effect.mapError(failure("vectors identity")))

    const writeIdentity = (identity: Embeddings.EmbedderIdentity) =>
      sql`INSERT INTO ${sql(VECTOR_META_TABLE)} (key, value) VALUES ('embedder', ${JSON.stringify(identity)})
          ON CONFLICT (key) DO UPDATE SET value = excluded.value`

    /** Fails unless `given` is the stored identity (or none is stored and `adopt` records it). */
    const check = (given: Embeddings.EmbedderIdentity, adopt: boolean) =>
      Embeddings.checkIdentity(
        readIdentity,
        (identity) => writeIdentity(identity).pipe(Effect.mapError(failure("vectors claim"))),
        given,
        adopt
      )

    const service: VectorIndex.Service = {
      method: "sqlite-vec",
      identity: readIdentity,
      claim: (identity) => check(identity, true),
      reset: (identity) =>
        sql.withTransaction(
          Effect.zipRight(sql`DELETE FROM ${sql(VECTOR_TABLE)}`, writeIdentity(identity))
        ).pipe(Effect.asVoid, Effect.mapError(failure("vectors reset"))),
      upsert: (identity, entries) =>
        Effect.gen(function*() {
          yield* Embeddings.checkLengths(identity, entries.map((entry) => entry.vector))
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* check(identity, true)
            for (const chunk of chunksOf(entries, UPSERT_CHUNK)) {
              // Only ids of stored records: a vector never outlives (or precedes) its record.
              yield* sql.unsafe(
                `INSERT INTO ${VECTOR_TABLE} (seq, embedding) SELECT m.seq, x.column2 FROM (VALUES ${
                  chunk.map(() => "(?, ?)").join(", ")
                }) x JOIN ${TABLE} m ON m.id = x.column1 WHERE true ` +
                  "ON CONFLICT (seq) DO UPDATE SET embedding = excluded.embedding",
                chunk.flatMap((entry) => [entry.id, blobOf(entry.vector)])
              ).pipe(Effect.mapError(failure("vectors upsert")))
            }
          })).pipe(
            Effect.catchTag("SqlError", (error) => Effect.fail(failure("vectors upsert")(error)))
          )
        }),
      search: (identity, vector, filters, limit) =>
        Effect.gen(function*() {
          yield* check(identity, false)
          yield* Embeddings.checkLengths(identity, [vector])
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql<{ id: MemoryRecord.MemoryId; score: number }>`
            SELECT m.id AS id, round(1 - vec_distance_cosine(v.embedding, ${blobOf(vector)}), 6) AS score
            FROM ${sql(VECTOR_TABLE)} v JOIN ${sql(TABLE)} m ON m.seq = v.seq
            WHERE ${sql.and(filterClauses(sql, filters, now))}
            ORDER BY score DESC, m.id ASC LIMIT ${limit}`.pipe(Effect.mapError(failure("vector search")))
          return rows.map((row) => ({ id: row.id, score: row.score }))
        }),
      unembedded: (limit) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          sql<{ id: MemoryRecord.MemoryId }>`
            SELECT m.id AS id FROM ${sql(TABLE)} m LEFT JOIN ${sql(VECTOR_TABLE)} v ON v.seq = m.seq
            WHERE v.seq IS NULL AND ${sql.and(filterClauses(sql, { deliverable: true }, now))}
            ORDER BY m.seq LIMIT ${limit}`).pipe(Effect.map((rows) => rows.map((row) => row.id))).pipe(
            Effect.mapError(failure("vectors backfill"))
          ),
      coverage: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql<{ deliverable: number; embedded: number }>`
          SELECT count(*) AS deliverable, count(v.seq) AS embedded
          FROM ${sql(TABLE)} m LEFT JOIN ${sql(VECTOR_TABLE)} v ON v.seq = m.seq
          WHERE ${sql.and(filterClauses(sql, { deliverable: true }, now))}`).pipe(
          Effect.map((rows) => ({ deliverable: rows[0]?.deliverable ?? 0, embedded: rows[0]?.embedded ?? 0 }))
        ).pipe(Effect.mapError(failure("vectors coverage")))
    }
    return service
  })
