/**
 * Imports a legacy v1 knowledge store — the `chunks` table of another SQLite file — into the
 * memory store, once.
 *
 * Mapping (the D4 backfill):
 *
 * | v1 `domain` | condition | kind | delivery policy |
 * | --- | --- | --- | --- |
 * | `hot` | | `standing` | `always` |
 * | `preferences` | | `profile` | `retrieved` |
 * | `general` | `source_type` = `conversation` | `note` | `retrieved` |
 * | `general` | any other `source_type` | `reference` | `retrieved` |
 * | `finding`, `fact` | | `fact` | `retrieved` |
 * | `conversation` | | `note` | `retrieved` |
 * | anything else, or none | | `legacy` | `retrieved` |
 *
 * - `domain` is kept on the record; `source_type` becomes the provenance (unrecognised → `unknown`);
 *   review state follows provenance (operator → `confirmed`, everything else → `pending`).
 * - `namespace` becomes the scope: empty → `global`, a valid `project:<id>`/`session:<id>` is kept,
 *   anything else stays isolated as the project named after it (see `scopeOf`).
 * - `created_at`, `invalidated_at`, `invalidation_reason` and `epoch` are kept; a
 *   `superseded_by:<v1 id>` reason pointing at another imported row is rewritten to the new id and
 *   links both records.
 * - Columns later v1 versions added (`memory_kind`, `delivery_policy`, `review_state`,
 *   `expires_at`) win over the derived values when they hold a valid value.
 * - Ids are `legacy-<rowid>`. A row that cannot be mapped (no content, no readable `created_at`)
 *   is skipped and reported; it never fails the import.
 *
 * The import is one transaction on the target database and leaves a marker in `engram_meta`
 * keyed by a fingerprint of the source rows: importing the same data again changes nothing and
 * says so.
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as SqliteClient from "@effect/sql-sqlite-node/SqliteClient"
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ErrorClass } from "@engram/core"
import { MemoryStore, Sha256 } from "@engram/core"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { legacyId, type LegacyRow, mapRows, OPTIONAL_COLUMNS, REQUIRED_COLUMNS } from "./internal/legacyMapping.js"

/**
 * Why a legacy import could not run. Nothing was written.
 *
 * @since 0.1.0
 * @category errors
 */
export class LegacyImportError extends ErrorClass.TaggedError<LegacyImportError>()("LegacyImportError", {
  file: Schema.String,
  reason: Schema.Literal("FileNotFound", "Unreadable", "NoChunksTable", "MissingColumns", "IdConflict", "WriteFailed"),
  detail: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => {
    switch (self.reason) {
      case "FileNotFound":
        return `legacy store "${self.file}" does not exist; pass the path of the v1 knowledge database file`
      case "Unreadable":
        return `legacy store "${self.file}" cannot be read as an SQLite database: ${self.detail}`
      case "NoChunksTable":
        return `legacy store "${self.file}" has no "chunks" table (${self.detail}); is it a v1 knowledge database?`
      case "MissingColumns":
        return `legacy store "${self.file}": the "chunks" table lacks ${self.detail}; it is not a v1 knowledge table`
      case "IdConflict":
        return `legacy store "${self.file}" cannot be imported: ${self.detail}. Import it into a fresh database to keep both`
      case "WriteFailed":
        return `importing legacy store "${self.file}" failed and nothing was written: ${self.detail}`
    }
  }
}) {}

/**
 * A v1 row left out of the import, and why.
 *
 * @since 0.1.0
 * @category models
 */
export interface SkippedLegacyRow {
  readonly rowid: number
  readonly reason: string
}

/**
 * What an import did. `alreadyImported` means the same source data was imported before (at
 * `importedAt`) and nothing was written this time.
 *
 * @since 0.1.0
 * @category models
 */
