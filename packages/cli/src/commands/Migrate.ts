/**
 * `engram migrate --from <sqlite file|postgres url> --to <postgres url|sqlite file>`: copies a
 * whole Engram store between a SQLite file and PostgreSQL, either way — memory records with their
 * lifecycle, promotion rows, session messages and pending interrupts, the injection log, and the
 * legacy import's markers — then verifies the copy.
 *
 * - **Progress** goes to stderr: a bar when stderr is a terminal, a plain line at most once a
 *   second otherwise. The summary (counts on both sides, and the checksum) goes to stdout, as
 *   JSON with `--json`.
 * - **Resumable.** Records are copied in batches, each one transaction; what the target already
 *   holds is skipped. Interrupted — Ctrl-C, a killed process, a dropped connection — the same
 *   command run again continues where the copy stopped and verifies everything.
 * - **A record the target refuses is named** with the reason (PostgreSQL's SQLSTATE and message,
 *   an input limit…). `--on-error stop` (the default) stops there with exit code 1 — what was
 *   copied stays; `--on-error skip` leaves it out, goes on, and lists every skipped record in the
 *   summary; verification then compares the target with the source minus those records.
 * - **Verified.** Both sides are counted and digested (SHA-256 over every record, promotion row,
 *   message, interrupt and injection row, in one order). Any difference fails the command with
 *   exit code 1, naming the differing counts or checksums; nothing in the target is deleted.
 * - The source must exist and be an Engram store (it is never created or migrated); tables it
 *   lacks (no sessions yet, say) count as empty and are not created in it. The SQL against each
 *   backend's tables lives in the store packages (`SqliteMigration`, `PgMigration`).
 * - **The language travels.** The target's search index stems in the source's language (read from
 *   the source's meta table), so a copy stays in its language; `--language` names another (a copy
 *   is how a store changes language, decision 0196). A target that already records another
 *   language is refused, naming both (`ENGRAM_LANGUAGE` does not apply: it names the language of
 *   the store other commands open).
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as SearchTokenizer from "@engram/core/SearchTokenizer"
import * as Sha256 from "@engram/core/Sha256"
import type * as SessionMigration from "@engram/migrate/SessionMigration"
import type * as StoreMigration from "@engram/migrate/StoreMigration"
import * as MigrationPort from "@engram/store-sql/MigrationPort"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import type * as SqliteMigration from "@engram/store-sqlite/SqliteMigration"
import * as Clock from "effect/Clock"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import type * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import { CliFailure, ExitCode, StoreUnavailable, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
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

/** One side of the copy: a SQLite file or a PostgreSQL URL (kept redacted). */
type Side =
  | { readonly _tag: "Sqlite"; readonly file: string }
  | { readonly _tag: "Pg"; readonly url: Redacted.Redacted<string> }

// Anything with a scheme is a URL (and must be a PostgreSQL one); everything else is a file path.
const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i

const sideOption = (name: "from" | "to", description: string) =>
  Flags.required(Flags.make(
    name,
    (value): Effect.Effect<Side, string> => {
      if (hasScheme.test(value)) {
        const problem = Root.pgUrlProblem(value)
        return problem === undefined ? Effect.succeed({ _tag: "Pg", url: Redacted.make(value) }) : Effect.fail(problem)
      }
      if (SqliteDatabase.isInMemory(value)) return Effect.fail("name a SQLite file, not an in-memory database")
      const stat = NodeFs.statSync(value, { throwIfNoEntry: false })
      if (stat === undefined && name === "from") return Effect.fail(`no such file: ${value}`)
      if (stat !== undefined && !stat.isFile()) return Effect.fail(`${value} is not a file`)
      return Effect.succeed({ _tag: "Sqlite", file: value })
    },
    description,
    name === "from" ? "file|url" : "url|file"
  ))

const fromOption = sideOption(
  "from",
  "The store to copy: a SQLite file (e.g. ./.engram/engram.db; it must exist and is never created) or a " +
    "postgres:// URL (its tables are read, never created)."
)

const toOption = sideOption(
  "to",
  "Where to copy it: a postgres://user:password@host:5432/database URL (tables created when missing; " +
    "--pg-schema puts them in a schema of their own) or a SQLite file (created when missing). Copy into an " +
    "empty store."
)

