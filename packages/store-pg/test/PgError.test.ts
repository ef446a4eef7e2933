import * as SqlClient from "@effect/sql/SqlClient"
import { SqlError } from "@effect/sql/SqlError"
import { describe, expect, it } from "@effect/vitest"
import { IdGenerator, MemoryLimits, MemoryRecord, MemoryStore, SessionStore } from "@engram/core"
import { PgDatabase, PgEngram, PgError, PgSessionStore } from "@engram/store-pg"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describePg } from "./pgGate.js"

/** A record whose content holds `words` distinct tokens of 12 characters. */
const wordyRecord = (id: string, words: number) =>
  MemoryRecord.MemoryRecord.make({
    id,
    content: Array.from({ length: words }, (_, i) => `w${i.toString(36).padStart(11, "0")}`).join(" "),
    kind: "note",
    tags: [],
    sourceType: "operator",
    scope: "global",
    deliveryPolicy: "always",
    reviewState: "confirmed",
    createdAt: DateTime.unsafeMake(Date.UTC(2025, 0, 1))
  })

describe("PgError", () => {
  it("redacts the password of any postgres:// URL in a text", () => {
    expect(PgError.redactUrls("at postgres://engram:hunter2@db:5432/x and postgresql://u:p%40ss@h/y"))
      .toBe("at postgres://engram:***@db:5432/x and postgresql://u:***@h/y")
    expect(PgError.redactUrls("postgres://engram@db/x")).toBe("postgres://engram@db/x")
  })

  it("only the server's answer (a SQLSTATE with a severity) is a PgServerError; a Node system error is not", () => {
    const server = Object.assign(new Error("deadlock detected"), { code: "40P01", severity: "ERROR" })
    expect(PgError.fromDriverError(server)?.message).toBe("PostgreSQL 40P01: deadlock detected")
    expect(PgError.fromDriverError(Object.assign(new Error("write EPIPE"), { code: "EPIPE", syscall: "write" })))
      .toBeUndefined()
  })

  it("a driver error without a server answer keeps the driver's reason in the message", () => {
    const reason = PgError.reasonOf(
      new SqlError({ message: "Failed to acquire connection", cause: new Error("connect ECONNREFUSED 127.0.0.1:1") })
    )
    expect(reason.message).toBe("Failed to acquire connection: connect ECONNREFUSED 127.0.0.1:1")
  })
})

describePg("PostgreSQL errors carry the SQLSTATE and the server's message", (url) => {
  const fresh = Layer.mergeAll(PgEngram.layerStores(), PgSessionStore.layer).pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, maxConnections: 2 })),
    Layer.provideMerge(IdGenerator.sequential())
  )

  it.effect(
    "a record over PostgreSQL's tsvector limit: 54000 and the server's words, in the typed failure",
    () =>
      Effect.gen(function*() {
        const store = yield* MemoryStore.MemoryStore
        // 100,000 distinct 12-character tokens: 1.3 MB of lexemes, over the 1 MB a tsvector holds.
        // Allowed through only because the limits were raised for this test.
        const failure = yield* Effect.flip(store.restore([wordyRecord("too-wordy", 100_000)]))
        expect(failure._tag).toBe("MemoryStoreFailure")
        if (failure._tag !== "MemoryStoreFailure") return
        expect(failure.cause).toBeInstanceOf(PgError.PgServerError)
        const server = failure.cause as PgError.PgServerError
        expect(server.sqlState).toBe("54000")
        expect(server.serverMessage).toMatch(/string is too long for tsvector/)
        expect(failure.message).toMatch(
          /^memory store restore failed: PostgreSQL 54000: string is too long for tsvector/
        )
        // The store is as it was.
        expect((yield* store.get(["too-wordy"])).records).toEqual([])
      }).pipe(Effect.provide(Layer.merge(fresh, MemoryLimits.layer({ maxContentChars: 2_000_000 })))),
    60_000
  )

  it.effect("a constraint the server enforces: its name in the error, the failing row (content) never in the message", () =>
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const sql = yield* SqlClient.SqlClient
      yield* sql`ALTER TABLE engram_memories ADD CONSTRAINT no_secrets CHECK (content NOT LIKE '%classified%')`
      const failure = yield* Effect.flip(
        store.write([{ content: "classified: the launch code is 0000", kind: "note" }])
      )
      expect(failure._tag).toBe("MemoryStoreFailure")
      if (failure._tag !== "MemoryStoreFailure") return
      const server = failure.cause as PgError.PgServerError
      expect(server._tag).toBe("PgServerError")
      expect(server.sqlState).toBe("23514")
      expect(server.constraint).toBe("no_secrets")
      expect(server.detail).toContain("launch code")
      expect(failure.message).toBe(
        `memory store write failed: PostgreSQL 23514: new row for relation "engram_memories" violates check ` +
          `constraint "no_secrets"`
      )
    }).pipe(Effect.provide(fresh)))

  it.effect("the other PostgreSQL stores carry the reason the same way", () =>
    Effect.gen(function*() {
      const sessions = yield* SessionStore.SessionStore
      const sql = yield* SqlClient.SqlClient
      yield* sql`ALTER TABLE engram_session_messages RENAME TO gone_messages`
      const failure = yield* Effect.flip(sessions.load(SessionStore.SessionId.make("s-1")))
      expect(failure._tag).toBe("SessionStoreFailure")
      expect((failure.cause as PgError.PgServerError).sqlState).toBe("42P01")
      expect(failure.message).toMatch(/^session store load failed: PostgreSQL 42P01: relation ".*" does not exist/)
    }).pipe(Effect.provide(fresh)))
})
