/**
 * `engram doctor [--repair]`: checks a SQLite store file in full — SQLite's `integrity_check` of
 * every page and index, and the memory search index against the records — and with `--repair`
 * rebuilds the search index from the records. Exits 0 when the store is sound (after repair),
 * 2 when damage remains.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import * as SqliteMemoryStore from "@engram/store-sqlite/SqliteMemoryStore"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

/**
 * What `doctor` found, before and after a repair.
 *
 * @since 0.1.0
 * @category models
 */
export interface DoctorReport {
  readonly file: string
  /** Problems SQLite's full integrity check reports (pages, b-trees, indexes). */
  readonly integrity: ReadonlyArray<string>
  /** Problems of the memory search index. */
  readonly searchIndex: ReadonlyArray<string>
  /** Records re-indexed by `--repair`, when it ran. */
  readonly reindexed?: number
  readonly ok: boolean
}

const examine = Effect.gen(function*() {
  const integrity = yield* Effect.flatMap(SqlClient.SqlClient, SqliteDatabase.integrityCheck)
  // A file whose pages are unreadable has no index worth checking separately.
  const searchIndex = yield* SqliteMemoryStore.checkSearchIndex
  return { integrity, searchIndex }
})

const human = (report: DoctorReport): string => {
  const lines = [`doctor: ${report.file}`]
  lines.push(
    report.integrity.length === 0 ? "  file integrity: ok" : `  file integrity: ${report.integrity.length} problem(s)`
  )
  for (const problem of report.integrity.slice(0, 20)) lines.push(`    - ${problem}`)
  lines.push(report.searchIndex.length === 0 ? "  search index: ok" : "  search index: damaged")
  for (const problem of report.searchIndex) lines.push(`    - ${problem}`)
  if (report.reindexed !== undefined) {
    lines.push(`  repaired: rebuilt the search index from ${report.reindexed} records`)
  }
  lines.push(
    report.ok
      ? "  the store is sound"
      : report.integrity.length > 0
      ? "  the file itself is damaged: restore it from a backup (a repair rebuilds only the search index)"
      : "  run `engram doctor --repair` to rebuild the search index from the records"
  )
  return Render.escapeControls(lines.join("\n"))
}

/**
 * `engram doctor [--repair]`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "doctor",
  {
    repair: Flags.boolean("repair", "Rebuild the memory search index from the records (the records are not changed).")
  },
  ({ repair }) =>
    Effect.gen(function*() {
      const { db: file } = yield* StoreBackend.locationFor({
        sqliteOnly:
          "engram doctor checks SQLite store files; PostgreSQL checks its own pages (see docs/guides/reliability.md)"
      })
      if (!NodeFs.existsSync(file)) {
        return yield* new CliFailure({
          problem: `no store at ${file}: there is nothing to check`,
          // As every read of a missing store (memory list, sessions…): the store is unavailable.
          exitCode: ExitCode.unavailable
        })
      }
      const report = yield* Effect.gen(function*() {
        const before = yield* examine
        if (!repair || before.searchIndex.length === 0) {
          return { file, ...before, ok: before.integrity.length === 0 && before.searchIndex.length === 0 }
        }
        const reindexed = yield* SqliteMemoryStore.rebuildSearchIndex
        const after = yield* examine
        return { file, ...after, reindexed, ok: after.integrity.length === 0 && after.searchIndex.length === 0 }
      }).pipe(
        Effect.provide(SqliteDatabase.layer({ filename: file, create: false, integrityCheck: "none" }))
      )
      const settings = yield* Root.settings
      yield* Console.log(settings.json ? Render.json(report) : human(report))
      if (!report.ok) {
        return yield* new CliFailure({
          problem: `the store at ${file} is damaged (see above)`,
          exitCode: ExitCode.unavailable
        })
      }
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Check a SQLite store in full; --repair rebuilds its search index from the records."))