const batchSizeOption = Flags.withDefault(
  Flags.text(
    "batch-size",
    Flags.WholeNumber.pipe(
      Schema.filter((n) => (n >= 1 && n <= MAX_BATCH_SIZE) || `must be from 1 to ${MAX_BATCH_SIZE}`)
    ),
    `Records per batch, each one transaction on the target. Default: ${DEFAULT_BATCH_SIZE}.`,
    "n"
  ),
  DEFAULT_BATCH_SIZE
)

const onErrorOption = Flags.withDefault(
  Flags.choice(
    "on-error",
    ["stop", "skip"],
    "A record the target refuses (named with the reason): stop there (default; what was copied stays), or " +
      "skip it, go on and list it in the summary.",
    "stop|skip"
  ),
  "stop"
)

const refused = (problem: string) => new CliFailure({ problem, exitCode: ExitCode.refused })

/** How a side reads in messages: the file, or the redacted URL and schema. */
const describeSide = (side: Side, schema: string | undefined): string =>
  side._tag === "Sqlite"
    ? side.file
    : StoreBackend.describeLocation({ db: "", pg: { url: side.url, ...(schema === undefined ? {} : { schema }) } })

/**
 * The copy's code, loaded only by a run of `migrate`: the migrate package and SQLite's migration
 * endpoint pull in the session and telemetry stores and the projection's types, which no other
 * command loads as it starts.
 */
const loadCopying = Effect.promise(() =>
  Promise.all([
    import("@engram/migrate/StoreMigration"),
    import("@engram/migrate/SessionMigration"),
    import("@engram/store-sqlite/SqliteMigration")
  ])
)

/**
 * Opens one side of the copy through its store package, its memory store in `language` (none: the
 * store's own); a store that records another language fails with `LanguageMismatch`.
 */
const openSide = (
  sqlite: typeof SqliteMigration,
  side: Side,
  schema: string | undefined,
  role: MigrationPort.EndpointRole,
  language?: SearchTokenizer.Language
): Effect.Effect<MigrationPort.Endpoint, CliFailure | SearchTokenizer.LanguageMismatch, Scope.Scope> =>
  side._tag === "Sqlite"
    ? sqlite.open(side.file, role, { language }).pipe(
      Effect.mapError((error) =>
        error._tag === "LanguageMismatch"
          ? error
          : error.reason === "unopenable"
          ? refused(`cannot read ${side.file}: ${error.problem}`)
          : error.reason === "stores"
          ? toCliFailure(new StoreUnavailable({ location: side.file, detail: error.problem }))
          : refused(`${side.file} ${error.problem}`)
      )
    )
    // The PostgreSQL driver is loaded only for a PostgreSQL side.
    : Effect.flatMap(Effect.promise(() => import("@engram/store-pg/PgMigration")), (PgMigration) =>
      PgMigration.open(
        {
          url: side.url,
          schema,
          maxConnections: StoreBackend.PG_POOL_SIZE,
          applicationName: "engram-cli"
        },
        role,
        { language }
      )).pipe(
        Effect.mapError((error) =>
          error._tag === "LanguageMismatch" ? error : toCliFailure(
            new StoreUnavailable({
              location: describeSide(side, schema),
              detail: StoreBackend.scrubPassword(error.problem, side.url)
            })
          )
        )
      )

/**
 * The target records another language than the copy's (`--language` when `flag`, else the
 * source's): refused, naming both and the two ways on.
 */
const languageRefused = (target: string, mismatch: SearchTokenizer.LanguageMismatch, flag: boolean) => {
  const { given, stored } = mismatch
  return refused(
    `the target ${target} is a store in ${StoreBackend.languageName(stored)}, not ` +
      `${StoreBackend.languageName(given)} (${
        flag ? `--language ${StoreBackend.languageCode(given)}` : "the source's language"
      }): copy into a new target, or give --language ${StoreBackend.languageCode(stored)} to copy into this ` +
      `one in ${StoreBackend.languageName(stored)}`
  )
}

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
  /** The languages the two search indexes stem in: the target's is the source's unless `--language` named another. */
  readonly language: { readonly source: string; readonly target: string }
  readonly verified: true
  readonly records: Tally & {
    readonly copied: number
    readonly alreadyPresent: number
    readonly unreadable: number
    /** Records the target refused and `--on-error skip` left out. */
    readonly skipped: number
  }
  /** Each record left out, with the target's reason, in listing order. */
  readonly skippedRecords: ReadonlyArray<StoreMigration.SkippedRecord>
  readonly promotions: Tally
  readonly sessions: Tally & { readonly unreadable: number }
  readonly messages: Tally
  readonly interrupts: Tally
  readonly injections: Tally
  readonly extractions: Tally
  readonly importMarkers: Tally
  readonly checksum: { readonly source: string; readonly target: string }
  readonly batches: number
  readonly seconds: number
}

