/**
 * `engram migrate --from <sqlite file> --to <postgres url>`: copies a whole Engram store from its
 * SQLite file to PostgreSQL — memory records with their lifecycle, promotion rows, session
 * messages and pending interrupts, the injection log, and the legacy import's markers — then
 * verifies the copy.
 *
 * - **Progress** goes to stderr: a bar when stderr is a terminal, a plain line at most once a
 *   second otherwise. The summary (counts on both sides, and the checksum) goes to stdout, as
 *   JSON with `--json`.
 * - **Resumable.** Records are copied in batches, each one transaction; what the target already
 *   holds is skipped. Interrupted — Ctrl-C, a killed process, a dropped connection — the same
 *   command run again continues where the copy stopped and verifies everything.
 * - **Verified.** Both sides are counted and digested (SHA-256 over every record, promotion row,
 *   message, interrupt and injection row, in one order). Any difference fails the command with
 *   exit code 1, naming the differing counts or checksums; nothing in the target is deleted.
 * - The source must exist and be an Engram store (it is never created). It is opened as every
 *   `engram` command opens it; tables it lacks (no sessions yet, say) count as empty and are not
 *   created in it.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import * as ValidationError from "@effect/cli/ValidationError"
import * as SqlClient from "@effect/sql/SqlClient"
import {
  MemoryStore,
  PromotionStore,
  SessionMigration,
  SessionStore,
  StoreMigration,
  TelemetryStore
} from "@engram/core"
import { PgMemoryStore, PgPromotionStore, PgSessionStore, PgTelemetryStore } from "@engram/store-pg"
import {
  EngramSqlite,
  SqliteMemoryStore,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import * as Cause from "effect/Cause"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import { CliFailure, ExitCode, StoreUnavailable, toCliFailure } from "../CliError.js"
import * as Progress from "../Progress.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

/**
 * Records per batch (one read, one transaction on the target) unless `--batch-size` says otherwise.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEFAULT_BATCH_SIZE = 500

const MAX_BATCH_SIZE = 10_000
const PREFIX = "engram migrate"
// The table every Engram SQLite store has; a file without it is not one.
const MEMORY_TABLE = "engram_memories"

const invalid = (text: string) => ValidationError.invalidValue(HelpDoc.p(text))

const fromOption = Options.text("from").pipe(
  Options.withPseudoName("file"),
  Options.withDescription("The SQLite store to copy (e.g. ./.engram/engram.db). It must exist; it is never created."),
  Options.mapEffect((path) => {
    if (EngramSqlite.isInMemory(path)) {
      return Effect.fail(invalid("--from: name a SQLite file, not an in-memory database"))
    }
    const stat = NodeFs.statSync(path, { throwIfNoEntry: false })
    if (stat === undefined) return Effect.fail(invalid(`--from: no such file: ${path}`))
    if (!stat.isFile()) return Effect.fail(invalid(`--from: ${path} is not a file`))
    return Effect.succeed(path)
  })
)

const toOption = Root.pgUrlOption(
  "to",
  "The PostgreSQL database to copy into: postgres://user:password@host:5432/database. Its tables are created " +
    "when missing; --pg-schema puts them in a schema of their own. Copy into an empty store."
)

const batchSizeOption = Options.integer("batch-size").pipe(
  Options.withPseudoName("n"),
  Options.withDescription(`Records per batch, each one transaction on the target. Default: ${DEFAULT_BATCH_SIZE}.`),
  Options.withDefault(DEFAULT_BATCH_SIZE),
  Options.mapEffect((n) =>
    n >= 1 && n <= MAX_BATCH_SIZE
      ? Effect.succeed(n)
      : Effect.fail(invalid(`--batch-size: must be from 1 to ${MAX_BATCH_SIZE}`))
  )
)

/** One side of the copy: every store, on one database, and the SQL client under them. */
interface Stores {
  readonly memory: MemoryStore.MemoryStoreService
  readonly promotions: PromotionStore.PromotionStoreService
  readonly sessions: SessionStore.SessionStoreService
  readonly telemetry: TelemetryStore.TelemetryStoreService
  readonly sql: SqlClient.SqlClient
}

const storesOf = (context: Context.Context<
  | MemoryStore.MemoryStore
  | PromotionStore.PromotionStore
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore
  | SqlClient.SqlClient
>): Stores => ({
  memory: Context.get(context, MemoryStore.MemoryStore),
  promotions: Context.get(context, PromotionStore.PromotionStore),
  sessions: Context.get(context, SessionStore.SessionStore),
  telemetry: Context.get(context, TelemetryStore.TelemetryStore),
  sql: Context.get(context, SqlClient.SqlClient)
})

const refused = (problem: string) => new CliFailure({ problem, exitCode: ExitCode.refused })