export interface LegacyImportReport {
  /** The absolute path of the source file. */
  readonly source: string
  /** SHA-256 over the source rows; the marker key. */
  readonly fingerprint: string
  readonly alreadyImported: boolean
  /** When the data was imported (ISO 8601). */
  readonly importedAt: string
  /** Rows in the source `chunks` table. */
  readonly rows: number
  readonly imported: number
  readonly skipped: number
  readonly skippedRows: ReadonlyArray<SkippedLegacyRow>
  /** Imported records by kind. */
  readonly kinds: Readonly<Record<string, number>>
  /** Imported records that were superseded or otherwise invalidated in v1. */
  readonly invalidated: number
}

/**
 * The key prefix of import markers in `engram_meta`.
 *
 * @since 0.1.0
 * @category constants
 */
export const MARKER_PREFIX = "legacy_import:"

const BATCH = 1_000
const PAGE = 5_000

interface Marker {
  readonly source: string
  readonly importedAt: string
  readonly rows: number
  readonly imported: number
  readonly skipped: number
  readonly kinds: Readonly<Record<string, number>>
  readonly invalidated: number
}

const MarkerJson = Schema.parseJson(Schema.Struct({
  source: Schema.String,
  importedAt: Schema.String,
  rows: Schema.Number,
  imported: Schema.Number,
  skipped: Schema.Number,
  kinds: Schema.Record({ key: Schema.String, value: Schema.Number }),
  invalidated: Schema.Number
}))

const describe = (cause: unknown): string => {
  if (typeof cause === "object" && cause !== null && "cause" in cause && cause.cause instanceof Error) {
    return cause.cause.message
  }
  return cause instanceof Error ? cause.message : String(cause)
}

