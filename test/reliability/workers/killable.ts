/**
 * The child of the SIGKILL loop. Loads, then waits for one line on stdin (so the parent can start
 * the next child while the current one runs, and spawn cost stays out of each cycle). Then it
 * opens the SQLite store at argv[2] and, as cycle argv[3], writes without pause until killed:
 * single records, batches of three, and review-state changes. After each call returns it prints
 * one line — `ack write <id…>` or `ack review <id>` — so the parent knows exactly what was
 * acknowledged when the SIGKILL arrived. `ready <ms>` is printed once the store is open, with how long opening took.
 */
import { MemoryStore } from "@engram/core"
import { SqliteMemoryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as NodeReadline from "node:readline"

const [filename, cycle] = process.argv.slice(2)

const say = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

let started = 0

const program = Effect.gen(function*() {
  const store = yield* MemoryStore.MemoryStore
  yield* say(`ready ${Math.round(performance.now() - started)}`)
  for (let i = 0;; i++) {
    const id = `k${cycle}-${i}`
    if (i % 4 === 3) {
      const ids = [`${id}-a`, `${id}-b`, `${id}-c`]
      yield* store.write(ids.map((each) => ({ id: each, content: `cycle ${cycle} batch ${i} ${each}`, kind: "note" })))
      yield* say(`ack write ${ids.join(" ")}`)
    } else {
      yield* store.write([{ id, content: `cycle ${cycle} record ${i} shared words`, kind: "fact" }])
      yield* say(`ack write ${id}`)
      if (i % 5 === 2) {
        yield* store.setReviewState(id, "confirmed")
        yield* say(`ack review ${id}`)
      }
    }
  }
})

const lines = NodeReadline.createInterface({ input: process.stdin })
lines.once("line", () => {
  started = performance.now()
  lines.close()
  Effect.runPromise(Effect.scoped(Effect.provide(program, SqliteMemoryStore.layer({ filename: filename! })))).catch(
    (error: unknown) => {
      process.stdout.write(`failed ${String(error).replace(/\s+/g, " ")}\n`)
      process.exitCode = 1
    }
  )
})