// The key/value table the legacy import keeps its markers in (which v1 data was imported), so
// that importing the same file again into the copy is still recognised as done.
const META_TABLE = "engram_meta"

/** One row of `engram_meta`. */
interface Marker {
  readonly key: string
  readonly value: string
}

const readMarkers = (sql: SqlClient.SqlClient) =>
  Effect.map(
    sql<Marker>`SELECT key, value FROM ${sql(META_TABLE)}`,
    (rows): ReadonlyArray<Marker> =>
      rows.map(({ key, value }) => ({ key, value })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
  )

/**
 * Copies the source's `engram_meta` rows the target lacks, then reads the target's back. The
 * table is created in the target only when there is something to copy.
 */
const copyMarkers = (markers: ReadonlyArray<Marker>, sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const [found] = yield* sql<{ readonly present: boolean }>`
      SELECT to_regclass(${META_TABLE}) IS NOT NULL AS present`
    if (markers.length === 0 && found?.present !== true) return { copied: 0, target: [] }
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(META_TABLE)} (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
    const before = new Set((yield* readMarkers(sql)).map((marker) => marker.key))
    const missing = markers.filter((marker) => !before.has(marker.key))
    if (missing.length > 0) {
      yield* sql`INSERT INTO ${sql(META_TABLE)} ${sql.insert(missing.map(({ key, value }) => ({ key, value })))}
        ON CONFLICT (key) DO NOTHING`
    }
    return { copied: missing.length, target: yield* readMarkers(sql) }
  })

const markerLines = (markers: ReadonlyArray<Marker>): string =>
  markers.map((marker) => `${JSON.stringify(marker.key)}\t${JSON.stringify(marker.value)}`).join("\n")

/**
 * Opens the source file's stores. A table the file lacks is read as empty (an in-memory store)
 * rather than created in the file.
 */
const openSource = (
  file: string
): Effect.Effect<Stores & { readonly markers: ReadonlyArray<Marker> }, CliFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const client = yield* Layer.build(EngramSqlite.layerClient({ filename: file })).pipe(
      Effect.mapError((error) => refused(`cannot read ${file}: ${error.detail}`))
    )
    const sql = Context.get(client, SqlClient.SqlClient)
    const rows = yield* sql<{ readonly name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.pipe(
      Effect.mapError((error) =>
        refused(`${file} is not a SQLite database (${StoreBackend.describeCause(Cause.fail(error))})`)
      )
    )
    const tables = new Set(rows.map((row) => row.name))
    if (!tables.has(MEMORY_TABLE)) {
      return yield* refused(`${file} is not an Engram store: it has no ${MEMORY_TABLE} table`)
    }
    const stores = Layer.mergeAll(
      SqliteMemoryStore.layerSqlite,
      tables.has(SqlitePromotionStore.TABLE) ? SqlitePromotionStore.layerSqlite : PromotionStore.layerMemory,
      tables.has(SqliteSessionStore.MESSAGES_TABLE) || tables.has(SqliteSessionStore.INTERRUPTS_TABLE)
        ? SqliteSessionStore.layerSqlite
        : SessionStore.layerMemory,
      tables.has(SqliteTelemetryStore.INJECTIONS_TABLE) ? SqliteTelemetryStore.layerSqlite : TelemetryStore.layerMemory
    ).pipe(Layer.provideMerge(Layer.succeedContext(client)))
    const markers = tables.has(META_TABLE) ? yield* readMarkers(sql).pipe(Effect.mapError(toCliFailure)) : []
    const opened = storesOf(
      yield* Layer.build(stores).pipe(
        Effect.catchAllCause((cause) =>
          Effect.fail(new StoreUnavailable({ location: file, detail: StoreBackend.describeCause(cause) }))
        ),
        Effect.mapError(toCliFailure)
      )
    )
    return { ...opened, markers }
  })

/** Opens (and migrates) every PostgreSQL store of the target. */
const openTarget = (location: StoreBackend.PgLocation): Effect.Effect<Stores, CliFailure, Scope.Scope> =>
  Layer.build(
    Layer.mergeAll(PgMemoryStore.layerPg, PgPromotionStore.layerPg, PgSessionStore.layerPg, PgTelemetryStore.layerPg)
      .pipe(Layer.provideMerge(StoreBackend.pgClient(location)))
  ).pipe(
    Effect.map(storesOf),
    Effect.catchAllCause((cause) =>
      Effect.fail(
        toCliFailure(
          new StoreUnavailable({
            location: StoreBackend.describeLocation({ db: "", pg: location }),
            detail: StoreBackend.scrubPassword(StoreBackend.describeCause(cause), location.url)
          })
        )
      )
    )
  )

/** One count on both sides, and how much of it this run wrote. */
interface Tally {
  readonly source: number
  readonly target: number
  readonly copied?: number
}