const readSource = (file: string) =>
  Effect.gen(function*() {
    const fail = (reason: LegacyImportError["reason"], detail: string) =>
      new LegacyImportError({ file, reason, detail })
    const unreadable = (error: SqlError) => fail("Unreadable", describe(error))
    const stat = yield* Effect.try({
      try: () => NodeFs.statSync(file, { throwIfNoEntry: false }),
      catch: (cause) => fail("Unreadable", describe(cause))
    })
    if (stat === undefined) return yield* fail("FileNotFound", "no such file")
    if (!stat.isFile()) return yield* fail("Unreadable", "it is not a file")
    const client = yield* SqliteClient.make({ filename: file, readonly: true, disableWAL: true }).pipe(
      Effect.provide(Reactivity.layer),
      Effect.catchAllDefect((cause) => Effect.fail(fail("Unreadable", describe(cause))))
    )
    const tables = yield* client<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`
      .pipe(Effect.mapError(unreadable))
    if (!tables.some((t) => t.name === "chunks")) {
      const names = tables.map((t) => t.name)
      return yield* fail("NoChunksTable", names.length === 0 ? "it has no tables" : `its tables: ${names.join(", ")}`)
    }
    const info = yield* client<{ name: string }>`PRAGMA table_info(chunks)`.pipe(Effect.mapError(unreadable))
    const present = new Set(info.map((column) => column.name))
    const missing = REQUIRED_COLUMNS.filter((column) => !present.has(column))
    if (missing.length > 0) {
      return yield* fail("MissingColumns", `the column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`)
    }
    const columns = [...REQUIRED_COLUMNS, ...OPTIONAL_COLUMNS.filter((column) => present.has(column))]
    const rows: Array<LegacyRow> = []
    let after = Number.MIN_SAFE_INTEGER
    while (true) {
      const page = yield* client<Record<string, unknown> & { readonly legacy_rowid: number }>`
        SELECT rowid AS legacy_rowid, ${client.literal(columns.map((c) => `"${c}"`).join(", "))}
        FROM chunks WHERE rowid > ${after} ORDER BY rowid LIMIT ${PAGE}`.pipe(Effect.mapError(unreadable))
      for (const { legacy_rowid, ...values } of page) rows.push({ ...values, rowid: legacy_rowid })
      if (page.length < PAGE) break
      after = page[page.length - 1]!.legacy_rowid
    }
    return { rows, hasIdColumn: present.has("id"), columns }
  }).pipe(Effect.scoped)

const fingerprintOf = (rows: ReadonlyArray<LegacyRow>, columns: ReadonlyArray<string>): string => {
  const hash = Sha256.hasher().update(JSON.stringify(columns))
  for (const row of rows) hash.update(`\n${JSON.stringify([row.rowid, ...columns.map((c) => row[c] ?? null)])}`)
  return hash.hex()
}

/**
 * A one-line account of a report, for people.
 *
 * @since 0.1.0
 * @category rendering
 */
export const describeReport = (report: LegacyImportReport): string =>
  report.alreadyImported
    ? `${report.source} was already imported (${report.importedAt}: ${report.imported} records); nothing to do`
    : `imported ${report.imported} of ${report.rows} rows from ${report.source}` +
      (report.skipped > 0 ? ` (${report.skipped} skipped)` : "")

/**
 * Imports the v1 `chunks` table of `file` (opened read-only, separately) into the memory store.
 * Runs in one transaction on the target database: all or nothing. Importing the same source
 * data again is a no-op that reports `alreadyImported`.
 *
 * @since 0.1.0
 * @category import
 */
export const importLegacyChunks = (
  file: string
): Effect.Effect<LegacyImportReport, LegacyImportError, MemoryStore.MemoryStore | SqlClient.SqlClient> =>
  Effect.gen(function*() {
    const source = NodePath.resolve(file)
    const { columns, hasIdColumn, rows } = yield* readSource(source)
    const fingerprint = fingerprintOf(rows, columns)
    const key = `${MARKER_PREFIX}${fingerprint}`
    const sql = yield* SqlClient.SqlClient
    const store = yield* MemoryStore.MemoryStore
    const writeFailed = (cause: unknown) =>
      new LegacyImportError({
        file: source,
        reason: "WriteFailed",
        detail: typeof cause === "object" && cause !== null && "message" in cause && typeof cause.message === "string"
          ? cause.message
          : String(cause)
      })

    return yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`CREATE TABLE IF NOT EXISTS engram_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`
      const [previous] = yield* sql<{ value: string }>`SELECT value FROM engram_meta WHERE key = ${key}`
      if (previous !== undefined) {
        const marker = yield* Schema.decode(MarkerJson)(previous.value).pipe(Effect.mapError(writeFailed))
        const report: LegacyImportReport = { ...marker, source, fingerprint, alreadyImported: true, skippedRows: [] }
        yield* Effect.logInfo("legacy store already imported").pipe(Effect.annotateLogs({ source, fingerprint }))
        return report
      }

      const { records, skipped } = mapRows(rows, hasIdColumn)
      for (let i = 0; i < records.length; i += BATCH) {
        const batch = records.slice(i, i + BATCH)
        const existing = yield* store.get(batch.map((r) => r.id))
        const taken = existing.records[0]
        if (taken !== undefined) {
          return yield* new LegacyImportError({
            file: source,
            reason: "IdConflict",
            detail: `this database already holds "${taken.id}" from an import of different v1 data`
          })
        }
        yield* store.restore(batch)
      }

      const importedAt = DateTime.formatIso(yield* DateTime.now)
      const kinds: Record<string, number> = {}
      for (const record of records) kinds[record.kind] = (kinds[record.kind] ?? 0) + 1
      const marker: Marker = {
        source,
        importedAt,
        rows: rows.length,
        imported: records.length,
        skipped: skipped.length,
        kinds,
        invalidated: records.filter((r) => r.invalidatedAt !== undefined).length
      }
      yield* sql`INSERT INTO engram_meta (key, value) VALUES (${key}, ${JSON.stringify(marker)})`
      for (const { reason, rowid } of skipped) {
        yield* Effect.logWarning("legacy row skipped").pipe(
          Effect.annotateLogs({ source, rowid: String(rowid), memoryId: legacyId(rowid), reason })
        )
      }
      yield* Effect.logInfo("legacy store imported").pipe(
        Effect.annotateLogs({ source, imported: String(records.length), skipped: String(skipped.length) })
      )
      const report: LegacyImportReport = { ...marker, fingerprint, alreadyImported: false, skippedRows: skipped }
      return report
    })).pipe(
      Effect.catchIf(
        (error): error is Exclude<typeof error, LegacyImportError> => error._tag !== "LegacyImportError",
        (error) => Effect.fail(writeFailed(error))
      )
    )
  })
