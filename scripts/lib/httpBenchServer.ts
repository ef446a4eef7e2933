/**
 * The two servers of `npm run bench -- http`, each run as its own process so the load generator
 * does not share their CPU: `engram <db>` serves the Engram API (`EngramServer.layerServe`) over a
 * SQLite store; `bare <db>` is the floor — a bare `node:http` server over better-sqlite3 doing the
 * same job per request: check the bearer token (a SHA-256 lookup in a token table), decode the JSON
 * body, insert the record (into a table with the memory table's columns and indexes), its FTS5 row
 * (stemmed) and its promotion row in one transaction, answer the stored record as JSON; search
 * answers the FTS5 top 20 within the caller's scope, current records only (decision 0154). Each seeds `--records` records first, then prints
 * `{ "port", "token" }` on one line.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { MemoryStore } from "@engram/core"
import { AccessTokens, EngramServer } from "@engram/server"
import { SqliteEngram } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as NodeCrypto from "node:crypto"
import * as NodeHttp from "node:http"

const [kind, db, recordsArg] = process.argv.slice(2)
const seedCount = Number(recordsArg ?? "10000")
const words = ["deploy", "friday", "build", "cache", "postgres", "review", "token", "schema", "index", "budget"]
export const contentOf = (i: number) =>
  `record ${i}: the ${words[i % 10]} of ${words[(i * 7) % 10]} moved to ${words[(i * 3) % 10]} after the ${
    words[(i * 9) % 10]
  } check`

const engram = async () => {
  const layer = EngramServer.layerServe({ port: 0 }).pipe(
    Layer.provideMerge(AccessTokens.layerSql.pipe(Layer.provideMerge(SqliteEngram.layer({ filename: db! })))),
    Layer.provide(Logger.minimumLogLevel(LogLevel.Warning))
  )
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(layer)
    const store = yield* Effect.provide(MemoryStore.MemoryStore, context)
    for (let i = 0; i < seedCount; i += 1_000) {
      yield* store.write(
        Array.from(
          { length: Math.min(1_000, seedCount - i) },
          (_, k) => ({ content: contentOf(i + k), kind: "note" as const })
        )
      )
    }
    const tokens = yield* Effect.provide(AccessTokens.AccessTokens, context)
    const { secret } = yield* tokens.create({ label: "bench", scopes: ["global"], readOnly: false })
    const address = (yield* Effect.provide(HttpServer.HttpServer, context)).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("no TCP address")
    process.stdout.write(`${JSON.stringify({ port: address.port, token: secret })}\n`)
    return yield* Effect.never
  })))
}

/**
 * The floor's tables: what a naive server needs to do the write's job — the record with every
 * column Engram stores and the indexes its listings need (the same as the memory table's:
 * listing order, scope, kind, delivery, always-on, review queue, conversation position), a
 * stemming FTS5 index of its content, and one promotion row per record (keyed by record and spec,
 * indexed by address, as Engram's promotion table), all in the request's one transaction.
 */
const floorSchema = `CREATE TABLE records (seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, content TEXT NOT NULL,
    kind TEXT NOT NULL, label TEXT, tags TEXT NOT NULL DEFAULT '[]', source_type TEXT NOT NULL, scope TEXT NOT NULL,
    delivery_policy TEXT NOT NULL, review_state TEXT NOT NULL, created_at INTEGER NOT NULL, epoch TEXT,
    expires_at INTEGER, invalidated_at INTEGER, invalidation_reason TEXT, superseded_by TEXT, supersedes TEXT,
    domain TEXT, thread TEXT, turn INTEGER, valid_from INTEGER, valid_to INTEGER);
  CREATE INDEX records_order ON records (created_at DESC, id);
  CREATE INDEX records_scope ON records (scope, created_at DESC, id);
  CREATE INDEX records_kind ON records (kind, created_at DESC, id);
  CREATE INDEX records_delivery ON records (delivery_policy, created_at DESC, id);
  CREATE INDEX records_always ON records (scope, created_at DESC, id) WHERE delivery_policy = 'always';
  CREATE INDEX records_review ON records (review_state, created_at DESC, id);
  CREATE INDEX records_position ON records (thread, turn) WHERE thread IS NOT NULL;
  CREATE VIRTUAL TABLE records_fts USING fts5(content, content='records', content_rowid='seq',
    tokenize='porter unicode61');
  CREATE TABLE promotions (record_id TEXT NOT NULL, spec_key TEXT NOT NULL, spec_version TEXT NOT NULL,
    scope TEXT NOT NULL, placement TEXT, placement_key TEXT, key_source TEXT, tier TEXT, promoted_at INTEGER NOT NULL,
    PRIMARY KEY (record_id, spec_key)) WITHOUT ROWID;
  CREATE INDEX promotions_address ON promotions (scope, placement_key);
  CREATE TABLE tokens (hash TEXT PRIMARY KEY, scopes TEXT NOT NULL)`

