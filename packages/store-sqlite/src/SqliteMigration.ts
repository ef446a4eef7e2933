/**
 * A SQLite file as one side of a whole-store copy (`MigrationPort.Endpoint`): its four stores and
 * the legacy import's markers, with every statement against the file's own tables kept here.
 *
 * - As a **source** the file must exist and be an Engram store (it has `engram_memories`); it is
 *   never created, and a table it lacks (no sessions yet, say) reads as empty and is not created.
 * - As a **target** the file is created when missing and every table is created or upgraded.
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { ErrorClass } from "@engram/core"
import { PromotionStore, type SearchTokenizer, SessionStore, TelemetryStore } from "@engram/core"
import { MigrationPort } from "@engram/store-sql"
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import { META_TABLE } from "./internal/memoryTable.js"
import * as SqliteDatabase from "./SqliteDatabase.js"
import * as SqliteMemoryStore from "./SqliteMemoryStore.js"
import * as SqlitePromotionStore from "./SqlitePromotionStore.js"
import * as SqliteSessionStore from "./SqliteSessionStore.js"
import * as SqliteTelemetryStore from "./SqliteTelemetryStore.js"

/**
 * The file cannot take part in a copy: it cannot be opened, it is not an Engram store, or its
 * stores failed to open. `problem` says which.
 *
 * @since 0.1.0
 * @category errors
 */
export class SqliteMigrationError extends ErrorClass.TaggedError<SqliteMigrationError>()("SqliteMigrationError", {
  filename: Schema.String,
  /** `unopenable`: not a (sound) SQLite file; `not-a-store`: no Engram tables; `stores`: they failed to open. */
  reason: Schema.Literal("unopenable", "not-a-store", "stores"),
  problem: Schema.String
}, {
  errorClass: "Unavailable",
  message: (self) => `${self.filename}: ${self.problem}`
}) {}

/**
 * The table every Engram SQLite store has; a file without it is not one.
 *
 * @since 0.1.0
 * @category constants
 */
export const MEMORY_TABLE = "engram_memories"

// SQLite's part of the markers' SQL: the table is looked up in `sqlite_master`.
const markerDialect: MigrationPort.MarkerDialect = {
  tablePresent: (sql, table) =>
    Effect.map(
      sql<{ readonly n: number }>`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = ${table}`,
      (rows) => Number(rows[0]?.n ?? 0) > 0
    ),
  causeOf: (error) => new Error(ErrorClass.causeMessages(error))
}

/**
 * Opens `filename` as one side of a copy (see the module description), its memory store in
 * `options.language` (`MigrationPort.EndpointOptions`: a target that records another language
 * fails with `LanguageMismatch`). Scoped: the file closes with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const open = (
  filename: string,
  role: MigrationPort.EndpointRole,
  options: MigrationPort.EndpointOptions = {}
): Effect.Effect<MigrationPort.Endpoint, SqliteMigrationError | SearchTokenizer.LanguageMismatch, Scope.Scope> =>
  Effect.gen(function*() {
    const fail = (problem: string, reason: SqliteMigrationError["reason"] = "unopenable") =>
      new SqliteMigrationError({ filename, reason, problem })
    if (SqliteDatabase.isInMemory(filename)) return yield* fail("name a SQLite file, not an in-memory database")
    const client = yield* Layer.build(
      SqliteDatabase.layer({ filename, ...(role === "source" ? { create: false } : {}) })
    ).pipe(Effect.mapError((error) => fail(error.detail)))
    const sql = Context.get(client, SqlClient.SqlClient)
    const rows = yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.pipe(
      Effect.mapError((error) => fail(`is not a SQLite database (${ErrorClass.causeMessages(error)})`, "not-a-store"))
    )
    const tables = new Set(rows.map((row) => row.name))
    if (role === "source" && !tables.has(MEMORY_TABLE)) {
      return yield* fail(`is not an Engram store: it has no ${MEMORY_TABLE} table`, "not-a-store")
    }
    const has = (...names: ReadonlyArray<string>) => role === "target" || names.some((name) => tables.has(name))
    // A source is never forgotten from: its memory store's cascade may be an empty in-memory store.
    const stores = SqliteMemoryStore.layer({ language: options.language }).pipe(
      Layer.provideMerge(Layer.mergeAll(
        has(SqlitePromotionStore.TABLE) ? SqlitePromotionStore.layer : PromotionStore.layerMemory,
        has(SqliteSessionStore.MESSAGES_TABLE, SqliteSessionStore.INTERRUPTS_TABLE)
          ? SqliteSessionStore.layer
          : SessionStore.layerMemory,
        has(SqliteTelemetryStore.INJECTIONS_TABLE) ? SqliteTelemetryStore.layer : TelemetryStore.layerMemory
      )),
      Layer.provide(Layer.succeedContext(client))
    )
    const context = yield* MigrationPort.buildStores(
      stores,
      (cause) => fail(ErrorClass.causeMessages(Cause.squash(cause)), "stores")
    )
    return yield* MigrationPort.endpoint(context, sql, markerDialect, META_TABLE).pipe(
      Effect.catchTag("SqlError", (error) => fail(ErrorClass.causeMessages(error), "stores"))
    )
  })
