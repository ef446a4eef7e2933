import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Redacted from "effect/Redacted"
import { AccessTokens } from "../../AccessTokens.js"
import { Authorization, CurrentAccess, EngramApi, Unauthorized, Unavailable } from "../../EngramApi.js"
import type { GroupLayer } from "./shared.js"

/** The bearer-token check: a known token that names at least one scope, else 401; 503 when the store is down. */
export const authorization = Layer.effect(
  Authorization,
  Effect.map(AccessTokens, (tokens) => ({
    bearer: (secret: Redacted.Redacted<string>) =>
      Effect.gen(function*() {
        const value = Redacted.value(secret)
        if (value.length === 0) return yield* new Unauthorized({ message: "sign in with a bearer token" })
        // The token store failing is an outage (503), not a bad token: a client that is told 401
        // drops a good token, and an operator reads a database outage as an attack.
        const token = yield* tokens.verify(value).pipe(
          Effect.catchAll((error) =>
            Effect.zipRight(
              Effect.logError("token check failed").pipe(Effect.annotateLogs({ problem: error.message })),
              Effect.fail(new Unavailable({ message: `cannot check the token right now: ${error.message}` }))
            )
          )
        )
        // Fail closed: a token that names no scope grants nothing.
        if (token === undefined || token.scopes.length === 0) {
          return yield* new Unauthorized({
            message: "this token is not valid here; create one with engram token create"
          })
        }
        return { tokenId: token.id, label: token.label, scopes: token.scopes, readOnly: token.readOnly }
      })
  }))
)

/** The access route: who the bearer token is. */
export const layerAccess: GroupLayer<"access", never, never> = HttpApiBuilder
  .group(
    EngramApi,
    "access",
    (handlers) =>
      handlers.handle(
        "whoami",
        () => Effect.map(CurrentAccess, (who) => ({ label: who.label, scopes: who.scopes, readOnly: who.readOnly }))
      )
  )
