/**
 * `engram demo`: two short sessions of a companion agent, with a scripted model and no network,
 * on an embedded SQLite file — then the exact request the model saw in the second session, each
 * fragment with its source and memory ids, and the projection's budget summary.
 *
 * The demo keeps its stores in their own file: `./.engram/demo.db` unless `--db` names another.
 * That file is **deleted and recreated on every run**, so the demo only ever deletes a database it
 * created itself (it marks its files); pointed at any other existing database, it refuses and
 * changes nothing. The default store (`./.engram/engram.db`) is never touched.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import * as SqlClient from "@effect/sql/SqlClient"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import { CliFailure, ExitCode, oneLine, StoreUnavailable } from "../CliError.js"
import * as Embedder from "../Embedder.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

/**
 * Where the demo keeps its stores when `--db` is not given.
 *
 * @since 0.1.0
 * @category constants
 */
export const DEMO_DATABASE = "./.engram/demo.db"

/**
 * The table that marks a database as the demo's own (and so safe to reset).
 *
 * @since 0.1.0
 * @category constants
 */
export const MARKER_TABLE = "engram_demo"

const unavailable = (db: string) => (cause: Cause.Cause<unknown>) => {
  const error = Cause.squash(cause)
  return new StoreUnavailable({ location: db, detail: oneLine(error instanceof Error ? error.message : String(error)) })
}

/**
 * Every store the demo uses, in one SQLite file, which it marks as a demo database; with
 * `--embedder`, built with that embedder (hybrid recall, a vector per saved memory).
 */
const storesLayer = (location: StoreBackend.StoreLocation, choice: Embedder.Choice) =>
  Layer.effectDiscard(
    Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`CREATE TABLE IF NOT EXISTS ${MARKER_TABLE} (id INTEGER)`))
  ).pipe(
    Layer.catchAllCause((cause) => Layer.fail(unavailable(location.db)(cause))),
    Layer.provideMerge(StoreBackend.layerObserved(location, Embedder.layer(choice)))
  )

/** True when the existing file `db` carries the demo's marker table. */
const isDemoDatabase = (db: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly name: string }>`
      SELECT name FROM sqlite_master WHERE type = 'table' AND name = ${MARKER_TABLE}
    `).pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.provide(SqliteDatabase.layer({ filename: db })),
      Effect.catchAllCause((cause) => Effect.fail(unavailable(db)(cause)))
    )

/** Deletes the demo's previous database, or refuses when the file is not one. */
const reset = (db: string) =>
  Effect.gen(function*() {
    if (SqliteDatabase.isInMemory(db) || !NodeFs.existsSync(db)) return
    if (!(yield* isDemoDatabase(db))) {
      return yield* new CliFailure({
        problem: `${db} is a database the demo did not create; the demo resets its database on every run, ` +
          `so give it a new path with --db (default ${DEMO_DATABASE})`,
        exitCode: ExitCode.refused
      })
    }
    for (const file of [db, `${db}-wal`, `${db}-shm`]) NodeFs.rmSync(file, { force: true })
  })

/**
 * What to try after the demo, on its store: the sessions it left, the request session 2 sent
 * (rebuilt from the stored snapshot), why the saved memory reached it, and the console.
 *
 * @since 0.1.0
 * @category constants
 */
export const nextSteps = (db: string, savedId: string): ReadonlyArray<string> => {
  const on = StoreBackend.commandFor({ db, origin: "--db" })
  return [
    `${on} sessions`,
    `${on} inspect demo-2`,
    `${on} explain ${savedId} --session demo-2`,
    `${on} token create --scope global && ${on} serve`
  ]
}

/**
 * The `demo` command.
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("demo", Embedder.recallOptions, (choice) =>
  Effect.gen(function*() {
    const settings = yield* Root.settings
    const location = yield* StoreBackend.locationOf(settings, {
      ownFile: Effect.succeed(DEMO_DATABASE),
      sqliteOnly: `the demo runs on a SQLite file of its own: drop --pg (--db <path> names the file; ` +
        `default ${DEMO_DATABASE})`
    })
    const db = location.db
    yield* reset(db)
    const Demo = yield* Effect.promise(() => import("@engram/harness/Demo"))
    const report = yield* Effect.provide(Demo.run, storesLayer(location, choice))
    const next = nextSteps(db, report.saved?.id ?? "mem-000001")
    yield* Console.log(
      settings.json
        ? Render.json({ db, ...Demo.toJson(report), next })
        : [
          Demo.render(report, { location: `${db} (reset on every run)` }),
          "",
          "Next, on the demo's store:",
          ...next.map((step) => `  ${step}`)
        ].join("\n")
    )
  })).pipe(
    Command.withDescription(
      `Two sessions of a companion agent with a scripted model (no network), on a SQLite file ` +
        `(${DEMO_DATABASE} unless --db names one; reset on every run): session 1 saves "Hi, I'm Doug" as a ` +
        `memory, session 2 shows the exact request the model saw, with each fragment's source and memory ids, ` +
        `and the projection's budget. With --embedder (test, or local: the offline sentence encoder), the demo's ` +
        `store keeps vectors and recalls hybrid.`
    )
  )
