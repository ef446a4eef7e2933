/**
 * What a whole-store copy (`@engram/migrate`, `engram migrate`) needs from one SQL database: its
 * four stores and the legacy import's markers. Each store package opens one side of a copy
 * (`SqliteMigration.open`, `PgMigration.open`) as an {@link Endpoint}; the markers' SQL is the same
 * for both backends and lives here ({@link markers}), so neither store package depends on
 * `@engram/migrate`.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ErrorClass, MemoryStore, PromotionStore, SearchTokenizer, SessionStore, TelemetryStore } from "@engram/core"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as IndexLanguage from "./IndexLanguage.js"

/**
 * One key/value marker the legacy import leaves in a store (`engram_meta`), so that importing the
 * same v1 file into a copy of the store is still recognised as done.
 *
 * @since 0.1.0
 * @category models
 */
export interface ImportMarker {
  readonly key: string
  readonly value: string
}

/**
 * Reading or writing a store's import markers failed underneath.
 *
 * @since 0.1.0
 * @category errors
 */
export class MarkerStoreFailure
  extends ErrorClass.Failure<MarkerStoreFailure>()("MarkerStoreFailure", "import markers")
{}

/**
 * A store's import markers: `read` returns them sorted by key; `add` stores those whose key is not
 * stored yet (never overwriting one) and returns how many it stored.
 *
 * @since 0.1.0
 * @category models
 */
export interface ImportMarkers {
  readonly read: Effect.Effect<ReadonlyArray<ImportMarker>, MarkerStoreFailure>
  readonly add: (markers: ReadonlyArray<ImportMarker>) => Effect.Effect<number, MarkerStoreFailure>
}

/**
 * Everything a whole-store copy reads or writes on one database: the four stores and the import
 * markers. The store packages open one for a SQLite file or a PostgreSQL database
 * (`SqliteMigration.open`, `PgMigration.open`); a copy between any two is the same code.
 *
 * @since 0.1.0
 * @category models
 */
export interface Endpoint {
  readonly memory: MemoryStore.Service
  readonly promotions: PromotionStore.Service
  readonly sessions: SessionStore.Service
  readonly telemetry: TelemetryStore.Service
  readonly markers: ImportMarkers
  /** The language the memory store's search index stems in: the one it records, or a new store's. */
  readonly language: SearchTokenizer.Language
}

/**
 * How an endpoint's memory store is opened: `language`, the language its search index stems in —
 * a new store is created in it, a store that records another fails with
 * `SearchTokenizer.LanguageMismatch` naming both. Without it, the store's own (English for a new one).
 *
 * @since 0.1.0
 * @category models
 */
export interface EndpointOptions {
  readonly language?: SearchTokenizer.Language | undefined
}

/**
 * Whether an endpoint is copied from or into: a `"source"` is never created or migrated (stores
 * whose tables it lacks read as empty); a `"target"` gets every table, created or upgraded.
 *
 * @since 0.1.0
 * @category models
 */
export type EndpointRole = "source" | "target"

/**
 * Markers in key order, one per line, for comparing two stores' markers.
 *
 * @since 0.1.0
 * @category verifying
 */
export const markerLines = (markers: ReadonlyArray<ImportMarker>): string =>
  [...markers]
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map((marker) => `${JSON.stringify(marker.key)}\t${JSON.stringify(marker.value)}`)
    .join("\n")

/**
 * The one statement a backend's {@link markers} needs of its own: whether the marker table is
 * there (`sqlite_master` in SQLite, `to_regclass` in PostgreSQL), and how a driver's error reads
 * as the failure's cause.
 *
 * @since 0.1.0
 * @category models
 */
export interface MarkerDialect {
  readonly tablePresent: (sql: SqlClient.SqlClient, table: string) => Effect.Effect<boolean, SqlError>
  readonly causeOf: (error: SqlError) => unknown
}

/**
 * The key/value table the legacy import keeps its markers in.
 *
 * @since 0.1.0
 * @category constants
 */
export const META_TABLE = "engram_meta"

/**
 * The import markers of the database behind `sql` ({@link META_TABLE}). Reading a database
 * without the table returns none; adding creates the table and stores only keys not stored yet
 * (`ON CONFLICT DO NOTHING`, which both backends speak).
 *
 * @since 0.1.0
 * @category constructors
 */
export const markers = (sql: SqlClient.SqlClient, dialect: MarkerDialect): ImportMarkers => {
  const failure = (operation: string) => (cause: SqlError) =>
    new MarkerStoreFailure({ operation, cause: dialect.causeOf(cause) })
  return {
    read: Effect.gen(function*() {
      if (!(yield* dialect.tablePresent(sql, META_TABLE))) return []
      const rows = yield* sql<ImportMarker>`SELECT key, value FROM ${sql(META_TABLE)} ORDER BY key`
      return rows.map(({ key, value }) => ({ key, value }))
    }).pipe(Effect.mapError(failure("read"))),
    add: (added) =>
      Effect.gen(function*() {
        if (added.length === 0) return 0
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(META_TABLE)} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
        const rows = yield* sql<{ readonly key: string }>`INSERT INTO ${sql(META_TABLE)} ${
          sql.insert(added.map(({ key, value }) => ({ key, value })))
        } ON CONFLICT (key) DO NOTHING RETURNING key`
        return rows.length
      }).pipe(sql.withTransaction, Effect.mapError(failure("add")))
  }
}

/**
 * Builds an endpoint's stores with `layer`: a `SearchTokenizer.LanguageMismatch` stays itself (the
 * copy named a language the store was not built in), any other failure becomes `fail(cause)`.
 *
 * @since 0.1.0
 * @category constructors
 */
export const buildStores = <A, E>(
  layer: Layer.Layer<A, unknown>,
  fail: (cause: Cause.Cause<unknown>) => E
): Effect.Effect<Context.Context<A>, E | SearchTokenizer.LanguageMismatch, Scope.Scope> =>
  Effect.catchAllCause(Layer.build(layer), (cause): Effect.Effect<never, E | SearchTokenizer.LanguageMismatch> => {
    const failure = Cause.failureOption(cause)
    return Option.isSome(failure) && failure.value instanceof SearchTokenizer.LanguageMismatch
      ? Effect.fail(failure.value)
      : Effect.fail(fail(cause))
  })

/**
 * The four stores an {@link Endpoint} is made of.
 *
 * @since 0.1.0
 * @category models
 */
export type Stores =
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore

/**
 * The endpoint over the stores opened in `context` on the database `sql`: the import markers in
 * `dialect`, and the language the memory store's meta table (`metaTable`) records.
 *
 * @since 0.1.0
 * @category constructors
 */
export const endpoint = (
  context: Context.Context<Stores>,
  sql: SqlClient.SqlClient,
  dialect: MarkerDialect,
  metaTable: string
): Effect.Effect<Endpoint, SqlError | SearchTokenizer.LanguageMismatch> =>
  Effect.map(
    Effect.provideService(IndexLanguage.open(metaTable, undefined), SqlClient.SqlClient, sql),
    ({ language }) => ({
      language,
      memory: Context.get(context, MemoryStore.MemoryStore),
      promotions: Context.get(context, PromotionStore.PromotionStore),
      sessions: Context.get(context, SessionStore.SessionStore),
      telemetry: Context.get(context, TelemetryStore.TelemetryStore),
      markers: markers(sql, dialect)
    })
  )
