/**
 * An `Embeddings` service that remembers every vector it made, on disk: the benches embed whole
 * datasets (tens of thousands of turns at tens of milliseconds each), and a second run should cost
 * nothing. Vectors are keyed by the SHA-256 of the text, in one SQLite file per embedder identity
 * (`<directory>/<model>-<dimensions>.sqlite`), so vectors of two embedders never mix. The encoder
 * itself is loaded only when a text is missing.
 *
 * The directory is outside the repository (`--vector-cache DIR`, or `ENGRAM_VECTOR_CACHE`); the
 * cache holds derived data of the datasets and is never committed.
 */
import { Embeddings } from "@engram/core"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

const hash = (text: string) => NodeCrypto.createHash("sha256").update(text).digest("hex")

/** What the cache did, for the bench's output. */
export interface CacheCounts {
  hits: number
  misses: number
  /** Milliseconds spent in the encoder on misses. */
  encoderMillis: number
}

/**
 * Wraps the embedder `load` would build (called at most once, on the first miss) in a cache under
 * `directory`. `identity` must be the identity `load`'s embedder has.
 */
export const cached = <E>(
  identity: Embeddings.EmbedderIdentity,
  load: Effect.Effect<Embeddings.Service, E>,
  directory: string
): { readonly service: Embeddings.Service; readonly counts: CacheCounts; readonly close: () => void } => {
  NodeFs.mkdirSync(directory, { recursive: true })
  const file = NodePath.join(
    directory,
    `${identity.model.replace(/[^A-Za-z0-9.@+-]+/g, "_")}-${identity.dimensions}.sqlite`
  )
  const db = new Database(file)
  db.pragma("journal_mode = WAL")
  db.exec("CREATE TABLE IF NOT EXISTS vectors (hash TEXT PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID")
  const read = db.prepare("SELECT vector FROM vectors WHERE hash = ?")
  const write = db.prepare("INSERT OR REPLACE INTO vectors (hash, vector) VALUES (?, ?)")
  const counts: CacheCounts = { hits: 0, misses: 0, encoderMillis: 0 }
  let inner: Embeddings.Service | undefined
  const embedder = Effect.suspend(() =>
    inner === undefined
      ? Effect.tap(
        Effect.mapError(load, (error) =>
          new Embeddings.EmbeddingFailure({ model: identity.model, reason: `could not load: ${String(error)}` })),
        (service) =>
          Effect.sync(() => {
            inner = service
          })
      )
      : Effect.succeed(inner)
  )
  const service = Embeddings.make({
    identity,
    batchSize: 64,
    embedMany: (texts) =>
      Effect.gen(function*() {
        const keys = texts.map(hash)
        const out: Array<Float32Array | undefined> = keys.map((key) => {
          const row = read.get(key) as { vector: Buffer } | undefined
          return row === undefined
            ? undefined
            : new Float32Array(
              row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength)
            )
        })
        const missing = out.flatMap((vector, i) => (vector === undefined ? [i] : []))
        counts.hits += texts.length - missing.length
        counts.misses += missing.length
        if (missing.length > 0) {
          const encoder = yield* embedder
          const started = performance.now()
          const made = yield* encoder.embed(missing.map((i) => texts[i]!))
          counts.encoderMillis += performance.now() - started
          db.transaction(() => {
            missing.forEach((i, j) => {
              out[i] = made[j]!
              write.run(keys[i]!, Buffer.from(made[j]!.buffer, made[j]!.byteOffset, made[j]!.byteLength))
            })
          })()
        }
        return out as Array<Float32Array>
      })
  })
  return { service, counts, close: () => db.close() }
}
