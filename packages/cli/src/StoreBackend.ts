/**
 * Which store a command talks to: the embedded SQLite file named by `--db` (the default), or the
 * PostgreSQL database named by `--pg` (in the schema of `--pg-schema`, when given). This is the
 * one place a backend is chosen; commands never name one.
 *
 * The store is opened lazily, by the commands that need it, after their input has been
 * validated: a rejected command line never opens (or creates) a database. The PostgreSQL layers
 * are loaded only when a PostgreSQL store is chosen (the driver stays unloaded for SQLite).
 *
 * A PostgreSQL URL is shown only through {@link redactUrl} — in messages, `--json` output and
 * errors its password reads `***`.
 *
 * @since 0.1.0
 */
import type * as Command from "@effect/cli/Command"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Embeddings from "@engram/core/Embeddings"
import * as ErrorClass from "@engram/core/ErrorClass"
import type * as MemoryStore from "@engram/core/MemoryStore"
import type * as PromotionStore from "@engram/core/PromotionStore"
import * as ReindexProgress from "@engram/core/ReindexProgress"
import * as SearchTokenizer from "@engram/core/SearchTokenizer"
import type * as SessionStore from "@engram/core/SessionStore"
import type * as StoreTransaction from "@engram/core/StoreTransaction"
import type * as TelemetryStore from "@engram/core/TelemetryStore"
import * as PgError from "@engram/store-pg/PgError"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import * as SqliteMemoryStore from "@engram/store-sqlite/SqliteMemoryStore"
import * as SqlitePromotionStore from "@engram/store-sqlite/SqlitePromotionStore"
import * as SqliteTelemetryStore from "@engram/store-sqlite/SqliteTelemetryStore"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Config from "effect/Config"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Predicate from "effect/Predicate"
import * as Redacted from "effect/Redacted"
import { CliFailure, ExitCode, oneLine, StoreUnavailable } from "./CliError.js"
import * as Progress from "./Progress.js"
import * as Root from "./Root.js"

/**
 * A PostgreSQL database: its URL (redacted) and, optionally, the schema Engram's tables live in.
 *
 * @since 0.1.0
 * @category models
 */
export interface PgLocation {
  readonly url: Redacted.Redacted<string>
  readonly schema?: string | undefined
}

/**
 * What named the store: a flag, the command's own configuration (an agent config's `db`), the
 * command's own file (the demo's, the eval's), an environment variable, or the default file.
 *
 * @since 0.1.0
 * @category models
 */
export type Origin = "--db" | "--pg" | "agent config" | "command" | "ENGRAM_DB" | "ENGRAM_PG_URL" | "default"

/**
 * Where to find the store.
 *
 * @since 0.1.0
 * @category models
 */
export interface StoreLocation {
  /** Path of the SQLite file (its directory is created when missing), or `:memory:`. */
  readonly db: string
  /** When present, the store is this PostgreSQL database and `db` is not used. */
  readonly pg?: PgLocation | undefined
  /** What named it (see {@link locationOf}). */
  readonly origin?: Origin | undefined
  /**
   * The language the store is opened in (`--language`, else `ENGRAM_LANGUAGE`): a new store is
   * created in it, a store built in another is refused. None: the language the store records.
   */
  readonly language?: SearchTokenizer.Language | undefined
}

/**
 * The services a store command may use: the memory store, the promotion store of the same
 * database (which the memory store's `forget` reaches, decision 0164), and the SQL client under
 * them (the legacy import reads and marks the same database).
 *
 * @since 0.1.0
 * @category models
 */
export type StoreServices = MemoryStore.MemoryStore | PromotionStore.PromotionStore | SqlClient.SqlClient

/**
 * Connections per PostgreSQL pool the command opens: a command runs one operation at a time.
 *
 * @since 0.1.0
 * @category constants
 */
export const PG_POOL_SIZE = 4

/**
 * A URL fit to print: the password replaced by `***`. Text that does not parse as a URL is
 * not echoed at all.
 *
 * @since 0.1.0
 * @category formatting
 */
