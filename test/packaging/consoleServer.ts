/**
 * The second program the packaging test compiles and runs outside the workspace: the installed
 * `@engram/server` serves its review console (`EngramServer.layerServe`, on a SQLite store and an
 * in-memory token table), and the program asks it for the page, the bundled module, the style
 * sheet and a name it does not have, printing each answer's status, type and size as one JSON
 * line. The files come from the package's `dist/console/`, built by `npm run build`.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import { AccessTokens, EngramServer } from "@engram/server"
import { SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const filename = process.argv[2] ?? ":memory:"

const program = Effect.gen(function*() {
  const server = yield* HttpServer.HttpServer
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("expected a TCP address")
  const base = `http://127.0.0.1:${server.address.port}`
  return yield* Effect.promise(() =>
    Promise.all(["/", "/console/app.js", "/console/console.css", "/console/nothing.js"].map(async (path) => {
      const response = await fetch(base + path)
      const text = await response.text()
      return { path, status: response.status, type: response.headers.get("content-type"), chars: text.length }
    }))
  )
})

const main = program.pipe(
  Effect.provide(
    EngramServer.layerServe({ port: 0 }).pipe(
      Layer.provide(Layer.mergeAll(AccessTokens.layerMemory, SqliteEngram.layer({ filename })))
    )
  ),
  Effect.scoped
)

Effect.runPromise(main).then(
  (answers) => console.log(JSON.stringify(answers)),
  (error: unknown) => {
    console.error(error)
    process.exitCode = 1
  }
)
