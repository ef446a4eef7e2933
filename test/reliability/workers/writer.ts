/**
 * One writer process of the multi-process test: opens the SQLite store at argv[2] and, as worker
 * argv[3], writes argv[4] records one call at a time, reading (list, search, get) and changing a
 * review state between writes. Prints one JSON line: the ids it was told were written and every
 * failure it saw. Never exits early on a failure: the parent counts them.
 */
import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

const [filename, worker, countText] = process.argv.slice(2)
const count = Number(countText)

const program = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  const written: Array<string> = []
  const failures: Array<string> = []
  const attempt = <A, E>(what: string, effect: Effect.Effect<A, E>) =>
    Effect.catchAll(
      Effect.asSome(effect),
      (error) =>
        Effect.as(
          Effect.sync(() => failures.push(`${what}: ${String((error as { message?: unknown }).message ?? error)}`)),
          undefined
        )
    )
  for (let i = 0; i < count; i++) {
    const id = `w${worker}-${i}`
    const done = yield* attempt(
      "write",
      store.write([{ id, content: `worker ${worker} record ${i} shared words`, kind: "note" }])
    )
    if (done !== undefined) written.push(id)
    yield* attempt("list", store.list({ limit: 5 }))
    yield* attempt("search", store.search("shared words", { limit: 5 }))
    if (i % 5 === 4 && done !== undefined) yield* attempt("setReviewState", store.setReviewState(id, "confirmed"))
    yield* attempt("get", store.get([id]))
  }
  process.stdout.write(JSON.stringify({ written, failures }) + "\n")
})

Effect.runPromise(
  Effect.scoped(
    Effect.provide(
      program,
      SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: filename! })))
    )
  )
).catch(
  (error: unknown) => {
    process.stdout.write(JSON.stringify({ written: [], failures: [`open: ${String(error)}`] }) + "\n")
  }
)
