/**
 * The token store on every backend: secrets hashed at rest, verify by secret, revoke, and a token
 * without scopes refused at creation and never honoured if one is stored.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { describe, expect, it } from "@effect/vitest"
import { AccessTokens } from "@engram/server"
import { PgDatabase } from "@engram/store-pg"
import { SqliteDatabase } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as TestClock from "effect/TestClock"
import { describePg } from "../../store-pg/test/pgGate.js"

const suite = (name: string, layer: Layer.Layer<AccessTokens.AccessTokens, unknown>) =>
  describe(`AccessTokens: ${name}`, () => {
    it.effect("creates, verifies by secret, lists without secrets, revokes", () =>
      Effect.gen(function*() {
        const tokens = yield* AccessTokens.AccessTokens
        const issued = yield* tokens.create({ label: "ana", scopes: ["project:a", "session:s1"], readOnly: true })
        expect(issued.secret.startsWith(AccessTokens.SECRET_PREFIX)).toBe(true)
        const found = yield* tokens.verify(issued.secret)
        expect(found?.scopes).toEqual(["project:a", "session:s1"])
        expect(found?.readOnly).toBe(true)
        expect(yield* tokens.verify(issued.secret + "x")).toBeUndefined()
        expect((yield* tokens.list()).map((t) => t.id)).toEqual([issued.token.id])
        expect(JSON.stringify(yield* tokens.list())).not.toContain(issued.secret)
        expect(yield* tokens.revoke(issued.token.id)).toBe(true)
        expect(yield* tokens.verify(issued.secret)).toBeUndefined()
        expect(yield* tokens.revoke(issued.token.id)).toBe(false)
      }).pipe(Effect.provide(layer)))

    it.effect("refuses a token without scopes, or with a bad scope", () =>
      Effect.gen(function*() {
        const tokens = yield* AccessTokens.AccessTokens
        const none = yield* Effect.flip(tokens.create({ label: "x", scopes: [], readOnly: false }))
        expect(none.message).toContain("at least one scope")
        const bad = yield* Effect.flip(tokens.create({ label: "x", scopes: ["everything"], readOnly: false }))
        expect(bad._tag).toBe("InvalidTokenRequest")
        expect(yield* tokens.list()).toEqual([])
      }).pipe(Effect.provide(layer)))

    it.effect("stores only the hash of the secret", () =>
      Effect.gen(function*() {
        const tokens = yield* AccessTokens.AccessTokens
        const issued = yield* tokens.create({ label: "ana", scopes: ["global"], readOnly: false })
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        if (Option.isSome(sql)) {
          const rows = yield* sql.value<Record<string, unknown>>`SELECT * FROM engram_access_tokens`
          expect(JSON.stringify(rows)).not.toContain(issued.secret)
          expect(rows[0]?.token_hash).toBe(AccessTokens.hashSecret(issued.secret))
          // A row whose scopes were emptied behind the store's back grants nothing.
          yield* sql.value`UPDATE engram_access_tokens SET scopes = '[]'`
          expect(yield* tokens.verify(issued.secret)).toBeUndefined()
        }
      }).pipe(Effect.provide(layer)))

    it.effect("a token revoked behind the store's back (another process) is refused once VERIFIED_FOR_MS passes", () =>
      Effect.gen(function*() {
        const tokens = yield* AccessTokens.AccessTokens
        const issued = yield* tokens.create({ label: "ana", scopes: ["global"], readOnly: false })
        expect((yield* tokens.verify(issued.secret))?.id).toBe(issued.token.id)
        const sql = yield* Effect.serviceOption(SqlClient.SqlClient)
        if (Option.isNone(sql)) return
        yield* sql.value`DELETE FROM engram_access_tokens`
        // Remembered for a moment, then read again (and refused).
        yield* TestClock.adjust(AccessTokens.VERIFIED_FOR_MS - 1)
        expect((yield* tokens.verify(issued.secret))?.id).toBe(issued.token.id)
        yield* TestClock.adjust(1)
        expect(yield* tokens.verify(issued.secret)).toBeUndefined()
        // An unknown secret is not remembered: a token created now works at once.
        const next = yield* tokens.create({ label: "bo", scopes: ["global"], readOnly: false })
        expect((yield* tokens.verify(next.secret))?.id).toBe(next.token.id)
      }).pipe(Effect.provide(layer)))
  })

suite("in-memory", AccessTokens.layerMemory)
suite("sqlite", Layer.provideMerge(AccessTokens.layerSql, SqliteDatabase.layer({ filename: ":memory:" })))
describePg("AccessTokens on PostgreSQL", (url) => {
  suite(
    "postgres",
    Layer.provideMerge(AccessTokens.layerSql, PgDatabase.layerTemporarySchema({ url, prefix: "engram_tok" }))
  )
})
