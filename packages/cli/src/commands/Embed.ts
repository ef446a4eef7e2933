/**
 * `engram embed --embedder test|local|openai [--model m] [--dimensions n] [--reembed]`: gives every
 * deliverable record of the store a vector — the ones a write stored without one (the embedder
 * failed, or the store was written without vectors) — with a progress bar on stderr.
 * A store whose vectors came from another embedder is refused until `--reembed`, which deletes
 * them all and embeds every deliverable record again with the new one.
 *
 * The CLI ships no model: `--embedder test` is the deterministic test embedder (no network);
 * `--embedder local` the offline sentence encoder of `@engram/embedder-local`, when that package is
 * installed beside the CLI (no key, no network); `--embedder openai` uses OpenAI's embeddings API through `@effect/ai-openai` and needs
 * `OPENAI_API_KEY` (the client is built by `Provider`, as `engram extract`'s language model is). The
 * commands that recall take the same choice (`Embedder`) to search the vectors it stores.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Embeddings from "@engram/core/Embeddings"
import * as MemoryStore from "@engram/core/MemoryStore"
import * as VectorIndex from "@engram/core/VectorIndex"
import * as SqliteVectorIndex from "@engram/store-sqlite/SqliteVectorIndex"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import { toCliFailure } from "../CliError.js"
import * as Embedder from "../Embedder.js"
import * as Flags from "../Flags.js"
import * as Progress from "../Progress.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

/** Records read and embedded per step. */
const BATCH = 256

const { OPENAI_DIMENSIONS, OPENAI_MODEL } = Embedder

/**
 * What `engram embed` did.
 *
 * @since 0.1.0
 * @category models
 */
export interface EmbedReport {
  readonly model: string
  readonly dimensions: number
  readonly reembedded: boolean
  /** Vectors stored by this run. */
  readonly embedded: number
  /** Deliverable records, and how many of them have a vector now. */
  readonly deliverable: number
  readonly covered: number
  /** Records the run could not read (undecodable rows), left without a vector. */
  readonly unreadable: number
}

const human = (report: EmbedReport): string =>
  Render.escapeControls(
    `embed: ${report.embedded} record(s) embedded with ${
      Embeddings.describe({ model: report.model, dimensions: report.dimensions })
    }` +
      `${report.reembedded ? " (every vector replaced)" : ""}; ` +
      `${report.covered} of ${report.deliverable} deliverable record(s) have a vector` +
      (report.unreadable > 0 ? `; ${report.unreadable} unreadable record(s) skipped` : "")
  )

/**
 * `engram embed`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "embed",
  {
    embedder: Flags.required(
      Flags.choice(
        "embedder",
        Embedder.EMBEDDERS,
        "The embedder: the deterministic test embedder (offline), the local sentence encoder (offline, needs " +
          "@engram/embedder-local installed), or OpenAI's embeddings API (OPENAI_API_KEY)."
      )
    ),
    model: Flags.optional(
      Flags.text("model", Flags.NonEmpty, `The OpenAI embedding model (default ${OPENAI_MODEL}).`, "name")
    ),
    dimensions: Flags.optional(
      Flags.text(
        "dimensions",
        Flags.WholeNumber,
        `The vectors' dimensions (test: ${Embeddings.TEST_DIMENSIONS}, local: ${Embedder.LOCAL_DIMENSIONS}, ` +
          `openai: ${OPENAI_DIMENSIONS}).`,
        "n"
      )
    ),
    reembed: Flags.boolean("reembed", "Delete every stored vector and embed every deliverable record again.")
  },
  ({ dimensions, embedder, model, reembed }) =>
    Effect.scoped(Effect.gen(function*() {
      const where = yield* StoreBackend.location
      const embeddings = yield* Embedder.make(embedder, { model, dimensions })
      const report = yield* Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        const index = where.pg === undefined
          ? yield* SqliteVectorIndex.make
          : yield* Effect.flatMap(Effect.promise(() => import("@engram/store-pg/PgVectorIndex")), (pg) => pg.make)
        if (reembed) yield* index.reset(embeddings.identity)
        else yield* index.claim(embeddings.identity)
        const before = yield* index.coverage
        const display = yield* Progress.make({
          output: Progress.stderr,
          prefix: "engram embed",
          label: "embedding memories",
          total: before.deliverable - before.embedded
        })
        const unreadable = new Set<string>()
        let embedded = 0
        for (;;) {
          const ids = (yield* index.unembedded(BATCH + unreadable.size)).filter((id) => !unreadable.has(id))
          if (ids.length === 0) break
          const { records } = yield* store.get(ids)
          const read = new Set(records.map((record) => record.id))
          for (const id of ids) if (!read.has(id)) unreadable.add(id)
          embedded += yield* VectorIndex.embedRecords(index, embeddings, records)
          yield* display.update(embedded)
        }
        yield* display.finish(embedded)
        const after = yield* index.coverage
        return {
          model: embeddings.identity.model,
          dimensions: embeddings.identity.dimensions,
          reembedded: reembed,
          embedded,
          deliverable: after.deliverable,
          covered: after.embedded,
          unreadable: unreadable.size
        } satisfies EmbedReport
      }).pipe(Effect.provide(StoreBackend.layer(where, "write")))
      const settings = yield* Root.settings
      yield* Console.log(settings.json ? Render.json(report) : human(report))
    })).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Give every deliverable record a vector for hybrid search (--embedder test|local|openai); --reembed replaces them all."
  )
)
