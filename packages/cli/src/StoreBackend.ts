/**
 * Which store a command talks to. Today that is the embedded SQLite file named by `--db`;
 * other backends (`--pg <url>`) are chosen here too, so commands never name a backend.
 *
 * The store is opened lazily, by the commands that need it, after their input has been
 * validated: a rejected command line never opens (or creates) a database.
 *
 * @since 0.1.0
 */
import type * as Command from "@effect/cli/Command"
import type * as SqlClient from "@effect/sql/SqlClient"
import type { MemoryStore } from "@engram/core"
import { SqliteMemoryStore } from "@engram/store-sqlite"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import { oneLine, StoreUnavailable } from "./CliError.js"
import * as Root from "./Root.js"

/**
 * Where to find the store.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreLocation {
  /** Path of the SQLite file (its directory is created when missing), or `:memory:`. */
  readonly db: string
}

/**
 * The services a store command may use: the memory store, and the SQL client under it (the
 * legacy import reads and marks the same database).
 *
 * @since 0.1.0
 * @category models
 */
export type StoreServices = MemoryStore.MemoryStore | SqlClient.SqlClient

// The most specific text a failure to open carries: the open error's own detail, else the message.
const describeCause = (cause: Cause.Cause<unknown>): string => {
  const error = Option.getOrElse(Chunk.head(Cause.failures(cause)), () => Cause.squash(cause))
  if (Predicate.hasProperty(error, "detail") && typeof error.detail === "string") return oneLine(error.detail)
  return oneLine(error instanceof Error ? error.message : String(error))
}

/**
 * The store layer for a location. Anything that keeps the store from opening — a directory that
 * cannot be created, a file that is not a database, a failed migration — fails with
 * {@link StoreUnavailable}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (location: StoreLocation): Layer.Layer<StoreServices, StoreUnavailable> =>
  SqliteMemoryStore.layer({ filename: location.db }).pipe(
    Layer.catchAllCause((cause) =>
      Layer.fail(new StoreUnavailable({ location: location.db, detail: describeCause(cause) }))
    )
  )

/**
 * Runs a command body against the store named by the global options.
 *
 * @since 0.1.0
 * @category combinators
 */
export const provide = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<
  A,
  E | StoreUnavailable,
  Exclude<R, StoreServices> | Command.Command.Context<"engram">
> => Effect.flatMap(Root.settings, (settings) => Effect.provide(effect, layer(settings)))
