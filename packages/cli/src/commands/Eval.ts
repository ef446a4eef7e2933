/**
 * `engram eval [--db <path>] [--keep] [--family <name>]…`: runs the routing eval (`Eval` in
 * `@engram/harness`) on a SQLite file and prints one row per family — cases, rate, routing
 * accuracy, mean request bytes — and every failed case (`--json`: the whole report, every case).
 * `--family` (repeatable) runs only the named families, and the verdict covers only them; a name
 * that is not a family is refused while the command line is parsed, naming the families (exit 1).
 *
 * Unless `--db` is given explicitly, the eval creates a fresh file in a new directory under the OS
 * temp dir and removes it afterwards (`--keep` leaves it, and prints where); the default store is
 * never used. A file named with `--db` must not hold memories yet.
 *
 * Exit codes: `0` every hard family run passed; `1` a hard family failed (or the file already holds
 * memories, or `--family` named no family); `2` the file could not be opened.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

/**
 * A new, empty directory under the OS temp dir holding the eval's database path; removed when the
 * scope closes unless `keep`.
 *
 * @since 0.1.0
 * @category resources
 */
export const temporaryDatabase = (keep: boolean) =>
  Effect.acquireRelease(
    Effect.sync(() => NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-eval-"))),
    (directory) => (keep ? Effect.void : Effect.sync(() => NodeFs.rmSync(directory, { recursive: true, force: true })))
  ).pipe(Effect.map((directory) => NodePath.join(directory, "eval.db")))

/**
 * `--family <name>`: one of the eval's families, checked against `Eval.families` (the harness is
 * loaded only when the flag is given).
 */
const familyFlag = Flags.make(
  "family",
  (name) =>
    Effect.promise(() => import("@engram/harness/Eval")).pipe(
      Effect.flatMap((Eval) => Eval.checkFamilies([name])),
      Effect.map(() => name),
      Effect.mapError((error) => error.message)
    ),
  "Run only this family (e.g. same-label-facts); repeat the flag for several. Default: every family.",
  "name"
)

/**
 * `engram eval [--db <path>] [--keep] [--family <name>]…`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make(
  "eval",
  {
    keep: Flags.boolean("keep", "Keep the temporary database and print its path."),
    families: Flags.repeated(familyFlag)
  },
  ({ families, keep }) =>
    Effect.scoped(Effect.gen(function*() {
      const settings = yield* Root.settings
      const location = yield* StoreBackend.locationOf(settings, {
        ownFile: temporaryDatabase(keep),
        sqliteOnly: "the eval runs on a SQLite file: drop --pg (and give --db <path> to choose the file)"
      })
      const Eval = yield* Effect.promise(() => import("@engram/harness/Eval"))
      const report = yield* Eval.run(StoreBackend.layer(location), Flags.defined({ families }))
      yield* Console.log(settings.json ? Render.json({ db: location.db, ...report }) : Eval.renderTable(report))
      if (keep && location.origin === "command" && !settings.json) {
        yield* Console.log(`database kept at ${location.db}`)
      }
      if (!report.passed) {
        const failed = report.families.filter((family) => family.hard && !family.passed).map((family) => family.name)
        return yield* new CliFailure({
          problem: `the eval failed: hard famil${failed.length === 1 ? "y" : "ies"} ${failed.join(", ")}`,
          exitCode: ExitCode.refused
        })
      }
    })).pipe(Effect.mapError(toCliFailure))
).pipe(
  Command.withDescription(
    "Run the routing eval on a temporary SQLite file: scripted model behaviours (label spellings, wrong kind, " +
      "no label, corrections, opt-out, guarded, over budget) through the native runtime; per-family rate and routing accuracy."
  )
)
