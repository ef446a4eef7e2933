/**
 * The embedded SQLite database every Engram SQLite store shares: one file (default
 * `./.engram/engram.db`), opened in WAL mode with a busy timeout and foreign keys on, or
 * `:memory:` for tests.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { Connection } from "@effect/sql/SqlConnection"
import { SqlError } from "@effect/sql/SqlError"
import * as Statement from "@effect/sql/Statement"
import { ErrorClass } from "@engram/core"
import { SqlTransaction } from "@engram/store-sql"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Schedule from "effect/Schedule"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as SqliteErrors from "./internal/sqliteErrors.js"

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
export const isBusy: (error: unknown) => boolean = SqliteErrors.isBusy

/**
 * True for a SQL failure that means the file is damaged (`SQLITE_CORRUPT*`, `SQLITE_NOTADB`).
 *
 * @since 0.1.0
 * @category predicates
 */
export const isDamaged: (error: unknown) => boolean = SqliteErrors.isDamaged

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

const noTransaction = (error: SqlError): boolean =>
  error.cause instanceof Error &&
  (error.cause.message.includes("no transaction is active") || error.cause.message.includes("no such savepoint"))

/**
 * A transaction's connection that ends every transaction it began. SQLite leaves the transaction
 * open when `COMMIT` fails (a deferred constraint, a busy reader), so the next `BEGIN` would fail:
 * a failed `COMMIT` is rolled back. And SQLite rolls a transaction back itself when a statement
 * fails `SQLITE_FULL` (or `SQLITE_IOERR`, `SQLITE_NOMEM`), so the `ROLLBACK` (or `ROLLBACK TO
 * SAVEPOINT`, when nested) that follows finds no transaction: that is the state asked for, and the
 * statement's own error is the one to report. `BEGIN`, `SAVEPOINT` and `COMMIT` run prepared once
 * per connection (the driver's statement cache), not prepared again for every transaction.
 */
const rollingBackConnection = (connection: Connection): Connection => ({
  ...connection,
  executeUnprepared: (sql, params, transformRows) =>
    sql === "COMMIT"
      ? Effect.tapError(
        connection.execute(sql, params, transformRows),
        () => Effect.ignore(connection.executeUnprepared("ROLLBACK", [], undefined))
      )
      : sql.startsWith("ROLLBACK")
      ? Effect.catchIf(
        connection.executeUnprepared(sql, params, transformRows),
        noTransaction,
        () => Effect.succeed([])
      )
      // `BEGIN IMMEDIATE` and `SAVEPOINT effect_sql_<depth>` are the same few texts every time: run
      // from the connection's statement cache instead of prepared again for every transaction.
      : sql.startsWith("BEGIN") || sql.startsWith("SAVEPOINT")
      ? connection.execute(sql, params, transformRows)
      : connection.executeUnprepared(sql, params, transformRows)
})

/**
 * `@effect/sql` turns a failed `COMMIT` (or `ROLLBACK`) into a defect; it is the database failing
 * underneath like any statement, so it is put back in the error channel, where the store maps it
 * to its typed failure (a full disk at commit is then `StorageFull`, not an internal error).
 */
const commitFailuresTyped = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
  Effect.catchSomeDefect(
    effect,
    (defect) => defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none()
  )

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
      transactionAcquirer: Effect.map(inner.reserve, rollingBackConnection),
      compiler: Statement.makeCompilerSqlite(),
      beginTransaction: config.readonly === true ? "BEGIN" : "BEGIN IMMEDIATE",
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    const transaction = base.withTransaction
    const withTransaction = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
      Effect.flatMap(
        SqlTransaction.isOpen,
        (outer) => outer ? transaction(effect) : retryBusy(commitFailuresTyped(transaction(effect)))
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
export class SqliteOpenError extends ErrorClass.TaggedError<SqliteOpenError>()("SqliteOpenError", {
  filename: Schema.String,
  detail: Schema.String,
  /** Present when the file is damaged: what SQLite's integrity check found. */
  problems: Schema.optional(Schema.Array(Schema.String))
}, {
  errorClass: "Unavailable",
  message: (self) => {
    if (self.problems !== undefined) return `cannot open the SQLite database "${self.filename}": ${self.detail}`
    return `cannot open the SQLite database "${self.filename}": ${self.detail}. ` +
      `Check that the path is a writable file in a writable directory, or choose another path.`
  }
}) {}

/**
 * Options for {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface ClientOptions {
  /** A file path or `:memory:`. */
  readonly filename?: string
  /**
   * Whether a missing file (and its directory) is created — the default. A store is created whole
   * or not at all (see {@link make}). With `false` the file must already exist, and one this
   * process cannot write is opened read-only: what read commands ask, so a mistyped path is
   * refused instead of becoming a new, empty store.
   */
  readonly create?: boolean
  /** Open read-only: every write fails. */
  readonly readonly?: boolean
  /**
   * What open checks before anything is read or written; a damaged file is refused with a
   * {@link SqliteOpenError} listing the problems. `"auto"` (the default): the header (an SQLite
   * file, not truncated) and the schema always, and SQLite's `quick_check` of every page unless the
   * file is exactly as a clean close by Engram left it (see {@link isKnownSound}), whatever its
   * size (decision 0094): so the first open after a crash, a copy, a restore or any change made
   * outside Engram checks every page. `"quick"`: `quick_check` always.
   * `"none"`: nothing, for tools that inspect damaged files (`engram doctor`). A header that
   * disagrees with the file while a write-ahead log or rollback journal lies beside it is not
   * refused on its own: SQLite recovers first and its view decides (see {@link make}).
   */
  readonly integrityCheck?: "auto" | "quick" | "none"
}

