/**
 * The PostgreSQL vector index (decision 0053): one `real[]` per record in `engram_memory_vectors`
 * (deleted with its record by the foreign key), the embedder's identity in
 * `engram_memory_vector_meta`, and an exact scan of the vectors the filters admit, inside
 * PostgreSQL, so the filters apply before the top k. Where the database has the pgvector
 * extension installed, the scan uses its `<=>` distance on the same column (cast to `vector`);
 * elsewhere — this project's CI among them — the dot product is summed in SQL over `unnest`.
 * The tables are created by their own migrations the first time a store opens with an embedder.
 *
 * @internal
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Embeddings, type MemoryQuery, type MemoryRecord, MemoryStoreError, type VectorIndex } from "@engram/core"
import * as Clock from "effect/Clock"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { reasonOf } from "../PgError.js"
import { filterClauses } from "./filters.js"
import { memoryTable, run, VECTOR_META_TABLE, VECTOR_TABLE, vectors } from "./migrations.js"

const UPSERT_CHUNK = 500

const decodeIdentity = Schema.decodeUnknownOption(Schema.parseJson(Embeddings.EmbedderIdentity))

/** A vector as a PostgreSQL array literal (`{0.1,-0.2}`), which also casts to pgvector's `vector`. */
const literal = (vector: Float32Array): string => `{${Array.from(vector).join(",")}}`

const failure = (operation: string) => (error: SqlError) =>
  new MemoryStoreError.MemoryStoreFailure({ operation, cause: reasonOf(error) })

export const make: Effect.Effect<VectorIndex.Service, MemoryStoreError.MemoryStoreFailure, SqlClient.SqlClient> = Effect
  .gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* run(vectors).pipe(
      Effect.mapError((error) =>
        new MemoryStoreError.MemoryStoreFailure({
          operation: "migrate vectors",
          cause: error instanceof Error ? error : new Error(String(error))
        })
      )
    )
    const [extension] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_extension WHERE extname = 'vector'`
      .pipe(Effect.mapError(failure("vectors")))
    const pgvector = (extension?.n ?? 0) > 0

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

    const where = (filters: MemoryQuery.MemoryFilters, now: number) => {
      const clauses = filterClauses(sql, filters, now)
      return clauses.length === 0 ? sql`true` : sql.and(clauses)
    }

    const similarity = (query: string) =>
      pgvector
        ? sql`1 - (v.embedding::vector <=> ${query}::vector)`
        : sql`(SELECT sum(a * b) FROM unnest(v.embedding, ${query}::real[]) AS t (a, b))`

    const service: VectorIndex.Service = {
      method: pgvector ? "pgvector" : "exact",
      identity: readIdentity,
      claim: (identity) => check(identity, true),
      reset: (identity) =>
        sql.withTransaction(Effect.zipRight(sql`DELETE FROM ${sql(VECTOR_TABLE)}`, writeIdentity(identity))).pipe(
          Effect.asVoid,
          Effect.mapError(failure("vectors reset"))
        ),
      upsert: (identity, entries) =>
        Effect.gen(function*() {
          yield* Embeddings.checkLengths(identity, entries.map((entry) => entry.vector))
          yield* sql.withTransaction(Effect.gen(function*() {
            yield* check(identity, true)
            for (let start = 0; start < entries.length; start += UPSERT_CHUNK) {
              const chunk = entries.slice(start, start + UPSERT_CHUNK)
              // Only ids of stored records: a vector never outlives (or precedes) its record.
              yield* sql`INSERT INTO ${sql(VECTOR_TABLE)} (id, embedding)
                SELECT u.id, u.embedding::real[]
                FROM unnest(${chunk.map((e) => e.id)}::text[], ${chunk.map((e) => literal(e.vector))}::text[])
                  AS u (id, embedding)
                WHERE EXISTS (SELECT 1 FROM ${sql(memoryTable)} m WHERE m.id = u.id)
                ON CONFLICT (id) DO UPDATE SET embedding = excluded.embedding`.pipe(
                Effect.mapError(failure("vectors upsert"))
              )
            }
          })).pipe(Effect.catchTag("SqlError", (error) => Effect.fail(failure("vectors upsert")(error))))
        }),
      search: (identity, vector, filters, limit) =>
        Effect.gen(function*() {
          yield* check(identity, false)
          yield* Embeddings.checkLengths(identity, [vector])
          const now = yield* Clock.currentTimeMillis
          const rows = yield* sql<{ id: MemoryRecord.MemoryId; score: number }>`
            SELECT id, score FROM (
              SELECT v.id AS id, round((${similarity(literal(vector))})::numeric, 6)::float8 AS score
              FROM ${sql(VECTOR_TABLE)} v
              WHERE v.id IN (SELECT id FROM ${sql(memoryTable)} WHERE ${where(filters, now)})
            ) s ORDER BY score DESC, id ASC LIMIT ${limit}`.pipe(Effect.mapError(failure("vector search")))
          return rows.map((row) => ({ id: row.id, score: Number(row.score) }))
        }),
      unembedded: (limit) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          sql<{ id: MemoryRecord.MemoryId }>`
            SELECT m.id AS id FROM ${sql(memoryTable)} m
            WHERE NOT EXISTS (SELECT 1 FROM ${sql(VECTOR_TABLE)} v WHERE v.id = m.id)
              AND m.id IN (SELECT id FROM ${sql(memoryTable)} WHERE ${where({ deliverable: true }, now)})
            ORDER BY m.created_at, m.id LIMIT ${limit}`).pipe(
            Effect.map((rows) => rows.map((row) => row.id)),
            Effect.mapError(failure("vectors backfill"))
          ),
      coverage: Effect.flatMap(Clock.currentTimeMillis, (now) =>
        sql<{ deliverable: number; embedded: number }>`
          SELECT count(*)::int AS deliverable, count(v.id)::int AS embedded
          FROM ${sql(memoryTable)} m LEFT JOIN ${sql(VECTOR_TABLE)} v ON v.id = m.id
          WHERE m.id IN (SELECT id FROM ${sql(memoryTable)} WHERE ${where({ deliverable: true }, now)})`).pipe(
          Effect.map((rows) => ({ deliverable: rows[0]?.deliverable ?? 0, embedded: rows[0]?.embedded ?? 0 })),
          Effect.mapError(failure("vectors coverage"))
        )
    }
    return service
  })
