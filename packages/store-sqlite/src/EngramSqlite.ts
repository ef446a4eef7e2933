/**
 * The embedded SQLite database every Engram SQLite store shares: one file (default
 * `./.engram/engram.db`), opened in WAL mode with a busy timeout and foreign keys on, or
 * `:memory:` for tests.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import type { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

/**
 * Where the database lives when no path is given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_FILENAME = "./.engram/engram.db"

/**
 * How long a statement waits for another connection's write lock before failing.
 *
 * @since 0.1.0
 * @category constants
 */
export const BUSY_TIMEOUT_MS = 5_000

/**
 * How many times a statement or a whole transaction that failed with `SQLITE_BUSY*` is retried
 * (after the busy timeout, or at once for `SQLITE_BUSY_SNAPSHOT`), with jittered exponential backoff
 * from 20 ms: about five more seconds of waiting in all.
 *
 * @since 0.1.0
 * @category constants
 */
export const BUSY_RETRIES = 8

/**
 * True for a SQL failure SQLite reports as busy (`SQLITE_BUSY`, `SQLITE_BUSY_SNAPSHOT`,
 * `SQLITE_BUSY_RECOVERY`, …): another connection holds the lock, and trying again can succeed.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isBusy = (error: unknown): boolean =>
  Predicate.hasProperty(error, "_tag") && error._tag === "SqlError" && Predicate.hasProperty(error, "cause") &&
  Predicate.hasProperty(error.cause, "code") && typeof error.cause.code === "string" &&
  error.cause.code.startsWith("SQLITE_BUSY")

const busySchedule = Schedule.exponential("20 millis").pipe(
  Schedule.jittered,
  Schedule.intersect(Schedule.recurs(BUSY_RETRIES))
)

const retryBusy = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.retry(effect, { schedule: busySchedule, while: isBusy })

// Every statement run outside a transaction (autocommit) retries on busy by itself; statements
// inside a transaction do not: the whole transaction is retried instead.
const retryingConnection = (connection: Connection): Connection => ({
  ...connection,
  execute: (sql, params, transformRows) => retryBusy(connection.execute(sql, params, transformRows)),
  executeRaw: (sql, params) => retryBusy(connection.executeRaw(sql, params)),
  executeValues: (sql, params) => retryBusy(connection.executeValues(sql, params)),
  executeUnprepared: (sql, params, transformRows) => retryBusy(connection.executeUnprepared(sql, params, transformRows))
})

/**
 * The client over one better-sqlite3 connection, with write transactions that wait. A plain
 * `BEGIN` starts a read transaction that upgrades to a write on its first write, and SQLite does
 * not wait on that upgrade when another connection committed in between (`SQLITE_BUSY_SNAPSHOT`).
 * Every transaction on a writable connection therefore starts `BEGIN IMMEDIATE`, taking the write
 * lock up front (waiting up to the busy timeout), and an outermost transaction that still fails
 * busy is retried whole with backoff; so are single statements outside a transaction.
 */
const makeWaitingClient = (
  config: SqliteClient.SqliteClientConfig
): Effect.Effect<SqliteClient.SqliteClient, never, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const inner = yield* SqliteClient.make(config)
    const base = yield* SqlClient.make({
      acquirer: Effect.map(inner.reserve, retryingConnection),
      transactionAcquirer: inner.reserve,
      compiler: Statement.makeCompilerSqlite(),
      beginTransaction: config.readonly === true ? "BEGIN" : "BEGIN IMMEDIATE",
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    const transaction = base.withTransaction
    const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
      Effect.flatMap(
        Effect.serviceOption(SqlClient.TransactionConnection),
        (outer) => Option.isSome(outer) ? transaction(effect) : retryBusy(transaction(effect))
      )
    return Object.assign(base, {
      withTransaction,
      [SqliteClient.TypeId]: SqliteClient.TypeId,
      config: inner.config,
      export: inner.export,
      backup: inner.backup,
      loadExtension: inner.loadExtension
    }) as SqliteClient.SqliteClient
  })

/**
 * The database could not be opened: its directory could not be created, the file is not a
 * SQLite database, or it is not writable.
 *
 * @since 0.1.0
 * @category errors
 */
export class SqliteOpenError extends Schema.TaggedError<SqliteOpenError>()("SqliteOpenError", {
  filename: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `cannot open the SQLite database "${this.filename}": ${this.detail}. ` +
      `Check that the path is a writable file in a writable directory, or choose another path.`
  }
}

/**
 * Options for {@link layerClient}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** A file path (its directory is created when missing) or `:memory:`. */
  readonly filename?: string
}

/**
 * True for the names SQLite treats as a private in-memory database.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isInMemory = (filename: string): boolean => filename === ":memory:" || filename === ""

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

/**
 * Opens the database and configures the connection. Scoped: the connection closes with the scope.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeClient = (
  options?: ClientOptions
): Effect.Effect<SqliteClient.SqliteClient, SqliteOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const filename = options?.filename ?? DEFAULT_FILENAME
    const inMemory = isInMemory(filename)
    const fail = (detail: string) => new SqliteOpenError({ filename, detail })
    if (!inMemory) {
      const directory = NodePath.dirname(NodePath.resolve(filename))
      yield* Effect.try({
        try: () => NodeFs.mkdirSync(directory, { recursive: true }),
        catch: (cause) => fail(`its directory "${directory}" cannot be created (${describe(cause)})`)
      })
    }
    // better-sqlite3 throws from its constructor (e.g. SQLITE_CANTOPEN); the client turns that into
    // a defect, which is an expected failure here.
    const client = yield* makeWaitingClient({ filename, disableWAL: inMemory }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.catchAllDefect((cause) => Effect.fail(fail(describe(cause))))
    )
    const pragma = (statement: string) =>
      Effect.mapError(client.unsafe<Record<string, unknown>>(`PRAGMA ${statement}`), (error) =>
        fail(describe(error.cause ?? error)))
    yield* pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
    yield* pragma("foreign_keys = ON")
    if (!inMemory) {
      const [mode] = yield* pragma("journal_mode")
      if (mode?.journal_mode !== "wal") {
        return yield* fail(`it could not be switched to WAL mode (journal_mode is ${String(mode?.journal_mode)})`)
      }
      // WAL makes NORMAL durable against application crashes; only an OS crash can lose the last commits.
      yield* pragma("synchronous = NORMAL")
    }
    return client
  })

/**
 * The SQL client over one SQLite database. Creates the parent directory of a file path, opens the
 * database in WAL mode (files only), and sets `busy_timeout` and `foreign_keys`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerClient = (
  options?: ClientOptions
): Layer.Layer<SqlClient.SqlClient | SqliteClient.SqliteClient, SqliteOpenError> =>
  Layer.scopedContext(
    Effect.map(makeClient(options), (client) =>
      Context.make(SqliteClient.SqliteClient, client).pipe(Context.add(SqlClient.SqlClient, client)))
  )
