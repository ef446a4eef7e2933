/**
 * Scoped bearer tokens for the HTTP API. A token is bound to the memory scopes it may read (and,
 * unless it is read-only, write); the server answers every request inside those scopes only.
 *
 * Tokens are shown once, when created, and stored as a SHA-256 hash: a copy of the database does
 * not hold a usable token. A token names at least one scope — a token with none cannot be created,
 * and one read back with none is refused (fail closed).
 *
 * Layers: {@link layerMemory} (tests), {@link layerSql} (the same table on SQLite and PostgreSQL,
 * over the ambient `SqlClient`).
 *
 * @since 0.1.0
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { ErrorClass } from "@engram/core"
import { MemoryRecord, MemoryWrite, Sha256 } from "@engram/core"
import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { randomBytes } from "node:crypto"

/**
 * The scopes a token may use: one or more, each a memory scope.
 *
 * @since 0.1.0
 * @category models
 */
export const TokenScopes = Schema.Array(MemoryRecord.Scope).pipe(
  Schema.minItems(1, { message: () => "a token names at least one scope" }),
  Schema.maxItems(64, { message: () => "a token names at most 64 scopes" })
)

/**
 * What creating a token takes.
 *
 * @since 0.1.0
 * @category models
 */
export const TokenRequest = Schema.Struct({
  label: Schema.String.pipe(
    Schema.minLength(1, { message: () => "a token label must not be empty" }),
    Schema.maxLength(100, { message: () => "a token label is at most 100 characters" }),
    Schema.pattern(/^[^\p{Cc}]*$/u, { message: () => "a token label is one line" })
  ),
  scopes: TokenScopes,
  readOnly: Schema.Boolean
})
/** @since 0.1.0 @category models */
export type TokenRequest = typeof TokenRequest.Type

/**
 * A stored token, without its secret: id, label, scopes, read-only flag, creation time.
 *
 * @since 0.1.0
 * @category models
 */
export class AccessToken extends Schema.Class<AccessToken>("AccessToken")({
  id: Schema.String,
  label: Schema.String,
  scopes: TokenScopes,
  readOnly: Schema.Boolean,
  createdAt: Schema.DateTimeUtc
}) {}

/**
 * A token just created: the record, and the secret, shown this once.
 *
 * @since 0.1.0
 * @category models
 */
export interface IssuedToken {
  readonly token: AccessToken
  readonly secret: string
}

/**
 * A token request that does not decode (no scope, a bad scope, an empty label).
 *
 * @since 0.1.0
 * @category errors
 */
export class InvalidTokenRequest extends ErrorClass.TaggedError<InvalidTokenRequest>()("InvalidTokenRequest", {
  problem: Schema.String
}, {
  errorClass: "InvalidInput",
  message: (self) => `cannot create the token: ${self.problem}`
}) {}

/**
 * The token store itself failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class TokenStoreFailure extends ErrorClass.Failure<TokenStoreFailure>()("TokenStoreFailure", "token store") {}

/**
 * The token store interface.
 *
 * @since 0.1.0
 * @category models
 */
export interface Service {
  /** Creates a token; the secret is returned once and only its hash is kept. */
  readonly create: (request: unknown) => Effect.Effect<IssuedToken, InvalidTokenRequest | TokenStoreFailure>
  /** The token a presented secret belongs to, if any (and if it still names a scope). */
  readonly verify: (secret: string) => Effect.Effect<AccessToken | undefined, TokenStoreFailure>
  /** Every token, oldest first. */
  readonly list: () => Effect.Effect<ReadonlyArray<AccessToken>, TokenStoreFailure>
  /** Revokes a token by id; true when one was removed. */
  readonly revoke: (id: string) => Effect.Effect<boolean, TokenStoreFailure>
}

/**
 * The token store tag.
 *
 * @since 0.1.0
 * @category tags
 */
export class AccessTokens extends Context.Tag("@engram/server/AccessTokens")<AccessTokens, Service>() {}

/**
 * The prefix every secret starts with, so a leaked one is recognizable.
 *
 * @since 0.1.0
 * @category constants
 */
export const SECRET_PREFIX = "egm_"

/**
 * The stored form of a secret: its SHA-256, hex.
 *
 * @since 0.1.0
 * @category hashing
 */
export const hashSecret = (secret: string): string => Sha256.hex(secret)

const decodeRequest = (request: unknown) =>
  Either.match(Schema.decodeUnknownEither(TokenRequest)(request, { onExcessProperty: "error" }), {
    onLeft: (error) => Effect.fail(new InvalidTokenRequest({ problem: MemoryWrite.describeParseError(error) })),
    onRight: Effect.succeed
  })

const issue = (request: unknown) =>
  Effect.gen(function*() {
    const valid = yield* decodeRequest(request)
    const secret = SECRET_PREFIX + randomBytes(32).toString("base64url")
    const token = new AccessToken({
      id: `tok_${randomBytes(6).toString("hex")}`,
      label: valid.label,
      scopes: valid.scopes,
      readOnly: valid.readOnly,
      createdAt: yield* DateTime.now
    })
    return { token, secret, hash: hashSecret(secret) }
  })

