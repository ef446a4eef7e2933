/**
 * Group commit (decision 0206), through the server on SQLite: write requests that arrive together
 * share one transaction; a request is answered only after the commit that stored it; when a group's
 * commit fails, every request of it is written again on its own, so one bad request fails alone
 * and loses or answers for none of the others.
 *
 * The COMMIT failure is real: a trigger adds, for a record whose content says "poison", a row whose
 * foreign key is deferred — SQLite checks it only at COMMIT, after every statement succeeded.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as SqlClient from "@effect/sql/SqlClient"
import { MemoryStore, StoreTransaction } from "@engram/core"
import { AccessTokens, EngramServer } from "@engram/server"
import { SqliteEngram } from "@engram/store-sqlite"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Scope from "effect/Scope"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-group-commit-"))
afterAll(() => NodeFs.rmSync(directory, { recursive: true, force: true }))

const poisonAtCommit = [
  "CREATE TABLE poison_parent (id INTEGER PRIMARY KEY)",
  "CREATE TABLE poison_child (parent INTEGER REFERENCES poison_parent (id) DEFERRABLE INITIALLY DEFERRED)",
  `CREATE TRIGGER poison AFTER INSERT ON engram_memories WHEN NEW.content LIKE '%poison%'
    BEGIN INSERT INTO poison_child VALUES (42); END`
]

/**
 * Serves the API over a SQLite store whose transactions the test can hold: the first transaction
 * waits for `release`, so the requests sent meanwhile queue up behind it; every transaction run is
 * counted. Token checks are counted too, to know when every request has reached its handler.
 */
const serve = async () => {
  const release = Effect.runSync(Deferred.make<void>())
  let transactions = 0
  let verified = 0
  const database = SqliteEngram.layer({ filename: NodePath.join(directory, "group.db") })
  const held = Layer.effect(
    StoreTransaction.StoreTransaction,
    Effect.map(StoreTransaction.StoreTransaction, (inner) => ({
      run: (effect) =>
        Effect.suspend(() => {
          transactions++
          return Effect.zipRight(transactions === 1 ? Deferred.await(release) : Effect.void, inner.run(effect))
        })
    }))
  )
  const tokens = Layer.effect(
    AccessTokens.AccessTokens,
    Effect.map(AccessTokens.AccessTokens, (inner) => ({
      ...inner,
      verify: (secret: string) => Effect.zipLeft(inner.verify(secret), Effect.sync(() => verified++))
    }))
  ).pipe(Layer.provideMerge(AccessTokens.layerSql))
  const stores = Layer.merge(held, tokens).pipe(Layer.provideMerge(database))
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(EngramServer.layerServe({ port: 0 }).pipe(Layer.provideMerge(stores)), scope)
  )
  const run = <A, E>(effect: Effect.Effect<A, E, SqlClient.SqlClient | MemoryStore.MemoryStore>) =>
    Effect.runPromise(Effect.provide(effect, context))
  await run(Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.forEach(poisonAtCommit, (ddl) => sql.unsafe(ddl))))
  const address = Effect.runSync(Effect.provide(HttpServer.HttpServer, context)).address
  if (address._tag !== "TcpAddress") throw new Error("expected a TCP address")
  const { secret } = await Effect.runPromise(
    Effect.provide(
      Effect.flatMap(AccessTokens.AccessTokens, (t) => t.create({ label: "w", scopes: ["global"], readOnly: false })),
      context
    )
  )
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`http://127.0.0.1:${address.port}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${secret}`,
        ...(body === undefined ? {} : { "content-type": "application/json" })
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, json: await response.json() as { record?: { id: string }; _tag?: string } }
  }
  return {
    call,
    run,
    release: () => Effect.runSync(Deferred.succeed(release, undefined)),
    transactions: () => transactions,
    verified: () => verified,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Lets the event loop turn until `done` holds (each request's steps are I/O and fiber hops). */
const until = async (done: () => boolean) => {
  while (!done()) await new Promise((resolve) => setImmediate(resolve))
}

describe("group commit through the server (SQLite)", () => {
  it(
    "a request whose commit fails fails alone: the others of its group are stored and answered after their own commit",
    async () => {
      const served = await serve()
      try {
        // Request 0 opens the first group and is held in its transaction; 1-6 arrive meanwhile and
        // wait for the next group, with request 3 among them: a batch of three whose middle record
        // is poisoned, so the batch must be stored whole or not at all.
        const first = served.call("POST", "/api/memories", { content: "note 0", kind: "note" })
        await until(() => served.transactions() === 1)
        const rest = [1, 2, 3, 4, 5, 6].map((i) =>
          i === 3
            ? served.call("POST", "/api/memories/batch", {
              records: ["batch a", "batch poison", "batch b"].map((content) => ({ content, kind: "note" }))
            })
            : served.call("POST", "/api/memories", { content: `note ${i}`, kind: "note" })
        )
        await until(() => served.verified() === 7)
        // Every token is checked; let the six handlers reach the queue before the first group ends.
        for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve))
        served.release()
        const answers = await Promise.all([first, ...rest])

        expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 503, 201, 201, 201])
        // One transaction for request 0, one for the group of six that failed at COMMIT, then one
        // for each of the six on its own: the group was shared, and retried request by request.
        expect(served.transactions()).toBe(1 + 1 + 6)
        // Every acknowledged write is stored (nothing was answered from the group that rolled back),
        // and no record of the poisoned batch is.
        for (const answer of answers.filter((answer) => answer.status === 201)) {
          expect((await served.call("GET", `/api/memories/${answer.json.record!.id}`)).status).toBe(200)
        }
        const stored = await served.run(
          Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({ scopes: ["global"] }))
        )
        expect(stored.records.map((record) => record.content).sort()).toEqual(
          ["note 0", "note 1", "note 2", "note 4", "note 5", "note 6"]
        )
      } finally {
        await served.close()
      }
    },
    60_000
  )
})