/**
 * The whole store's checksum: SHA-256 over the records' digest (records and promotion rows), the
 * sessions' digest (messages, interrupts, injection rows and extraction runs) and the legacy-import markers.
 *
 * @since 0.1.0
 * @category verifying
 */
export const storeChecksum = (records: string, sessions: string, markers: string): Effect.Effect<string> =>
  Effect.sync(() =>
    Sha256.hex(`engram store v1\nrecords ${records}\nsessions ${sessions}\nmeta ${Sha256.hex(markers)}`)
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
    ["extraction runs", summary.extractions],
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
    `checksum        ${summary.checksum.target} (${
      summary.records.skipped === 0 ? "source" : "the source without the skipped records"
    } and target agree)`,
    `language        ${StoreBackend.languageName(summary.language.target)}${
      summary.language.source === summary.language.target
        ? " (the source's)"
        : ` (the source's: ${StoreBackend.languageName(summary.language.source)})`
    }`
  ]
  const notes: Array<string> = []
  if (summary.records.alreadyPresent > 0) {
    notes.push(`${Progress.formatCount(summary.records.alreadyPresent)} records were already in the target`)
  }
  const unreadable = summary.records.unreadable + summary.sessions.unreadable
  if (unreadable > 0) notes.push(`${Progress.formatCount(unreadable)} unreadable source rows were not copied`)
  if (summary.records.skipped > 0) {
    notes.push(
      `${Progress.formatCount(summary.records.skipped)} records the target refused were not copied (--on-error skip)`
    )
  }
  lines.push(`${summary.seconds.toFixed(1)}s${notes.length > 0 ? `; ${notes.join("; ")}` : ""}`)
  for (const record of summary.skippedRecords) lines.push(`  not copied: ${record.id}: ${record.reason}`)
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
  from: Side,
  to: Side,
  schema: string | undefined,
  options: {
    readonly batchSize: number
    readonly onError: StoreMigration.OnError
    /** `--language`: the target's language; none, the source's. */
    readonly language: SearchTokenizer.Language | undefined
  },
  output: Progress.Output
) =>
  Effect.gen(function*() {
    const started = yield* Clock.currentTimeMillis
    const [StoreMigration, SessionMigration, SqliteMigration] = yield* loadCopying
    // Opened in the language it records, which it cannot refuse.
    const source = yield* openSide(SqliteMigration, from, schema, "source").pipe(
      Effect.catchTag("LanguageMismatch", (mismatch) => Effect.die(mismatch))
    )
    const target = yield* openSide(SqliteMigration, to, schema, "target", options.language ?? source.language).pipe(
      Effect.catchTag("LanguageMismatch", (mismatch) =>
        Effect.fail(languageRefused(describeSide(to, schema), mismatch, options.language !== undefined)))
    )
    const fromText = describeSide(from, schema)
    let display: Progress.Display | undefined
    const note = (text: string) =>
      display === undefined
        ? Effect.sync(() =>
          output.write(`${PREFIX}: ${text}\n`)
        )
        : display.note(text)

    const records = yield* StoreMigration.copyStore(source.memory, target.memory, {
      batchSize: options.batchSize,
      onError: options.onError,
      promotions: { from: source.promotions, to: target.promotions },
      onProgress: (p) =>
        Effect.gen(function*() {
          if (p.phase === "scanned") {
            yield* note(`copying ${Progress.formatCount(p.total)} records from ${fromText}`)
            display = yield* Progress.make({ output, prefix: PREFIX, label: "records", total: p.total })
          } else if (p.phase === "copying") {
            yield* display!.update(p.read)
          } else {
            yield* display!.finish(p.read)
            yield* note(
              `verifying ${Progress.formatCount(p.total - p.skipped)} records` +
                (p.skipped > 0 ? ` (${Progress.formatCount(p.skipped)} refused by the target, left out)` : "")
            )
          }
        })
    }).pipe(Effect.onInterrupt(() => display?.close ?? Effect.void))
    display = undefined

    const sessions = yield* SessionMigration.copySessions({
      sessions: { from: source.sessions, to: target.sessions },
      telemetry: { from: source.telemetry, to: target.telemetry }
    }, {
      batchSize: options.batchSize,
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

    const sourceMarkers = yield* source.markers.read
    const markersCopied = yield* target.markers.add(sourceMarkers)
    const targetMarkers = yield* target.markers.read
    if (MigrationPort.markerLines(targetMarkers) !== MigrationPort.markerLines(sourceMarkers)) {
      const what = "legacy-import markers (engram_meta)"
      return yield* refused(
        `verification failed: ${
          targetMarkers.length === sourceMarkers.length
            ? `the target's ${what} differ from the source's`
            : `the target holds ${targetMarkers.length} ${what} but the source ${sourceMarkers.length}`
        }; nothing in the target was deleted`
      )
    }

    const finished = yield* Clock.currentTimeMillis
    const markerText = MigrationPort.markerLines(sourceMarkers)
    const summary: Summary = {
      from: fromText,
      to: describeSide(to, schema),
      schema: schema ?? null,
      language: { source: source.language, target: target.language },
      verified: true,
      records: {
        source: records.source.count,
        target: records.target.count,
        copied: records.copied,
        alreadyPresent: records.alreadyPresent,
        unreadable: records.source.unreadable,
        skipped: records.skipped.length
      },
      skippedRecords: records.skipped,
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
      extractions: {
        source: sessions.source.extractions,
        target: sessions.target.extractions,
        copied: sessions.extractionsCopied
      },
      importMarkers: { source: sourceMarkers.length, target: targetMarkers.length, copied: markersCopied },
      // The source side is what the target was verified against (without any skipped records).
      checksum: {
        source: yield* storeChecksum(records.expected.checksum, sessions.source.checksum, markerText),
        target: yield* storeChecksum(
          records.target.checksum,
          sessions.target.checksum,
          MigrationPort.markerLines(targetMarkers)
        )
      },
      batches: records.batches,
      seconds: (finished - started) / 1000
    }
    return summary
  }).pipe(
    Effect.catchTags({
      StoreMigrationMismatch: (error) => Effect.fail(verificationFailed(error)),
      SessionMigrationMismatch: (error) => Effect.fail(verificationFailed(error)),
      RecordNotCopied: (error) =>
        Effect.fail(
          refused(
            `${error.message}; what was copied before it stays — fix the record, or run the same command with ` +
              `--on-error skip to leave it out`
          )
        )
    }),
    Effect.scoped
  )

/**
 * `engram migrate --from <file|url> --to <url|file> [--pg-schema <name>] [--language <code>] [--batch-size n]
 * [--on-error stop|skip]`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "migrate",
  { from: fromOption, to: toOption, batchSize: batchSizeOption, onError: onErrorOption },
  ({ batchSize, from, onError, to }) =>
    Effect.gen(function*() {
      const settings = yield* Root.settings
      yield* StoreBackend.refuseStoreFlags(settings, "migrate reads --from and writes --to")
      if (from._tag === to._tag) {
        return yield* refused(
          from._tag === "Pg"
            ? "migrate copies between a SQLite file and PostgreSQL: --from and --to are both postgres:// URLs"
            : "migrate copies between a SQLite file and PostgreSQL: one of --from and --to must be a postgres:// URL"
        )
      }
      const output = Progress.stderr
      const summary = yield* copy(from, to, settings.pgSchema, {
        batchSize,
        onError,
        language: settings.language
      }, output).pipe(
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
        const url = from._tag === "Pg" ? from.url : to._tag === "Pg" ? to.url : undefined
        return url === undefined
          ? failure
          : new CliFailure({ problem: StoreBackend.scrubPassword(failure.problem, url), exitCode: failure.exitCode })
      })
    )
).pipe(
  Command.withDescription(
    "Copy a whole store between a SQLite file and PostgreSQL, either way — records with their lifecycle, " +
      "promotion rows, sessions and the injection log — with progress on stderr; resumable (run it again after " +
      "an interruption), verified by counts and a SHA-256 checksum, and naming any record the target refuses " +
      "(--on-error stop|skip). The target's search index stems in the source's language unless --language " +
      "names another; a target in another language is refused."
  )
)
