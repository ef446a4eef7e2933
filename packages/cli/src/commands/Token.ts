/**
 * `engram token create|list|revoke`: the bearer tokens of `engram serve`. A token is bound to the
 * scopes it may read and (unless `--read-only`) write; its secret is printed once, at creation,
 * and stored only as a hash.
 *
 * @since 0.1.0
 */
import * as Command from "@effect/cli/Command"
import type * as SqlError from "@effect/sql/SqlError"
import * as AccessTokens from "@engram/server/AccessTokens"
import * as Console from "effect/Console"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { CliFailure, ExitCode, toCliFailure } from "../CliError.js"
import * as Flags from "../Flags.js"
import * as Render from "../Render.js"
import * as Root from "../Root.js"
import * as StoreBackend from "../StoreBackend.js"

/** A token table that cannot be opened is the CLI's "unavailable" failure; other errors pass through. */
export const tokenTableUnavailable = <E extends { readonly _tag: string }>(
  error: E | SqlError.SqlError
): Exclude<E, SqlError.SqlError> | CliFailure =>
  error._tag === "SqlError"
    ? new CliFailure({
      problem: `the token table cannot be opened: ${(error as SqlError.SqlError).message}`,
      exitCode: ExitCode.unavailable
    })
    : error as Exclude<E, SqlError.SqlError>

/** Runs `self` with the token store on the database the global options name (`list` never creates one). */
const withTokens = <A, E>(
  self: Effect.Effect<A, E, AccessTokens.AccessTokens>,
  access: StoreBackend.Access = "write"
) =>
  Effect.flatMap(StoreBackend.location, (location) =>
    Effect.provide(
      self,
      AccessTokens.layerSql.pipe(
        Layer.provide(StoreBackend.layer(location, access)),
        Layer.mapError(tokenTableUnavailable)
      )
    ))

const encodeToken = Schema.encodeSync(AccessTokens.AccessToken)

const describe = (token: AccessTokens.AccessToken) =>
  `${token.id}  ${token.label}  ${token.scopes.join(",")}${token.readOnly ? "  read-only" : ""}  ` +
  DateTime.formatIso(token.createdAt)

const output = (document: () => unknown, human: () => string) =>
  Effect.flatMap(Root.settings, (settings) => Console.log(settings.json ? Render.json(document()) : human()))

/**
 * `engram token create --scope <scope>… [--label] [--read-only]`
 *
 * @since 0.1.0
 * @category commands
 */
export const create = Command.make(
  "create",
  {
    scopes: Flags.repeated(
      Flags.text(
        "scope",
        Flags.Scope,
        "A scope the token may use (global, project:<id>, session:<id>); at least one, repeat for more.",
        "scope"
      )
    ),
    label: Flags.withDefault(
      Flags.text("label", Flags.NonEmpty, "A name for the token. Default: operator."),
      "operator"
    ),
    readOnly: Flags.boolean("read-only", "The token may read but never write.")
  },
  ({ label, readOnly, scopes }) =>
    Effect.gen(function*() {
      if (scopes === undefined || scopes.length === 0) {
        return yield* new CliFailure({
          problem: "a token needs at least one --scope (e.g. --scope project:a); a token without scopes grants nothing",
          exitCode: ExitCode.refused
        })
      }
      const issued = yield* withTokens(
        Effect.flatMap(AccessTokens.AccessTokens, (tokens) => tokens.create({ label, scopes, readOnly }))
      )
      yield* output(
        () => ({ token: encodeToken(issued.token), secret: issued.secret }),
        () => `${issued.secret}\n# ${describe(issued.token)}\n# shown once: keep it; only its hash is stored`
      )
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Create a bearer token for engram serve, bound to scopes; prints the secret once."))

/**
 * `engram token list`
 *
 * @since 0.1.0
 * @category commands
 */
export const list = Command.make("list", {}, () =>
  Effect.gen(function*() {
    const tokens = yield* withTokens(Effect.flatMap(AccessTokens.AccessTokens, (store) => store.list()), "read")
    yield* output(
      () => ({ tokens: tokens.map((token) => encodeToken(token)) }),
      () => (tokens.length === 0 ? "no tokens" : tokens.map(describe).join("\n"))
    )
  }).pipe(Effect.mapError(toCliFailure))).pipe(Command.withDescription("List tokens (never their secrets)."))

/**
 * `engram token revoke <id>`
 *
 * @since 0.1.0
 * @category commands
 */
export const revoke = Command.make(
  "revoke",
  { id: Flags.argument(Flags.text("id", Flags.NonEmpty, "The token's id (tok_…), as token list shows it.")) },
  ({ id }) =>
    Effect.gen(function*() {
      const removed = yield* withTokens(Effect.flatMap(AccessTokens.AccessTokens, (store) => store.revoke(id)))
      if (!removed) return yield* new CliFailure({ problem: `no token ${id}`, exitCode: ExitCode.refused })
      yield* output(() => ({ revoked: id }), () => `revoked ${id}`)
    }).pipe(Effect.mapError(toCliFailure))
).pipe(Command.withDescription("Revoke a token: it stops working at once."))

/**
 * The subcommands of `engram token`, in the order help lists them.
 *
 * @since 0.1.0
 * @category commands
 */
export const subcommands = [create, list, revoke] as const

/**
 * `engram token …`
 *
 * @since 0.1.0
 * @category commands
 */
export const command = Command.make("token").pipe(
  Command.withDescription("Create, list and revoke the bearer tokens of engram serve."),
  Command.withSubcommands(subcommands)
)