/**
 * True for the names SQLite treats as a private in-memory database.
 *
 * @since 0.1.0
 * @category predicates
 */
export const isInMemory = (filename: string): boolean => filename === ":memory:" || filename === ""

const describe = (cause: unknown): string => (cause instanceof Error ? cause.message : String(cause))

const SQLITE_MAGIC = "SQLite format 3\u0000"

/**
 * What is wrong with an SQLite file's 100-byte header, read without SQLite: not an SQLite file,
 * or shorter than the page count its header records (a truncated copy). Constant time. Exact only
 * for a file with no write-ahead log or hot journal beside it ({@link recoveryLogs}): a kill during
 * a checkpoint leaves the main file shorter than page 1 says until SQLite replays its log.
 *
 * @since 0.1.0
 * @category integrity
 */
export const headerProblem = (header: Uint8Array, fileSize: number): string | undefined => {
  if (header.length < 100 || Buffer.from(header.subarray(0, 16)).toString("latin1") !== SQLITE_MAGIC) {
    return "it is not an SQLite database (its header is missing or garbled)"
  }
  const view = new DataView(header.buffer, header.byteOffset, header.byteLength)
  const rawPageSize = view.getUint16(16)
  const pageSize = rawPageSize === 1 ? 65_536 : rawPageSize
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0) return `its header is garbled (page size ${rawPageSize})`
  // The page count in the header is valid only when the change counter matches "version valid for".
  const pages = view.getUint32(24) === view.getUint32(92) ? view.getUint32(28) : 0
  if (pages * pageSize > fileSize) {
    return `it is truncated: its header records ${pages} pages of ${pageSize} bytes (${pages * pageSize} bytes) ` +
      `but the file holds ${fileSize}`
  }
  return undefined
}

const readHeader = (filename: string): Uint8Array => {
  const fd = NodeFs.openSync(filename, "r")
  try {
    const header = new Uint8Array(100)
    const read = NodeFs.readSync(fd, header, 0, 100, 0)
    return header.subarray(0, read)
  } finally {
    NodeFs.closeSync(fd)
  }
}

// The first problems SQLite's check found, for a message.
const summary = (problems: ReadonlyArray<string>): string =>
  problems.slice(0, 3).join("; ") + (problems.length > 3 ? ` (and ${problems.length - 3} more)` : "")

// The detail names the damage and what to do; CLI messages show the detail alone. `replayed`: SQLite
// recovered from the log or journal beside the file first, and the file is damaged even so.
const damaged = (filename: string, shown: string, problems: ReadonlyArray<string>, replayed = false) =>
  new SqliteOpenError({
    filename,
    detail: `the file is damaged: ${shown}. ` +
      (replayed
        ? "SQLite replayed the journal beside it first, and no store data was read or written; "
        : "Nothing was read or written; ") +
      `run \`engram doctor --db ${filename}\` for a full check, and restore the file from a backup ` +
      "(`engram doctor --repair` rebuilds only the search index)",
    problems
  })

