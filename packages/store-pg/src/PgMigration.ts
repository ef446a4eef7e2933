/**
 * A PostgreSQL database (or one schema of it) as one side of a whole-store copy
 * (`MigrationPort.Endpoint`): its four stores and the legacy import's markers, with every
 * statement against Engram's own tables kept here.
 *
 * - As a **source** nothing is created or migrated, not even a missing schema: the memory table
 *   must exist; a store whose table is absent reads as empty; present tables must be at this
 *   version.
 * - As a **target** every table is created or upgraded (as the store layers do).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ErrorClass } from "@engram/core"
import { PromotionStore, type SearchTokenizer, SessionStore, TelemetryStore } from "@engram/core"
import { MigrationPort } from "@engram/store-sql"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { metaTable } from "./internal/migrations.js"
import * as PgDatabase from "./PgDatabase.js"
import * as PgError from "./PgError.js"
import * as PgMemoryStore from "./PgMemoryStore.js"
import * as PgPromotionStore from "./PgPromotionStore.js"
import * as PgSessionStore from "./PgSessionStore.js"
import * as PgTelemetryStore from "./PgTelemetryStore.js"

/**
 * The database cannot take part in a copy: no connection, not an Engram store, or its stores
 * failed to open. `problem` says which (without the URL's password).
 *
 * @since 0.1.0
 * @category errors
 */
export class PgMigrationError extends ErrorClass.TaggedError<PgMigrationError>()("PgMigrationError", {
  problem: Schema.String
}, {
  errorClass: "Unavailable",
  message: (self) => self.problem
}) {}

/**
 * The table every Engram PostgreSQL store has.
 *
 * @since 0.1.0
 * @category constants
 */
export const MEMORY_TABLE = "engram_memories"

const describe = (error: unknown): string => {
  if (typeof error === "object" && error !== null && "_tag" in error && error._tag === "SqlError") {
    return PgError.reasonOf(error as SqlError).message
  }
  return PgError.redactUrls(ErrorClass.causeMessages(error))
}

const tablePresent = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(
    sql<{ readonly present: boolean }>`SELECT to_regclass(${table}) IS NOT NULL AS present`,
    (rows) => rows[0]?.present === true
  )

// PostgreSQL's part of the markers' SQL: the table is looked up in the `search_path`.
const markerDialect: MigrationPort.MarkerDialect = { tablePresent, causeOf: PgError.reasonOf }

/**
 * Opens the database as one side of a copy (see the module description), on a pool of its own, its
 * memory store in `store.language` (`MigrationPort.EndpointOptions`: a target that records another
 * language fails with `LanguageMismatch`). Scoped: the pool closes with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (
  options: PgDatabase.ConnectionOptions,
  role: MigrationPort.EndpointRole,
  store: MigrationPort.EndpointOptions = {}
): Effect.Effect<MigrationPort.Endpoint, PgMigrationError | SearchTokenizer.LanguageMismatch, Scope.Scope> =>
  Effect.gen(function*() {
    const fail = (problem: string) => new PgMigrationError({ problem })
    // A source's schema is only pointed at, never created (the client would create a missing one).
    const schema = options.schema
    if (role === "source" && schema !== undefined && !PgDatabase.isSchemaName(schema)) {
      return yield* fail(`"${schema}" is not a schema name Engram uses`)
    }
    const connection = role === "source" && schema !== undefined
      ? yield* Effect.try({
        try: () => {
          const raw = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
          return { ...options, schema: undefined, url: Redacted.make(PgDatabase.withSearchPath(raw, schema)) }
        },
        catch: (error) => fail(error instanceof Error ? error.message : String(error))
      })
      : options
    const client = yield* Layer.build(PgDatabase.layer(connection)).pipe(
      Effect.mapError((error) => fail(`cannot connect: ${describe(error)}`))
    )
    const sql = Context.get(client, SqlClient.SqlClient)
    if (role === "source" && schema !== undefined) {
      const found = yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = ${schema}`.pipe(
        Effect.mapError((error) => fail(`cannot be read: ${describe(error)}`))
      )
      if (found.length === 0) return yield* fail(`it has no schema "${schema}", so it holds no Engram store`)
    }
    let stores: Layer.Layer<MigrationPort.Stores, unknown, SqlClient.SqlClient>
    if (role === "target") {
      stores = PgMemoryStore.layer({ language: store.language }).pipe(
        Layer.provideMerge(Layer.mergeAll(PgPromotionStore.layer, PgSessionStore.layer, PgTelemetryStore.layer))
      )
    } else {
      const has = (table: string) =>
        tablePresent(sql, table).pipe(Effect.mapError((error) => fail(`cannot be read: ${describe(error)}`)))
      if (!(yield* has(MEMORY_TABLE))) {
        return yield* fail(`it is not an Engram store: it has no ${MEMORY_TABLE} table`)
      }
      const sessions = (yield* has(PgSessionStore.MESSAGES_TABLE)) || (yield* has(PgSessionStore.INTERRUPTS_TABLE))
      // A source is never forgotten from: its memory store's cascade may be an empty in-memory store.
      stores = PgMemoryStore.layerWithoutMigrations({ language: store.language }).pipe(
        Layer.provideMerge(Layer.mergeAll(
          (yield* has(PgPromotionStore.TABLE)) ? PgPromotionStore.layerWithoutMigrations : PromotionStore.layerMemory,
          sessions ? PgSessionStore.layerWithoutMigrations : SessionStore.layerMemory,
          (yield* has(PgTelemetryStore.INJECTIONS_TABLE))
            ? PgTelemetryStore.layerWithoutMigrations
            : TelemetryStore.layerMemory
        ))
      )
    }
    const context = yield* MigrationPort.buildStores(
      Layer.provide(stores, Layer.succeedContext(client)),
      (cause) => fail(`its stores cannot be opened: ${describe(Cause.squash(cause))}`)
    )
    return yield* MigrationPort.endpoint(context, sql, markerDialect, metaTable).pipe(
      Effect.catchTag("SqlError", (error) => fail(`cannot be read: ${describe(error)}`))
    )
  })
