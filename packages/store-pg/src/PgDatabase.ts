/**
 * Connecting Engram to PostgreSQL: a `SqlClient` layer from a URL or from `ENGRAM_PG_URL`,
 * optionally confined to one schema (through the connection's `search_path`), and a disposable
 * schema for tests and benchmarks.
 *
 * @example
 * ```ts
 * import { Layer } from "effect"
 * import { PgDatabase, PgMemoryStore } from "@engram/store-pg"
 *
 * // Every store table lives in schema "agents" of the database named by the URL.
 * const store = PgMemoryStore.layer().pipe(
 *   Layer.provideMerge(PgDatabase.layer({ url: "postgres://app@db:5432/engram", schema: "agents" }))
 * )
 * ```
 *
 * @since 0.1.0
 */
import * as Reactivity from "@effect/experimental/Reactivity"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import * as Config from "effect/Config"
import type * as ConfigError from "effect/ConfigError"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import type * as Scope from "effect/Scope"
import * as PgSchemaName from "./PgSchemaName.js"

/**
 * How to reach PostgreSQL.
 *
 * - `url`: a `postgres://` connection URL (plain or redacted).
 * - `schema`: keep every Engram table in this schema (created when missing). Absent: the
 *   server's default `search_path` (usually `public`).
 * - `maxConnections`: pool size (default 10).
 * - `connectTimeout`: how long to wait for the first connection (default 10 seconds).
 *
 * @since 0.1.0
 * @category models
 */
export interface ConnectionOptions {
  readonly url: string | Redacted.Redacted<string>
  readonly schema?: string | undefined
  readonly maxConnections?: number | undefined
  readonly applicationName?: string | undefined
  readonly connectTimeout?: Duration.DurationInput | undefined
}

/**
 * True for schema names Engram accepts: lowercase ASCII letters, digits and `_`, starting with a
 * letter or `_`, at most 63 characters (PostgreSQL's identifier limit) — names that never need
 * quoting. (The rule lives in `PgSchemaName`, which loads no driver.)
 *
 * @since 0.1.0
 * @category schemas
 */
export const isSchemaName: (name: string) => boolean = PgSchemaName.isSchemaName

const invalidSchema = (schema: string) =>
  new SqlError({
    message: `PostgreSQL schema name "${schema}" is not allowed: use lowercase letters, digits and "_", ` +
      `starting with a letter or "_", at most 63 characters`
  })

/**
 * The connection URL with `search_path` set to `schema` through the libpq `options` parameter
 * (appended to any options the URL already carries).
 *
 * @since 0.1.0
 * @category schemas
 */
export const withSearchPath = (url: string, schema: string): string => {
  const parsed = new URL(url)
  const existing = parsed.searchParams.get("options")
  const option = `-c search_path=${schema}`
  parsed.searchParams.set("options", existing === null || existing.trim() === "" ? option : `${existing} ${option}`)
  return parsed.toString()
}

/**
 * Planner settings every connection {@link make} opens runs with, before any the URL's own
 * `options` set (which win): `parallel_tuple_cost` 0.01 instead of PostgreSQL's 0.1. At the default
 * the planner prices handing each row from a parallel worker to the leader so high that a statement
 * that keeps every match of a query — the ranked search's materialised matches, which the
 * conversation context reads — never scans in parallel, while a bare `ORDER BY … LIMIT` over the
 * same matches does; at 1M records an unscoped question then took twice its floor (decision 0145).
 * And `jit` off: a search's cost is reading and matching rows, which JIT compilation does not
 * speed up, while compiling each statement's expressions (once per process, so in each parallel
 * worker) took seconds at 10M records on a busy machine — more than the ranking itself, and
 * more for the ranked statement's many expressions than for a bare `ORDER BY … LIMIT` (decision
 * 0224).
 *
 * @since 0.1.0
 * @category constants
 */
export const SESSION_SETTINGS: ReadonlyArray<readonly [name: string, value: string]> = [
  ["parallel_tuple_cost", "0.01"],
  ["jit", "off"]
]

/**
 * The connection URL with {@link SESSION_SETTINGS} put before the libpq `options` the URL already
 * carries, so a setting the URL names itself wins.
 *
 * @since 0.1.0
 * @category constructors
 */
export const withSessionSettings = (url: string): string => {
  const parsed = new URL(url)
  const existing = parsed.searchParams.get("options")
  const ours = SESSION_SETTINGS.map(([name, value]) => `-c ${name}=${value}`).join(" ")
  parsed.searchParams.set("options", existing === null || existing.trim() === "" ? ours : `${ours} ${existing}`)
  return parsed.toString()
}

const ensureSchema = (sql: SqlClient.SqlClient, schema: string) =>
  Effect.gen(function*() {
    // An existing schema is left alone without any DDL, so read replicas and read-only roles connect.
    const found = yield* sql`SELECT 1 FROM pg_namespace WHERE nspname = ${schema}`
    if (found.length > 0) return
    // Serialized with an advisory lock: two processes creating the same schema at once would
    // otherwise race on the catalog's unique index despite IF NOT EXISTS.
    yield* sql.withTransaction(
      Effect.zipRight(
        sql`SELECT pg_advisory_xact_lock(hashtext(${`engram:schema:${schema}`}))`,
        sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${schema}"`)
      )
    )
  })