/**
 * The in-memory token store. Each layer build starts empty.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeMemory = (): Service => {
  const byHash = new Map<string, AccessToken>()
  return {
    create: (request) =>
      Effect.map(issue(request), ({ hash, secret, token }) => {
        byHash.set(hash, token)
        return { token, secret }
      }),
    verify: (secret) => Effect.sync(() => byHash.get(hashSecret(secret))),
    list: () =>
      Effect.sync(() =>
        [...byHash.values()].sort((a, b) => DateTime.toEpochMillis(a.createdAt) - DateTime.toEpochMillis(b.createdAt))
      ),
    revoke: (id) =>
      Effect.sync(() => {
        for (const [hash, token] of byHash) {
          if (token.id === id) return byHash.delete(hash)
        }
        return false
      })
  }
}

/**
 * The in-memory token store as a layer.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerMemory: Layer.Layer<AccessTokens> = Layer.sync(AccessTokens, makeMemory)

const TABLE = "engram_access_tokens"

const decodeStored = Schema.decodeUnknownEither(AccessToken)

type Row = {
  readonly id: string
  readonly label: string
  readonly scopes: string
  readonly read_only: number | boolean
  readonly created_at: number | string
}

/** A stored row as a token; `undefined` when it does not decode (no scopes, say): it grants nothing. */
const fromRow = (row: Row): AccessToken | undefined => {
  const scopes = Either.getOrElse(Either.try(() => JSON.parse(row.scopes) as unknown), () => undefined)
  const decoded = decodeStored({
    id: row.id,
    label: row.label,
    scopes,
    readOnly: row.read_only === true || Number(row.read_only) === 1,
    createdAt: new Date(Number(row.created_at)).toISOString()
  })
  return Either.isRight(decoded) ? decoded.right : undefined
}

/**
 * How long the SQL token store trusts a token it has read, in milliseconds, before reading it
 * again: a token revoked through the same store is refused at once, one revoked by another process
 * (`engram token revoke` beside a running server) within this time. Unknown secrets are never
 * remembered, so a token just created works at once (decision 0156).
 *
 * @since 0.1.0
 * @category constants
 */
export const VERIFIED_FOR_MS = 1_000

/** The most verified tokens the SQL store remembers; the oldest is forgotten first. */
const MAX_VERIFIED = 1_024

/**
 * The token store over the ambient SQL client: one table, `engram_access_tokens`, created when
 * missing, with the same SQL on SQLite and PostgreSQL. A verified token is remembered for
 * {@link VERIFIED_FOR_MS}, so a server answering many requests with one token reads it about once
 * a second instead of once a request.
 *
 * @since 0.1.0
 * @category constructors
 */
export const makeSql: Effect.Effect<Service, SqlError, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE TABLE IF NOT EXISTS ${TABLE} (
    id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    token_hash TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    read_only INTEGER NOT NULL,
    created_at BIGINT NOT NULL
  )`)
  const failure = (operation: string) => (cause: SqlError) => new TokenStoreFailure({ operation, cause })
  const columns = sql.literal("id, label, scopes, read_only, created_at")
  // Tokens read lately, by secret hash, each with the time it must be read again.
  const verified = new Map<string, { readonly token: AccessToken; readonly until: number }>()
  return {
    create: (request) =>
      Effect.gen(function*() {
        const { hash, secret, token } = yield* issue(request)
        yield* sql`INSERT INTO ${sql(TABLE)} (id, label, token_hash, scopes, read_only, created_at) VALUES (
          ${token.id}, ${token.label}, ${hash}, ${JSON.stringify(token.scopes)}, ${token.readOnly ? 1 : 0},
          ${DateTime.toEpochMillis(token.createdAt)})`.pipe(Effect.mapError(failure("create")))
        return { token, secret }
      }),
    verify: (secret) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const hash = hashSecret(secret)
        const held = verified.get(hash)
        if (held !== undefined && now < held.until) return Effect.succeed(held.token)
        return Effect.map(
          sql<Row>`SELECT ${columns} FROM ${sql(TABLE)} WHERE token_hash = ${hash}`,
          (rows) => {
            const token = rows[0] === undefined ? undefined : fromRow(rows[0])
            verified.delete(hash)
            if (token !== undefined) {
              if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!)
              verified.set(hash, { token, until: now + VERIFIED_FOR_MS })
            }
            return token
          }
        ).pipe(Effect.mapError(failure("verify")))
      }),
    list: () =>
      Effect.map(
        sql<Row>`SELECT ${columns} FROM ${sql(TABLE)} ORDER BY created_at, id`,
        (rows) => rows.flatMap((row) => fromRow(row) ?? [])
      ).pipe(Effect.mapError(failure("list"))),
    revoke: (id) =>
      Effect.map(
        sql<{ id: string }>`DELETE FROM ${sql(TABLE)} WHERE id = ${id} RETURNING id`,
        (rows) => {
          for (const [hash, held] of verified) {
            if (held.token.id === id) verified.delete(hash)
          }
          return rows.length > 0
        }
      ).pipe(Effect.mapError(failure("revoke")))
  }
})

/**
 * The SQL token store as a layer (SQLite or PostgreSQL, whichever client is provided).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerSql: Layer.Layer<AccessTokens, SqlError, SqlClient.SqlClient> = Layer.effect(AccessTokens, makeSql)