/**
 * The `--json` summary of a verified copy.
 *
 * @since 0.1.0
 * @category models
 */
export interface Summary {
  readonly from: string
  readonly to: string
  readonly schema: string | null
  readonly verified: true
  readonly records: Tally & { readonly copied: number; readonly alreadyPresent: number; readonly unreadable: number }
  readonly promotions: Tally
  readonly sessions: Tally & { readonly unreadable: number }
  readonly messages: Tally
  readonly interrupts: Tally
  readonly injections: Tally
  readonly importMarkers: Tally
  readonly checksum: { readonly source: string; readonly target: string }
  readonly batches: number
  readonly seconds: number
}

const sha256 = (text: string): Effect.Effect<string> =>
  Effect.promise(() => globalThis.crypto.subtle.digest("SHA-256", new TextEncoder().encode(text))).pipe(
    Effect.map((buffer) => Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join(""))
  )

/**
 * The whole store's checksum: SHA-256 over the records' digest (records and promotion rows), the
 * sessions' digest (messages, interrupts and injection rows) and the legacy-import markers.
 *
 * @since 0.1.0
 * @category verifying
 */
export const storeChecksum = (records: string, sessions: string, markers: string): Effect.Effect<string> =>
  Effect.flatMap(
    sha256(markers),
    (meta) => sha256(`engram store v1\nrecords ${records}\nsessions ${sessions}\nmeta ${meta}`)
  )

/**
 * The human summary of a verified copy.
 *
 * @since 0.1.0
 * @category rendering
 */
export const renderSummary = (summary: Summary): string => {
  const rows: ReadonlyArray<readonly [string, Tally]> = [
    ["records", summary.records],
    ["promotion rows", summary.promotions],
    ["sessions", summary.sessions],
    ["messages", summary.messages],
    ["interrupts", summary.interrupts],
    ["injection rows", summary.injections],
    ["import markers", summary.importMarkers]
  ]
  const cell = (n: number | undefined, width: number) =>
    (n === undefined ? "" : Progress.formatCount(n)).padStart(width)
  const lines = [
    `copied ${summary.from} to ${summary.to}${summary.schema === null ? "" : ` (schema ${summary.schema})`}: verified`,
    `${"".padEnd(16)}${"source".padStart(10)}${"target".padStart(10)}${"written now".padStart(13)}`,
    ...rows.map(([name, tally]) =>
      `${name.padEnd(16)}${cell(tally.source, 10)}${cell(tally.target, 10)}${cell(tally.copied, 13)}`
    ),
    `checksum        ${summary.checksum.target} (source and target agree)`
  ]
  const notes: Array<string> = []
  if (summary.records.alreadyPresent > 0) {
    notes.push(`${Progress.formatCount(summary.records.alreadyPresent)} records were already in the target`)
  }
  const unreadable = summary.records.unreadable + summary.sessions.unreadable
  if (unreadable > 0) notes.push(`${Progress.formatCount(unreadable)} unreadable source rows were not copied`)
  lines.push(`${summary.seconds.toFixed(1)}s${notes.length > 0 ? `; ${notes.join("; ")}` : ""}`)
  return lines.join("\n")
}

const verificationFailed = (
  error: StoreMigration.StoreMigrationMismatch | SessionMigration.SessionMigrationMismatch
) => {
  const checksums = error._tag === "StoreMigrationMismatch"
    ? [error.sourceChecksum, error.targetChecksum]
    : [error.source.checksum, error.target.checksum]
  const detail = error.message.includes(checksums[0]!.slice(0, 12))
    ? ""
    : ` (checksums: source ${checksums[0]!.slice(0, 12)}…, target ${checksums[1]!.slice(0, 12)}…)`
  return refused(`verification failed: ${error.message}${detail}; nothing in the target was deleted`)
}