// A path under a file ("a-file/engram.db") does not exist either; creating its directory then fails.
const statIfExists = (filename: string): NodeFs.Stats | undefined => {
  try {
    return NodeFs.statSync(filename, { throwIfNoEntry: false })
  } catch (cause) {
    if (cause instanceof Error && "code" in cause && cause.code === "ENOTDIR") return undefined
    throw cause
  }
}

const isWritable = (filename: string): boolean => {
  try {
    NodeFs.accessSync(filename, NodeFs.constants.W_OK)
    return true
  } catch {
    return false
  }
}

/**
 * The sizes of the files SQLite recovers a database from after a crash, beside `filename`: its
 * write-ahead log (`-wal`) and its rollback journal (`-journal`); 0 for one that is missing.
 *
 * @since 0.1.0
 * @category integrity
 */
export const recoveryLogs = (filename: string): { readonly wal: number; readonly journal: number } => ({
  wal: statIfExists(`${filename}-wal`)?.size ?? 0,
  journal: statIfExists(`${filename}-journal`)?.size ?? 0
})

const checkRows = (client: SqlClient.SqlClient, pragma: string): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.map(
    client.unsafe<Record<string, unknown>>(`PRAGMA ${pragma}`),
    (rows) => rows.map((row) => String(Object.values(row)[0])).filter((line) => line !== "ok")
  )

/**
 * SQLite's `quick_check`: the b-tree structure of every page, without cross-checking indexes
 * against their tables. An empty result means the file is sound. A file too damaged to be read at
 * all reports SQLite's own error as its one problem.
 *
 * @since 0.1.0
 * @category integrity
 */