export const redactUrl = (url: string | Redacted.Redacted<string>): string => {
  const raw = Redacted.isRedacted(url) ? Redacted.value(url) : url
  try {
    const parsed = new URL(raw)
    if (parsed.password !== "") parsed.password = "***"
    return parsed.toString()
  } catch {
    return "<the PostgreSQL URL>"
  }
}

/**
 * Removes the URL's password (as written, and percent-decoded) from any text — an error
 * message from the driver, say — replacing it with `***`.
 *
 * @since 0.1.0
 * @category formatting
 */
export const scrubPassword = (text: string, url: string | Redacted.Redacted<string>): string => {
  const raw = Redacted.isRedacted(url) ? Redacted.value(url) : url
  let password = ""
  try {
    password = new URL(raw).password
  } catch {
    return text.split(raw).join("<the PostgreSQL URL>")
  }
  if (password === "") return text
  let decoded = password
  try {
    decoded = decodeURIComponent(password)
  } catch {
    // Keep the raw form only.
  }
  return [raw, password, decoded].reduce(
    (out, secret) => (secret === "" ? out : out.split(secret).join(secret === raw ? redactUrl(raw) : "***")),
    text
  )
}

/**
 * How a location reads in messages: the SQLite path, or the redacted URL and schema.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeLocation = (location: StoreLocation): string =>
  location.pg === undefined
    ? location.db
    : `${redactUrl(location.pg.url)}${location.pg.schema === undefined ? "" : ` (schema ${location.pg.schema})`}`

// The most specific text a failure carries: its own detail, else its message followed by the
// messages of its causes (the driver's "connect ECONNREFUSED …" sits in the cause).
const describeError = (error: unknown): string => {
  if (Predicate.hasProperty(error, "detail") && typeof error.detail === "string") return oneLine(error.detail)
  const parts: Array<string> = []
  for (const current of ErrorClass.causeChain(error)) {
    // PostgreSQL's own answer reads "PostgreSQL <SQLSTATE>: <server message>".
    const server = PgError.fromDriverError(current)
    const text = server !== undefined
      ? server.message
      : current instanceof Error || Predicate.hasProperty(current, "message")
      ? String((current as { readonly message: unknown }).message)
      : String(current)
    const code = Predicate.hasProperty(current, "code") && typeof current.code === "string" ? current.code : ""
    const part = text.trim() !== "" ? text : code
    if (part !== "" && !parts.some((seen) => seen.includes(part))) parts.push(part)
  }
  return oneLine(parts.join(": "))
}

/** A word as a POSIX shell reads it: quoted when it holds anything but the usual path characters. */
export const shellWord = (text: string): string =>
  /^[\w./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`

/**
 * How the person at the terminal runs `engram` again: `npx engram` when npx started this run (in a
 * clone, where `engram` is not on the path), `engram` otherwise.
 *
 * @since 0.1.0
 * @category formatting
 */
export const invocation = (env: NodeJS.ProcessEnv = process.env): string =>
  env["npm_command"] === "exec" ? "npx engram" : "engram"

/**
 * The start of a command line that reaches `location` again, for the commands a command suggests
 * (`engram --db ./.engram/tour.db memory review <id> confirmed`): a SQLite file the command line
 * or an agent config named is named again; the default store and the environment's need nothing
 * (PostgreSQL URLs are never printed: they may carry a password).
 *
 * @since 0.1.0
 * @category formatting
 */
export const commandFor = (location: StoreLocation, env: NodeJS.ProcessEnv = process.env): string =>
  location.pg === undefined && location.origin !== "default" && location.origin !== "ENGRAM_DB" &&
    location.db !== ":memory:"
    ? `${invocation(env)} --db ${shellWord(location.db)}`
    : invocation(env)

/**
 * The one-line reason a store could not be opened, from the cause of the failure.
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeCause = (cause: Cause.Cause<unknown>): string =>
  describeError(Option.getOrElse(Chunk.head(Cause.failures(cause)), () => Cause.squash(cause)))

/**
 * Turns any failure to build a layer into `StoreUnavailable` at `location`, password removed; a
 * store built in another language than `--language` is refused instead (exit 1: the store is
 * fine, the command line asked for the wrong language), naming both.
 */
const unavailableAt = (location: StoreLocation) =>
(
  cause: Cause.Cause<unknown>
): Layer.Layer<unknown, StoreUnavailable | CliFailure> => {
  const mismatch = Option.filter(
    Chunk.head(Cause.failures(cause)),
    (error): error is SearchTokenizer.LanguageMismatch => error instanceof SearchTokenizer.LanguageMismatch
  )
  if (Option.isSome(mismatch)) {
    const { given, stored } = mismatch.value
    return Layer.fail(refused(
      `the memory store at ${describeLocation(location)} is in ${languageName(stored)}, not ` +
        `${languageName(given)} (--language ${languageCode(given)}): give --language ${languageCode(stored)} or ` +
        `no --language to open it (its search index was built with the ${languageName(stored)} stemmer)`
    ))
  }
  const detail = describeCause(cause)
  return Layer.fail(
    new StoreUnavailable({
      location: describeLocation(location),
      detail: location.pg === undefined ? detail : scrubPassword(detail, location.pg.url)
    })
  )
}

// The PostgreSQL modules, loaded the first time a PostgreSQL store is opened.
const loadPg = Effect.promise(() => import("@engram/store-pg"))

// A layer of the PostgreSQL modules, built once they are loaded.
const withPg = <A, E, R>(
  make: (pg: typeof import("@engram/store-pg")) => Layer.Layer<A, E, R>
): Layer.Layer<A, E, R> => Layer.unwrapEffect(Effect.map(loadPg, make))

// What a SQLite memory store's forget reaches on the same file (decision 0164). Imported with the
// memory store: every command that opens a store builds them, so they belong on the start-up
// path's shared chunks, not in entries of their own (decision 0119).
const sqliteCascade = Layer.merge(SqlitePromotionStore.layer, SqliteTelemetryStore.layer)

// Without an embedder the layers above are the lexical ones, which require no `Embeddings`: the
// conditional between the two layers cannot narrow their union's requirement, so it is dropped here.
const lexical = <A, E>(opened: Layer.Layer<A, E, Embeddings.Embeddings>): Layer.Layer<A, E> =>
  opened as Layer.Layer<A, E>

/**
 * A PostgreSQL client for the command: a small pool, confined to `schema` when given.
 *
 * @since 0.1.0
 * @category layers
 */
export const pgClient = (location: PgLocation) =>
  withPg(({ PgDatabase }) =>
    PgDatabase.layer({
      url: location.url,
      schema: location.schema,
      maxConnections: PG_POOL_SIZE,
      applicationName: "engram-cli"
    })
  )

/**
 * What a command does with the store: `"read"` commands never create a SQLite file (a mistyped
 * `--db` is refused) and open a file they cannot write read-only; `"write"` commands create a
 * missing store.
 *
 * @since 0.1.0
 * @category models
 */
export type Access = "read" | "write"

/**
 * A store that re-indexes when it opens (its index was built by another tokenizer: decision 0049)
 * draws a progress bar on stderr; an empty store draws nothing.
 */
const reindexProgress = Layer.sync(ReindexProgress.ReindexProgress, (): ReindexProgress.Observer => {
  let display: Progress.Display | undefined
  return ({ done, total }) =>
    Effect.gen(function*() {
      if (total === 0) return
      if (display === undefined) {
        display = yield* Progress.make({
          output: Progress.stderr,
          prefix: "engram",
          label: "re-indexing memories for the current search tokenizer",
          total
        })
      }
      if (done < total) return yield* display.update(done)
      yield* display.finish(done)
      display = undefined
    })
})

/**
 * The store layer for a location. Anything that keeps the store from opening — a directory that
 * cannot be created, a missing file for a read, a file that is not a database or is damaged, a
 * server that does not answer, a failed migration — fails with {@link StoreUnavailable}.
 *
 * `embeddings` (`Embedder.layer`, none by default) is the embedder the store is built with: with
 * one, it is the store's vectors layer (it keeps vectors for what it writes and searches hybrid)
 * and the layer also passes it on, for what else reads it (an extraction's near-duplicate check);
 * without, the store searches by keyword. A failure to build it is its own.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = <E = never>(
  location: StoreLocation,
  access: Access = "write",
  embeddings?: Layer.Layer<Embeddings.Embeddings, E>
): Layer.Layer<StoreServices, StoreUnavailable | CliFailure | E> => {
  const options = { language: location.language }
  const opened = (location.pg === undefined
    ? (embeddings === undefined ? SqliteMemoryStore.layer(options) : SqliteMemoryStore.layerWithVectors(options)).pipe(
      Layer.provideMerge(sqliteCascade),
      Layer.provideMerge(SqliteDatabase.layer({ filename: location.db, create: access === "write" }))
    )
    : withPg(({ PgMemoryStore, PgPromotionStore, PgTelemetryStore }) =>
      (embeddings === undefined ? PgMemoryStore.layer(options) : PgMemoryStore.layerWithVectors(options)).pipe(
        Layer.provideMerge(Layer.merge(PgPromotionStore.layer, PgTelemetryStore.layer))
      )
    ).pipe(Layer.provideMerge(pgClient(location.pg)))).pipe(Layer.provide(reindexProgress))
  return embeddings === undefined
    ? lexical(opened).pipe(Layer.catchAllCause(unavailableAt(location)))
    : opened.pipe(Layer.catchAllCause(unavailableAt(location)), Layer.provideMerge(embeddings))
}

/**
 * Every store of a location on one database: memory, promotions, sessions and telemetry (prompt
 * snapshots and their trajectory) — what `inspect`, `explain` and `telemetry` read; `embeddings` and
 * `access` as for {@link layer}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerObserved = <E = never>(
  location: StoreLocation,
  embeddings?: Layer.Layer<Embeddings.Embeddings, E>,
  access: Access = "write"
): Layer.Layer<
  | StoreServices
  | SessionStore.SessionStore
  | TelemetryStore.TelemetryStore
  | StoreTransaction.StoreTransaction,
  StoreUnavailable | CliFailure | E
> => {
  const options = { language: location.language }
  const opened = (location.pg === undefined
    ? Layer.unwrapEffect(Effect.map(
      Effect.promise(() =>
        Promise.all([import("@engram/store-sqlite/SqliteEngram"), import("@engram/store-sqlite/SqliteDatabase")])
      ),
      ([SqliteEngram, SqliteDatabase]) =>
        (embeddings === undefined
          ? SqliteEngram.layerStores(options)
          : SqliteEngram.layerStoresWithVectors(options)).pipe(
            Layer.provideMerge(SqliteDatabase.layer({ filename: location.db, create: access === "write" }))
          )
    ))
    : withPg(({ PgEngram }) =>
      embeddings === undefined ? PgEngram.layerStores(options) : PgEngram.layerStoresWithVectors(options)
    )
      .pipe(Layer.provideMerge(pgClient(location.pg)))).pipe(Layer.provide(reindexProgress))
  return embeddings === undefined
    ? lexical(opened).pipe(Layer.catchAllCause(unavailableAt(location)))
    : opened.pipe(Layer.catchAllCause(unavailableAt(location)), Layer.provideMerge(embeddings))
}

/**
 * The environment variables a store location falls back to when neither `--db` nor `--pg` is
 * given: `ENGRAM_DB` (a SQLite path), then `ENGRAM_PG_URL` (a PostgreSQL URL).
 *
 * @since 0.1.0
 * @category constants
 */
export const ENVIRONMENT = { db: "ENGRAM_DB", pg: "ENGRAM_PG_URL", language: "ENGRAM_LANGUAGE" } as const

/**
 * A store language as messages name it: "german", "none (no stemming)"; a recorded language this
 * version does not know is shown as recorded.
 *
 * @since 0.1.0
 * @category formatting
 */
export const languageName = (language: string): string => language === "none" ? "none (no stemming)" : language

/**
 * A store language as `--language` takes it: its ISO 639-1 code, else its name.
 *
 * @since 0.1.0
 * @category formatting
 */
export const languageCode = (language: string): string =>
  (Root.LANGUAGE_CODES as Readonly<Record<string, string>>)[language] ?? language

/**
 * The language of the global options: `--language`, else `ENGRAM_LANGUAGE` (refused, listing the
 * languages, when it names none), else `undefined` (the store's own).
 */
const languageOf = (settings: Root.Settings): Effect.Effect<SearchTokenizer.Language | undefined, CliFailure> =>
  settings.language !== undefined
    ? Effect.succeed(settings.language)
    : Effect.flatMap(fromEnvironment(ENVIRONMENT.language), (env) =>
      Option.match(env, {
        onNone: () => Effect.succeed(undefined),
        onSome: (text) =>
          Either.match(Root.parseLanguage(text), {
            onLeft: (problem) => Effect.fail(refused(`${ENVIRONMENT.language}: ${problem}; fix or unset it`)),
            onRight: (language) => Effect.succeed(language)
          })
      }))

const fromEnvironment = (name: string) =>
  Effect.orDie(Effect.map(Config.option(Config.string(name)), Option.filter((value) => value.trim() !== "")))

/**
 * What a command adds to the choice of its store (see {@link locationOf}).
 *
 * @since 0.1.0
 * @category models
 */
export interface Choice<E = never, R = never> {
  /** A SQLite file the command's own input names (an agent config's `db`, already resolved). */
  readonly configured?: string | undefined
  /** The command's own file when no flag names a store (the demo's, the eval's). */
  readonly ownFile?: Effect.Effect<string, E, R> | undefined
  /** The command works on SQLite files only: a PostgreSQL store is refused with this problem. */
  readonly sqliteOnly?: string | undefined
}

const refused = (problem: string) => new CliFailure({ problem, exitCode: ExitCode.refused })

/**
 * The one place a command's store is chosen, first match wins:
 *
 * | | store | origin |
 * | --- | --- | --- |
 * | 1 | `--pg <url>` (with `--pg-schema`) | `--pg` |
 * | 2 | `--db <path>` | `--db` |
 * | 3 | the command's configured file (compose, mcp, serve: the agent config's `db`) | `agent config` |
 * | 4 | the command's own file (demo, eval); the environment is then not read | `command` |
 * | 5 | `ENGRAM_DB` (see {@link ENVIRONMENT}) | `ENGRAM_DB` |
 * | 6 | `ENGRAM_PG_URL` | `ENGRAM_PG_URL` |
 * | 7 | {@link Root.DEFAULT_DATABASE} | `default` |
 *
 * Refuses `--db` together with `--pg`, `--pg-schema` when the store is not PostgreSQL, an
 * `ENGRAM_PG_URL` that is not a postgres:// URL (its text is never echoed), and a PostgreSQL store
 * for a command that works on SQLite files only.
 *
 * A store the command line did not name — the environment's or the default — is named on stderr
 * ({@link describeChoice}), so it is never a surprise which store a command read or wrote
 * (decision 0064).
 *
 * @since 0.1.0
 * @category constructors
 */
export const locationOf = <E = never, R = never>(
  settings: Root.Settings,
  choice: Choice<E, R> = {}
): Effect.Effect<StoreLocation, CliFailure | E, R> =>
  Effect.gen(function*() {
    if (settings.pg !== undefined && settings.db !== undefined) {
      return yield* refused(
        "--db and --pg both name a store; give one: --db <path> for SQLite or --pg <url> for PostgreSQL"
      )
    }
    const chosen: StoreLocation = settings.pg !== undefined
      ? { db: Root.DEFAULT_DATABASE, pg: { url: settings.pg, schema: settings.pgSchema }, origin: "--pg" }
      : settings.db !== undefined
      ? { db: settings.db, origin: "--db" }
      : choice.configured !== undefined
      ? { db: choice.configured, origin: "agent config" }
      : choice.ownFile !== undefined
      ? { db: yield* choice.ownFile, origin: "command" }
      : yield* fromEnvironmentOrDefault(settings)
    if (chosen.pg !== undefined && choice.sqliteOnly !== undefined) return yield* refused(choice.sqliteOnly)
    if (chosen.pg === undefined && settings.pgSchema !== undefined) {
      return yield* refused("--pg-schema names a PostgreSQL schema; add --pg <url> to use PostgreSQL")
    }
    const language = yield* languageOf(settings)
    const note = describeChoice(chosen)
    if (note !== undefined) yield* Console.error(`engram: ${note}`)
    return language === undefined ? chosen : { ...chosen, language }
  })

/**
 * The line that names a store the command line did not name: `store <where> (the default; …)`,
 * `store <where> (from ENGRAM_PG_URL; …)`; `undefined` for a store a flag, the agent config or the
 * command itself named (the command line, the config or the command's output already says which).
 *
 * @since 0.1.0
 * @category formatting
 */
export const describeChoice = (location: StoreLocation): string | undefined => {
  const why = location.origin === "default"
    ? "the default"
    : location.origin === "ENGRAM_DB" || location.origin === "ENGRAM_PG_URL"
    ? `from $${location.origin}`
    : undefined
  return why === undefined
    ? undefined
    : `store ${describeLocation(location)} (${why}; --db <path> or --pg <url> names another)`
}

const fromEnvironmentOrDefault = (settings: Root.Settings): Effect.Effect<StoreLocation, CliFailure> =>
  Effect.gen(function*() {
    const envDb = yield* fromEnvironment(ENVIRONMENT.db)
    if (Option.isSome(envDb)) return { db: envDb.value, origin: "ENGRAM_DB" }
    const envPg = yield* fromEnvironment(ENVIRONMENT.pg)
    if (Option.isNone(envPg)) return { db: Root.DEFAULT_DATABASE, origin: "default" }
    const problem = Root.pgUrlProblem(envPg.value)
    if (problem !== undefined) {
      return yield* refused(`${ENVIRONMENT.pg}: ${problem}; fix or unset it, or give --db <path> / --pg <url>`)
    }
    return {
      db: Root.DEFAULT_DATABASE,
      pg: { url: Redacted.make(envPg.value), schema: settings.pgSchema },
      origin: "ENGRAM_PG_URL"
    }
  })

/**
 * The store location of the global options for a command (see {@link locationOf}).
 *
 * @since 0.1.0
 * @category accessors
 */
export const locationFor = <E = never, R = never>(
  choice: Choice<E, R>
): Effect.Effect<StoreLocation, CliFailure | E, R | Command.Command.Context<"engram">> =>
  Effect.flatMap(Root.settings, (settings) => locationOf(settings, choice))

/**
 * The store location of the global options, for a command that adds nothing to the choice.
 *
 * @since 0.1.0
 * @category accessors
 */
export const location: Effect.Effect<StoreLocation, CliFailure, Command.Command.Context<"engram">> = locationFor({})

/**
 * Refuses the store flags for a command that names its stores otherwise (`migrate` reads
 * `--from` and writes `--to`): `why` says how, e.g. "migrate reads --from and writes --to".
 * `--language` is the command's own to read (`migrate`: the target's language).
 *
 * @since 0.1.0
 * @category constructors
 */
export const refuseStoreFlags = (settings: Root.Settings, why: string): Effect.Effect<void, CliFailure> =>
  settings.pg !== undefined || settings.db !== undefined
    ? Effect.fail(refused(`${why}; ${settings.pg !== undefined ? "--pg" : "--db"} does not apply to it`))
    : Effect.void

/**
 * Runs a command body against the store named by the global options (`access` "read" for
 * commands that only read: see {@link Access}).
 *
 * @since 0.1.0
 * @category combinators
 */
export const provide = <A, E, R>(
  effect: Effect.Effect<A, E, R>,
  access: Access = "write"
): Effect.Effect<
  A,
  E | StoreUnavailable | CliFailure,
  Exclude<R, StoreServices> | Command.Command.Context<"engram">
> => Effect.flatMap(location, (where) => Effect.provide(effect, layer(where, access)))
