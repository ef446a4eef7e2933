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
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as HttpApiMiddleware from "@effect/platform/HttpApiMiddleware"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpApiSecurity from "@effect/platform/HttpApiSecurity"
import * as HttpRouter from "@effect/platform/HttpRouter"
import * as HttpServer from "@effect/platform/HttpServer"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { MemoryStore } from "@engram/core"
import { AccessTokens, EngramServer } from "@engram/server"
import { SqliteEngram } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
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

/**
 * The floor's database and its whole job per request, as plain functions: the token check, the
 * write of one record or many in one transaction (record, stemmed FTS5 row, promotion row), and
 * the scoped search. The bare floor and the platform ceilings (below) serve exactly these.
 */
const floorDatabase = () => {
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
  const searchStatement = sqlite.prepare(`SELECT r.id, r.content, r.kind, r.scope, r.created_at FROM records_fts f
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
  return {
    secret,
    /** Whether a bearer secret is a known token. */
    known: (bearer: string) => tokenOf.get(hash(bearer)) !== undefined,
    storeAll,
    search: (text: string) => {
      const q = text.split(/\W+/).filter(Boolean).map((w) => `"${w}"`).join(" OR ")
      return searchStatement.all(q, Date.now())
    }
  }
}

const announce = (port: number, token: string) => process.stdout.write(`${JSON.stringify({ port, token })}\n`)

const bare = () => {
  const floor = floorDatabase()
  const answer = (response: NodeHttp.ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body)
    response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
    response.end(text)
  }
  const server = NodeHttp.createServer((request, response) => {
    const bearer = (request.headers.authorization ?? "").replace(/^Bearer /, "")
    if (!floor.known(bearer)) return answer(response, 401, { message: "unauthorized" })
    const url = new URL(request.url ?? "/", "http://localhost")
    if (request.method === "GET" && url.pathname === "/api/memories/search") {
      return answer(response, 200, { hits: floor.search(url.searchParams.get("q") ?? "") })
    }
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      if (url.pathname === "/api/memories/batch") {
        return answer(response, 201, { results: floor.storeAll(body.records).map((record) => ({ record })) })
      }
      return answer(response, 201, { record: floor.storeAll([body])[0] })
    })
  })
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    announce(typeof address === "object" && address !== null ? address.port : 0, floor.secret)
  })
}

// ---------------------------------------------------------------------------------------------
// The platform's ceilings: the floor's exact job (the same functions over the same tables) served
// by `@effect/platform` on the same `node:http`, so the gap between a ceiling and the floor is
// what the framework costs, and the gap between Engram and a ceiling is what is Engram's own.
// ---------------------------------------------------------------------------------------------

const Input = Schema.Struct({ content: Schema.String, kind: Schema.String })
const Stored = Schema.Struct({
  id: Schema.String,
  content: Schema.String,
  kind: Schema.String,
  scope: Schema.String,
  createdAt: Schema.String
})

class Denied extends Schema.TaggedError<Denied>()(
  "Denied",
  { message: Schema.String },
  HttpApiSchema.annotations({
    status: 401
  })
) {}

class Bearer extends HttpApiMiddleware.Tag<Bearer>()("Bearer", {
  failure: Denied,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

/** The smallest `HttpApi` with the routes the bench calls: a bearer token, a decoded body, a typed answer. */
class CeilingApi extends HttpApi.make("ceiling").add(
  HttpApiGroup.make("memories")
    .add(
      HttpApiEndpoint.post("create", "/api/memories").setPayload(Input).addSuccess(
        Schema.Struct({ record: Stored }),
        { status: 201 }
      )
    )
    .add(
      HttpApiEndpoint.post("createMany", "/api/memories/batch").setPayload(
        Schema.Struct({ records: Schema.Array(Input) })
      )
        .addSuccess(Schema.Struct({ results: Schema.Array(Schema.Struct({ record: Stored })) }), { status: 201 })
    )
    .add(
      HttpApiEndpoint.get("search", "/api/memories/search").setUrlParams(Schema.Struct({ q: Schema.String }))
        .addSuccess(Schema.Struct({ hits: Schema.Array(Schema.Unknown) }))
    )
    .middleware(Bearer)
) {}

const serveNode = <E>(
  app: Layer.Layer<never, E, HttpServer.HttpServer | HttpRouter.HttpRouter.DefaultServices>,
  token: string
) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(
      app.pipe(Layer.provideMerge(NodeHttpServer.layer(NodeHttp.createServer, { port: 0 })))
    )
    const address = Context.get(context, HttpServer.HttpServer).address
    if (address._tag !== "TcpAddress") return yield* Effect.die("no TCP address")
    announce(address.port, token)
    return yield* Effect.never
  })))

/** `api`: the floor's job behind `HttpApi` (router, bearer middleware, payload and answer schemas). */
const api = () => {
  const floor = floorDatabase()
  const handlers = HttpApiBuilder.group(CeilingApi, "memories", (handlers) =>
    handlers
      .handle("create", ({ payload }) => Effect.sync(() => ({ record: floor.storeAll([payload])[0]! })))
      .handle("createMany", ({ payload }) =>
        Effect.sync(() => ({ results: floor.storeAll(payload.records).map((record) => ({ record })) })))
      .handle("search", ({ urlParams }) =>
        Effect.sync(() => ({ hits: floor.search(urlParams.q) }))))
  const bearer = Layer.succeed(Bearer, {
    bearer: (secret) =>
      floor.known(Redacted.value(secret)) ? Effect.void : Effect.fail(new Denied({ message: "unauthorized" }))
  })
  const app = HttpApiBuilder.serve().pipe(
    Layer.provide(HttpApiBuilder.api(CeilingApi).pipe(Layer.provide(handlers), Layer.provide(bearer)))
  )
  return serveNode(app, floor.secret)
}

/** `router`: the floor's job as plain `HttpRouter` routes (no API schemas: the body read as JSON). */
const router = () => {
  const floor = floorDatabase()
  const checked = <E, R>(handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    Effect.flatMap(
      HttpServerRequest.HttpServerRequest,
      (request) =>
        floor.known((request.headers.authorization ?? "").replace(/^Bearer /, ""))
          ? handler
          : Effect.succeed(HttpServerResponse.unsafeJson({ message: "unauthorized" }, { status: 401 }))
    )
  const body = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.json)
  const routes = HttpRouter.empty.pipe(
    HttpRouter.post(
      "/api/memories",
      checked(
        Effect.map(
          body,
          (input) =>
            HttpServerResponse.unsafeJson({ record: floor.storeAll([input as { content: string; kind: string }])[0] }, {
              status: 201
            })
        )
      )
    ),
    HttpRouter.post(
      "/api/memories/batch",
      checked(Effect.map(body, (input) =>
        HttpServerResponse.unsafeJson({
          results: floor.storeAll((input as { records: Array<{ content: string; kind: string }> }).records).map((
            record
          ) => ({ record }))
        }, { status: 201 })))
    ),
    HttpRouter.get(
      "/api/memories/search",
      checked(Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
        HttpServerResponse.unsafeJson({
          hits: floor.search(new URL(request.url, "http://localhost").searchParams.get("q") ?? "")
        })))
    )
  )
  return serveNode(HttpServer.serve(routes), floor.secret)
}

// Exit on SIGINT through process.exit, so --cpu-prof writes its profile.
process.on("SIGINT", () => process.exit(0))

if (kind === "engram") void engram()
else if (kind === "bare") bare()
else if (kind === "api") void api()
else if (kind === "router") void router()
else process.stderr.write("usage: httpBenchServer engram|bare|api|router <db> [records]\n")