const copy = (
  from: string,
  to: StoreBackend.PgLocation,
  batchSize: number,
  output: Progress.Output
) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const source = yield* openSource(from)
    const target = yield* openTarget(to)
    let display: Progress.Display | undefined
    const note = (text: string) =>
      display === undefined ? Effect.sync(() => output.write(`${PREFIX}: ${text}\n`)) : display.note(text)

    const records = yield* StoreMigration.copyStore(source.memory, target.memory, {
      batchSize,
      promotions: { from: source.promotions, to: target.promotions },
      onProgress: (p) =>
        Effect.gen(function*() {
          if (p.phase === "scanned") {
            yield* note(`copying ${Progress.formatCount(p.total)} records from ${from}`)
            display = yield* Progress.make({ output, prefix: PREFIX, label: "records", total: p.total })
          } else if (p.phase === "copying") {
            yield* display!.update(p.read)
          } else {
            yield* display!.finish(p.read)
            yield* note(`verifying ${Progress.formatCount(p.total)} records`)
          }
        })
    }).pipe(Effect.onInterrupt(() => display?.close ?? Effect.void))
    display = undefined

    const sessions = yield* SessionMigration.copySessions({
      sessions: { from: source.sessions, to: target.sessions },
      telemetry: { from: source.telemetry, to: target.telemetry }
    }, {
      batchSize,
      onProgress: (p) =>
        Effect.gen(function*() {
          if (p.total === 0) {
            if (p.phase === "scanned") yield* note("no sessions to copy")
          } else if (p.phase === "scanned") {
            yield* note(`copying ${Progress.formatCount(p.total)} sessions`)
            display = yield* Progress.make({ output, prefix: PREFIX, label: "sessions", total: p.total })
          } else if (p.phase === "copying") {
            yield* display!.update(p.done)
          } else {
            yield* display!.finish(p.done)
            yield* note(`verifying ${Progress.formatCount(p.total)} sessions`)
          }
        })
    }).pipe(Effect.onInterrupt(() => display?.close ?? Effect.void))

    const markers = yield* copyMarkers(source.markers, target.sql)
    if (markerLines(markers.target) !== markerLines(source.markers)) {
      const what = `legacy-import markers (${META_TABLE})`
      return yield* refused(
        `verification failed: ${
          markers.target.length === source.markers.length
            ? `the target's ${what} differ from the source's`
            : `the target holds ${markers.target.length} ${what} but the source ${source.markers.length}`
        }; nothing in the target was deleted`
      )
    }

    const finished = yield* Clock.currentTimeMillis
    const summary: Summary = {
      from,
      to: StoreBackend.redactUrl(to.url),
      schema: to.schema ?? null,
      verified: true,
      records: {
        source: records.source.count,
        target: records.target.count,
        copied: records.copied,
        alreadyPresent: records.alreadyPresent,
        unreadable: records.source.unreadable
      },
      promotions: {
        source: records.source.promotions,
        target: records.target.promotions,
        copied: records.promotionsCopied
      },
      // Unreadable: stored messages and injection rows of the source that failed to decode.
      sessions: {
        source: sessions.source.sessions,
        target: sessions.target.sessions,
        unreadable: sessions.source.unreadable
      },
      messages: { source: sessions.source.messages, target: sessions.target.messages, copied: sessions.messagesCopied },
      interrupts: {
        source: sessions.source.interrupts,
        target: sessions.target.interrupts,
        copied: sessions.interruptsCopied
      },
      injections: {
        source: sessions.source.injections,
        target: sessions.target.injections,
        copied: sessions.injectionsCopied
      },
      importMarkers: { source: source.markers.length, target: markers.target.length, copied: markers.copied },
      checksum: {
        source: yield* storeChecksum(records.source.checksum, sessions.source.checksum, markerLines(source.markers)),
        target: yield* storeChecksum(records.target.checksum, sessions.target.checksum, markerLines(markers.target))
      },
      batches: records.batches,
      seconds: (finished - started) / 1000
    }
    return summary
  }).pipe(
    Effect.catchTags({
      StoreMigrationMismatch: (error) => Effect.fail(verificationFailed(error)),
      SessionMigrationMismatch: (error) => Effect.fail(verificationFailed(error))
    }),
    Effect.scoped
  )

/**
 * `engram migrate --from <sqlite file> --to <postgres url> [--pg-schema <name>] [--batch-size n]`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "migrate",
  { from: fromOption, to: toOption, batchSize: batchSizeOption },
  ({ batchSize, from, to }) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings
      if (settings.pg !== undefined || settings.dbGiven) {
        return yield* refused(
          `migrate reads --from <sqlite file> and writes --to <postgres url>; ${
            settings.pg !== undefined ? "--pg" : "--db"
          } does not apply to it`
        )
      }
      const location: StoreBackend.PgLocation = { url: to, schema: settings.pgSchema }
      const output = Progress.stderr
      const summary = yield* copy(from, location, batchSize, output).pipe(
        Effect.onInterrupt(() =>
          Effect.sync(() =>
            output.write(`${PREFIX}: interrupted; what was copied stays — run the same command again to resume\n`)
          )
        )
      )
      yield* Console.log(settings.json ? Render.json(summary) : renderSummary(summary))
    }).pipe(
      Effect.mapError((error) => {
        const failure = toCliFailure(error)
        return new CliFailure({ problem: StoreBackend.scrubPassword(failure.problem, to), exitCode: failure.exitCode })
      })
    )
).pipe(
  Command.withDescription(
    "Copy a whole SQLite store to PostgreSQL — records with their lifecycle, promotion rows, sessions and the " +
      "injection log — with progress on stderr; resumable (run it again after an interruption) and verified by " +
      "counts and a SHA-256 checksum."
  )
)