/**
 * Opens a pool and returns its client; every connection runs with {@link SESSION_SETTINGS}, and,
 * with `schema`, its `search_path` points at that schema (created when missing).
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (
  options: ConnectionOptions
): Effect.Effect<PgClient.PgClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const raw = Redacted.isRedacted(options.url) ? Redacted.value(options.url) : options.url
    const schema = options.schema
    if (schema !== undefined && !isSchemaName(schema)) return yield* invalidSchema(schema)
    const url = yield* Effect.try({
      try: () => withSessionSettings(schema === undefined ? raw : withSearchPath(raw, schema)),
      catch: (cause) => new SqlError({ cause, message: "ENGRAM_PG_URL / url is not a valid postgres:// URL" })
    })
    const client = yield* PgClient.make({
      url: Redacted.make(url),
      maxConnections: options.maxConnections ?? 10,
      applicationName: options.applicationName ?? "engram",
      connectTimeout: options.connectTimeout ?? Duration.seconds(10)
    })
    if (schema !== undefined) yield* ensureSchema(client, schema)
    // `@effect/sql` turns a failed COMMIT into a defect; it is the database failing underneath
    // like any statement (a deferred check, a full disk at commit: PostgreSQL has then rolled the
    // transaction back), so it goes back to the error channel, where the stores type it.
    const transaction = client.withTransaction
    return Object.assign(client, {
      withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError, R> =>
        Effect.catchSomeDefect(
          transaction(effect),
          (defect) => defect instanceof SqlError ? Option.some(Effect.fail(defect)) : Option.none()
        )
    })
  })

const toContext = (client: PgClient.PgClient) =>
  Context.make(PgClient.PgClient, client).pipe(Context.add(SqlClient.SqlClient, client))

/**
 * A PostgreSQL client layer (both `PgClient` and `SqlClient`), for the store layers to run on.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (
  options: ConnectionOptions
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Layer.scopedContext(Effect.map(make(options), toContext)).pipe(Layer.provide(Reactivity.layer))

/**
 * The connection options read from the environment: `ENGRAM_PG_URL` (required, kept redacted),
 * `ENGRAM_PG_SCHEMA` and `ENGRAM_PG_POOL_SIZE` (optional).
 *
 * @since 0.1.0
 * @category config
 */
export const config: Config.Config<ConnectionOptions> = Config.all({
  url: Config.redacted("ENGRAM_PG_URL"),
  schema: Config.option(
    Config.string("ENGRAM_PG_SCHEMA").pipe(
      Config.validate({ message: "ENGRAM_PG_SCHEMA must be a lowercase identifier", validation: isSchemaName })
    )
  ),
  maxConnections: Config.option(Config.integer("ENGRAM_PG_POOL_SIZE"))
}).pipe(
  Config.map(({ maxConnections, schema, url }) => ({
    url,
    schema: Option.getOrUndefined(schema),
    maxConnections: Option.getOrUndefined(maxConnections)
  }))
)

/**
 * {@link layer} configured from the environment (see {@link config}).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerConfig: Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError | ConfigError.ConfigError> =
  Layer.unwrapEffect(Effect.map(config, layer))

let temporaryCounter = 0

/**
 * A fresh, uniquely named name for a disposable schema: `<prefix>_<time>_<pid>_<n>_<random>`.
 *
 * @since 0.1.0
 * @category schemas
 */
export const temporarySchemaName = (prefix = "engram_tmp"): string =>
  [
    prefix,
    // Wall-clock time only makes the name unique across runs, so TestClock must not fix it.
    // eslint-disable-next-line no-restricted-properties
    Date.now().toString(36),
    (globalThis.process?.pid ?? 0).toString(36),
    (temporaryCounter++).toString(36),
    Math.floor(Math.random() * 36 ** 6).toString(36)
  ].join("_")

/**
 * A client confined to a brand-new schema that is dropped (`DROP SCHEMA … CASCADE`) when the
 * layer is released — each build is an empty database, so tests and benchmarks never see each
 * other's rows. Not for production data.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerTemporarySchema = (
  options: Omit<ConnectionOptions, "schema"> & { readonly prefix?: string | undefined }
): Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError> =>
  Layer.scopedContext(
    Effect.gen(function*() {
      const schema = temporarySchemaName(options.prefix)
      // Finalizers run in reverse: the schema is dropped before the pool closes.
      const client = yield* make({ ...options, schema })
      yield* Effect.addFinalizer(() =>
        client.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).pipe(
          Effect.catchAll((error) => Effect.logWarning(`could not drop temporary schema ${schema}`, error))
        )
      )
      return toContext(client)
    })
  ).pipe(Layer.provide(Reactivity.layer))