export const quickCheck = (client: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.catchIf(checkRows(client, "quick_check"), isDamaged, (error) => Effect.succeed([describe(error.cause)]))

// Reads the schema (page 1 and the schema table): constant work for a store of any size.
const schemaCheck = (client: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.catchIf(
    Effect.as(client.unsafe(`SELECT count(*) FROM sqlite_schema`), []),
    isDamaged,
    (error) => Effect.succeed([describe(error.cause)])
  )

/**
 * SQLite's full `integrity_check` (also cross-checks every index against its table).
 *
 * @since 0.1.0
 * @category integrity
 */
export const integrityCheck = (client: SqlClient.SqlClient): Effect.Effect<ReadonlyArray<string>, SqlError> =>
  Effect.catchIf(checkRows(client, "integrity_check"), isDamaged, (error) => Effect.succeed([describe(error.cause)]))

/**
 * The file beside a store in which Engram records the store file as a clean close left it, after
 * the open had found it sound: its size, inode and modification and change times.
 *
 * @since 0.1.0
 * @category integrity
 */
export const verifiedStateFile = (filename: string): string => `${filename}-verified`

interface FileState {
  readonly size: number
  readonly ino: number
  readonly mtimeMs: number
  readonly ctimeMs: number
}

const stateOf = (stat: NodeFs.Stats): FileState => ({
  size: stat.size,
  ino: stat.ino,
  mtimeMs: stat.mtimeMs,
  ctimeMs: stat.ctimeMs
})

const readVerified = (filename: string): FileState | undefined => {
  try {
    const parsed: unknown = JSON.parse(NodeFs.readFileSync(verifiedStateFile(filename), "utf8"))
    return typeof parsed === "object" && parsed !== null ? parsed as FileState : undefined
  } catch {
    return undefined
  }
}

/**
 * True when the store file is exactly as Engram last left it, sound: a clean close recorded it in
 * {@link verifiedStateFile} after an open that checked it (or found it so recorded), nothing has
 * changed it since (same size, inode, modification and change time — the change time no tool can
 * set back), and no write-ahead log or journal lies beside it (a crash leaves one; so does
 * another connection that has it open). Anything else — a crash, a copy, a restore, an edit, a
 * file never opened by this version — and `integrityCheck: "auto"` checks every page.
 *
 * @since 0.1.0
 * @category integrity
 */
export const isKnownSound = (filename: string): boolean => {
  const recorded = readVerified(filename)
  const stat = statIfExists(filename)
  if (recorded === undefined || stat === undefined) return false
  const logs = recoveryLogs(filename)
  const now = stateOf(stat)
  return logs.wal === 0 && logs.journal === 0 && recorded.size === now.size && recorded.ino === now.ino &&
    recorded.mtimeMs === now.mtimeMs && recorded.ctimeMs === now.ctimeMs
}

// After the connection closed: the last one out (no log left beside the file) records the file.
const recordVerified = (filename: string): void => {
  try {
    const stat = statIfExists(filename)
    const logs = recoveryLogs(filename)
    if (stat === undefined || logs.wal > 0 || logs.journal > 0) return
    const temporary = `${verifiedStateFile(filename)}.${process.pid}`
    NodeFs.writeFileSync(temporary, JSON.stringify(stateOf(stat)))
    NodeFs.renameSync(temporary, verifiedStateFile(filename))
  } catch {
    // Best effort (a read-only directory, say): without the record the next open checks in full.
  }
}

// A name beside the target that a store being created is written under; see `createWhole`.
const CREATING = ".creating-"
// A creating file older than this belongs to a process that died while creating (creation takes
// milliseconds), and the next writable open of the store removes it.
const STALE_CREATING_MS = 60_000

const removeIfPresent = (path: string): void => {
  try {
    NodeFs.rmSync(path, { force: true })
  } catch {
    // Best effort: a leftover file is untidy, never harmful.
  }
}

const removeStaleCreations = (filename: string): void => {
  const directory = NodePath.dirname(filename)
  const prefix = `${NodePath.basename(filename)}${CREATING}`
  let names: Array<string>
  try {
    names = NodeFs.readdirSync(directory)
  } catch {
    return
  }
  // Compared with file modification times, which the file system stamps in wall-clock time.
  // eslint-disable-next-line no-restricted-properties
  const now = Date.now()
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const path = NodePath.join(directory, name)
    try {
      if (now - NodeFs.statSync(path).mtimeMs > STALE_CREATING_MS) removeIfPresent(path)
    } catch {
      // Gone already, or not ours to read: leave it.
    }
  }
}

const errorCode = (cause: unknown): unknown =>
  typeof cause === "object" && cause !== null && "code" in cause ? cause.code : undefined

/**
 * Creates a missing store whole or not at all (decision 0047): SQLite writes the new database's
 * first page, in WAL mode, under a name of its own beside the target, and a hard link gives it the
 * target's name only if nothing holds that name yet, so a process killed at any moment leaves no
 * file or a whole one, and of two processes creating one store at once, one links and the other
 * opens what it linked. Where the file system has no hard links the file is copied exclusively
 * instead (a kill inside that copy can still leave an empty file, refused with what to do).
 */
const createWhole = (
  filename: string,
  fail: (detail: string) => SqliteOpenError
): Effect.Effect<void, SqliteOpenError> => {
  const creating = `${filename}${CREATING}${process.pid}-${NodeCrypto.randomBytes(6).toString("hex")}`
  const write = Effect.scoped(
    Effect.flatMap(
      SqliteClient.make({ filename: creating, disableWAL: true }),
      (client) => client.unsafe("PRAGMA journal_mode = WAL")
    )
  ).pipe(
    Effect.provide(Reactivity.layer),
    Effect.mapError((error) => fail(`it could not be created (${describe(error.cause ?? error)})`)),
    Effect.catchAllDefect((cause) => Effect.fail(fail(`it could not be created (${describe(cause)})`)))
  )
  const place = Effect.try({
    try: () => {
      try {
        NodeFs.linkSync(creating, filename)
      } catch (cause) {
        if (errorCode(cause) === "EEXIST") return
        try {
          NodeFs.copyFileSync(creating, filename, NodeFs.constants.COPYFILE_EXCL)
        } catch (copyCause) {
          if (errorCode(copyCause) !== "EEXIST") throw copyCause
        }
      }
    },
    catch: (cause) => fail(`it could not be created (${describe(cause)})`)
  })
  const cleanUp = Effect.sync(() => {
    for (const suffix of ["", "-journal", "-wal", "-shm"]) removeIfPresent(`${creating}${suffix}`)
  })
  return write.pipe(Effect.zipRight(place), Effect.ensuring(cleanUp))
}

// A failure of the first reads: a journal a read-only connection may not roll back gets its own
// advice, never "restore": the file is sound once a writable open lets SQLite recover it.
const readFailure = (filename: string, fail: (detail: string) => SqliteOpenError) => (error: SqlError) =>
  SqliteErrors.needsWritableRecovery(error)
    ? new SqliteOpenError({
      filename,
      detail: "a crash left a rollback journal (or write-ahead log) beside it that SQLite must replay before " +
        "the file can be read, and this open may not write. Open it once with write access (any command that " +
        "writes, or `engram doctor`), and keep its -journal, -wal and -shm files with it until then"
    })
    : fail(describe(error.cause ?? error))

// Runs `use` on a connection of its own to the file, closed before it returns. A read-only one
// never checkpoints on closing, so it leaves the main file and its write-ahead log as they were.
const withConnection = <A>(
  filename: string,
  readonly: boolean,
  use: (client: SqlClient.SqlClient) => Effect.Effect<A, SqliteOpenError>,
  fail: (detail: string) => SqliteOpenError
): Effect.Effect<A, SqliteOpenError> =>
  Effect.scoped(
    Effect.gen(function*() {
      const client = yield* makeWaitingClient({ filename, disableWAL: true, readonly }).pipe(
        Effect.provide(Reactivity.layer),
        Effect.catchAllDefect((cause) => Effect.fail(fail(describe(cause))))
      )
      yield* Effect.mapError(client.unsafe(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`), (error) =>
        fail(describe(error.cause ?? error)))
      return yield* use(client)
    })
  )

/**
 * The header disagrees with the file, and a log or journal lies beside it: SQLite decides, before
 * the store's own connection opens. A hot rollback journal is rolled back (what SQLite does on any
 * writable open; it restores the file as it was before the interrupted transaction), after which
 * the header is exact again. A write-ahead log may hold the pages the main file lacks, which only
 * SQLite can tell: a read-only connection (it neither checkpoints nor writes) runs `quick_check`
 * over the file as the log completes it, whatever its size. Replaying the log into the main file
 * first would turn missing pages into zeroed ones the header check could no longer see.
 */
const recoverFirst = (
  filename: string,
  readonly: boolean,
  fail: (detail: string) => SqliteOpenError
): Effect.Effect<void, SqliteOpenError> =>
  Effect.gen(function*() {
    const sqlFailure = readFailure(filename, fail)
    const inspect = Effect.try({
      try: () => {
        const logs = recoveryLogs(filename)
        return { logs, problem: headerProblem(readHeader(filename), NodeFs.statSync(filename).size) }
      },
      catch: (cause) => fail(describe(cause))
    })
    let { logs, problem } = yield* inspect
    const rollBack = problem !== undefined && logs.journal > 0 && logs.wal === 0
    if (rollBack) {
      // The first read rolls the journal back (a read-only connection refuses, with advice).
      const problems = yield* withConnection(
        filename,
        readonly,
        (client) => Effect.mapError(schemaCheck(client), sqlFailure),
        fail
      )
      if (problems.length > 0) return yield* damaged(filename, summary(problems), problems, true)
      ;({ logs, problem } = yield* inspect)
    }
    if (problem === undefined) return
    if (logs.wal === 0) return yield* damaged(filename, problem, [problem], rollBack)
    const problems = yield* withConnection(filename, true, (client) =>
      Effect.mapError(quickCheck(client), sqlFailure), fail)
    if (problems.length > 0) {
      return yield* damaged(filename, `${summary(problems)} (read with its write-ahead log)`, problems)
    }
  })

/**
 * Opens the database and configures the connection. Scoped: the connection closes with the scope.
 *
 * A missing file is created whole (a valid empty database) or not at all, whatever moment a kill
 * lands (decision 0047). Before SQLite reads an existing file the constant-time checks run: an
 * empty file is refused (Engram never leaves one), and so is a header that disagrees with the
 * file — unless a write-ahead log or rollback journal lies beside it, from which SQLite may
 * complete the file. Then SQLite decides first: a hot journal is rolled back and the header
 * checked again; with a log, a read-only connection runs `quick_check` over the file as the log
 * completes it. A file SQLite can recover is never refused, and a refusal never advises restoring
 * one.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options?: ClientOptions
): Effect.Effect<SqliteClient.SqliteClient, SqliteOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const filename = options?.filename ?? DEFAULT_FILENAME
    const inMemory = isInMemory(filename)
    const fail = (detail: string) => new SqliteOpenError({ filename, detail })
    let readonly = options?.readonly === true
    const check = options?.integrityCheck ?? "auto"
    if (!inMemory) {
      const statFile = Effect.try({ try: () => statIfExists(filename), catch: (cause) => fail(describe(cause)) })
      let stat = yield* statFile
      // A writer's open tidies what a creation killed long ago left beside the store.
      if (!readonly && options?.create !== false) removeStaleCreations(filename)
      if (stat === undefined && (options?.create === false || readonly)) {
        return yield* fail("no such file; a command that only reads never creates a store (check the path)")
      }
      if (stat === undefined) {
        const directory = NodePath.dirname(NodePath.resolve(filename))
        yield* Effect.try({
          try: () => NodeFs.mkdirSync(directory, { recursive: true }),
          catch: (cause) => fail(`its directory "${directory}" cannot be created (${describe(cause)})`)
        })
        yield* createWhole(filename, fail)
        stat = yield* statFile
        if (stat === undefined) return yield* fail("it was removed while it was being created")
      } else if (options?.create === false && !readonly) {
        readonly = !isWritable(filename)
      }
      if (!stat.isFile()) return yield* fail("it is not a file")
      const logs = yield* Effect.try({ try: () => recoveryLogs(filename), catch: (cause) => fail(describe(cause)) })
      if (stat.size === 0) {
        // SQLite would open an empty file as a new database and delete the log beside it.
        if (logs.wal > 0) {
          return yield* new SqliteOpenError({
            filename,
            detail: `the file is empty (0 bytes) but its write-ahead log "${filename}-wal" holds ${logs.wal} bytes, ` +
              "which SQLite would discard on opening it. Nothing was read or written; keep both files as they are " +
              "(copy them aside) and restore the store from a backup"
          })
        }
        // Engram creates a store whole, so an empty file where a store should be is a truncated
        // store or the wrong path, never a store to start afresh.
        return yield* fail("the file is empty (0 bytes), so it is not an Engram store; remove it to start a new one")
      }
      if (check !== "none") {
        const header = yield* Effect.try({ try: () => readHeader(filename), catch: (cause) => fail(describe(cause)) })
        const problem = headerProblem(header, stat.size)
        if (problem !== undefined && logs.wal === 0 && logs.journal === 0) {
          return yield* damaged(filename, problem, [problem])
        }
        if (problem !== undefined) yield* recoverFirst(filename, readonly, fail)
      }
    }
    // Judged before SQLite opens the file (opening a WAL store creates a log beside it).
    const knownSound = !inMemory && check === "auto" && isKnownSound(filename)
    let sound = false
    // Runs after the connection's own finalizer has closed it (finalizers run last added, first).
    if (!inMemory && check !== "none") {
      yield* Effect.addFinalizer(() => Effect.sync(() => sound && recordVerified(filename)))
    }
    // better-sqlite3 throws from its constructor (e.g. SQLITE_CANTOPEN); the client turns that into
    // a defect, which is an expected failure here.
    // WAL is switched on below, after the integrity checks: switching rewrites the header.
    const client = yield* makeWaitingClient({ filename, disableWAL: true, readonly }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.catchAllDefect((cause) => Effect.fail(fail(describe(cause))))
    )
    const pragma = (statement: string) =>
      Effect.mapError(client.unsafe<Record<string, unknown>>(`PRAGMA ${statement}`), (error) =>
        fail(describe(error.cause ?? error)))
    yield* pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
    yield* pragma("foreign_keys = ON")
    if (!inMemory && check !== "none") {
      // `quick_check` reads every page (about 12 ms per MB): paid only when Engram cannot vouch for the file.
      const problems = yield* (knownSound ? schemaCheck(client) : quickCheck(client))
        .pipe(Effect.mapError(readFailure(filename, fail)))
      if (problems.length > 0) {
        return yield* damaged(filename, summary(problems), problems)
      }
      sound = true
    }
    if (!inMemory && !readonly) {
      const [mode] = yield* pragma("journal_mode = WAL")
      if (mode?.journal_mode !== "wal") {
        return yield* fail(`it could not be switched to WAL mode (journal_mode is ${String(mode?.journal_mode)})`)
      }
      // WAL makes NORMAL durable against application crashes; only an OS crash can lose the last commits.
      yield* pragma("synchronous = NORMAL")
    }
    return client
  })

/**
 * The SQL client over one SQLite database. Creates a missing file (whole) and its directory (unless
 * `create: false`), refuses an empty or damaged file but opens every file SQLite recovers (see
 * {@link make}), runs `quick_check` (unless `integrityCheck: "none"`),
 * opens the database in WAL mode (writable files only), and sets `busy_timeout` and `foreign_keys`.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options?: ClientOptions
): Layer.Layer<SqlClient.SqlClient | SqliteClient.SqliteClient, SqliteOpenError> =>
  Layer.scopedContext(
    Effect.map(make(options), (client) =>
      Context.make(SqliteClient.SqliteClient, client).pipe(Context.add(SqlClient.SqlClient, client)))
  )