const bare = () => {
  const sqlite = new Database(db!)
  sqlite.pragma("journal_mode = WAL")
  sqlite.pragma("synchronous = NORMAL")
  sqlite.pragma("foreign_keys = ON")
  sqlite.exec(floorSchema)
  const insert = sqlite.prepare(
    `INSERT INTO records (id, content, kind, source_type, scope, delivery_policy, review_state, created_at)
      VALUES (?, ?, ?, 'operator', ?, 'search', 'approved', ?) RETURNING seq`
  )
  const index = sqlite.prepare("INSERT INTO records_fts (rowid, content) VALUES (?, ?)")
  const promote = sqlite.prepare(
    `INSERT INTO promotions (record_id, spec_key, spec_version, scope, promoted_at)
      VALUES (?, 'user-background', '1', ?, ?)`
  )
  // The search a caller of one scope gets: matches in that scope that are still current.
  const search = sqlite.prepare(`SELECT r.id, r.content, r.kind, r.scope, r.created_at FROM records_fts f
    JOIN records r ON r.seq = f.rowid WHERE records_fts MATCH ? AND r.scope = 'global' AND r.superseded_by IS NULL
    AND r.invalidated_at IS NULL AND (r.expires_at IS NULL OR r.expires_at > ?) ORDER BY bm25(records_fts) LIMIT 20`)
  const tokenOf = sqlite.prepare("SELECT scopes FROM tokens WHERE hash = ?")
  const store = (input: { content: string; kind: string }) => {
    const createdAt = Date.now()
    const record = {
      id: NodeCrypto.randomUUID(),
      content: input.content,
      kind: input.kind,
      scope: "global",
      createdAt: new Date(createdAt).toISOString()
    }
    const { seq } = insert.get(record.id, record.content, record.kind, record.scope, createdAt) as { seq: number }
    index.run(seq, record.content)
    promote.run(record.id, record.scope, createdAt)
    return record
  }
  const storeAll = sqlite.transaction((inputs: ReadonlyArray<{ content: string; kind: string }>) => inputs.map(store))
  storeAll(Array.from({ length: seedCount }, (_, i) => ({ content: contentOf(i), kind: "note" })))
  const secret = NodeCrypto.randomBytes(24).toString("base64url")
  const hash = (text: string) => NodeCrypto.createHash("sha256").update(text).digest("hex")
  sqlite.prepare("INSERT INTO tokens VALUES (?, ?)").run(hash(secret), JSON.stringify(["global"]))

  const answer = (response: NodeHttp.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    response.end(text)
  }
  const server = NodeHttp.createServer((request, response) => {
    const bearer = (request.headers.authorization ?? "").replace(/^Bearer /, "")
    if (tokenOf.get(hash(bearer)) === undefined) return answer(response, 401, { message: "unauthorized" })
    const url = new URL(request.url ?? "/", "http://localhost")
    if (request.method === "GET" && url.pathname === "/api/memories/search") {
      const q = (url.searchParams.get("q") ?? "").split(/\W+/).filter(Boolean).map((w) => `"${w}"`).join(" OR ")
      return answer(response, 200, { hits: search.all(q, Date.now()) })
    }
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      if (url.pathname === "/api/memories/batch") {
        return answer(response, 201, { results: storeAll(body.records).map((record) => ({ record })) })
      }
      return answer(response, 201, { record: storeAll([body])[0] })
    })
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    process.stdout.write(
      `${JSON.stringify({ port: typeof address === "object" && address !== null ? address.port : 0, token: secret })}\n`
    )
  })
}

// Exit on SIGINT through process.exit, so --cpu-prof writes its profile.
process.on("SIGINT", () => process.exit(0))

if (kind === "engram") void engram()
else if (kind === "bare") bare()
else process.stderr.write("usage: httpBenchServer engram|bare <db> [records]\n")
