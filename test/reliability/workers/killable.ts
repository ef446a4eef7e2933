/**
 * The child of the SIGKILL loops. Loads, prints `loaded`, then waits for one line on stdin (so the
 * parent can start the next child while the current one runs, and spawn cost stays out of each
 * cycle). Then it opens the SQLite store at argv[2] (creating it when missing) and, as cycle
 * argv[3], writes without pause until killed: single records, batches of three (with a body of
 * several kilobytes), and review-state changes. After each call returns it prints one line —
 * `ack write <id…>` or `ack review <id>` — so the parent knows exactly what was acknowledged when
 * the SIGKILL arrived. `ready <ms>` is printed once the store is first open, with how long opening
 * took.
 *
 * It writes in bursts of a few dozen operations and closes the store after each, as a run of CLI
 * commands or a restarted agent does, so kills land in opens and closes too, not only between
 * writes. With argv[4] = `checkpoint` it is an aimed child instead: it keeps the store open, so
 * SQLite checkpoints its write-ahead log every 1,000 pages, copying the pages into the main file
 * in page order, page 1 (with the new page count) first; a thread watches the file and sends the
 * SIGKILL the moment the main file is shorter than its header says — a state a kill at a random
 * millisecond rarely hits (or after a few seconds if it never sees it).
 */
import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeReadline from "node:readline"
import * as NodeWorker from "node:worker_threads"

const [filename, cycle, aim] = process.argv.slice(2)

const say = (line: string) => Effect.sync(() => process.stdout.write(`${line}\n`))

// Batched records carry a body of a few pages, so the log grows by whole pages and the checkpoint
// that copies it into the main file lasts long enough to be killed in.
const BODY = Array.from({ length: 600 }, (_, i) => `word${i % 97}`).join(" ")

// The killer thread of an aimed child: from the moment the store is open it watches the main file,
// and sends SIGKILL the moment page 1 records more pages than the file holds (a checkpoint is
// mid-way), or after WATCH_MS at the latest.
const WATCH_MS = 2_500
const watchAndKill = () => {
  const killer = new NodeWorker.Worker(
    `const { workerData } = require("node:worker_threads")
     const fs = require("node:fs")
     const until = performance.now() + workerData.watchMs
     const fd = fs.openSync(workerData.filename, "r")
     const header = Buffer.alloc(100)
     const pause = new Int32Array(new SharedArrayBuffer(4))
     while (performance.now() < until) {
       Atomics.wait(pause, 0, 0, 0.2)
       const size = fs.fstatSync(fd).size
       fs.readSync(fd, header, 0, 100, 0)
       const pageSize = header.readUInt16BE(16) === 1 ? 65536 : header.readUInt16BE(16)
       if (header.readUInt32BE(24) === header.readUInt32BE(92) && header.readUInt32BE(28) * pageSize > size) break
     }
     process.kill(process.pid, "SIGKILL")`,
    { eval: true, workerData: { filename, watchMs: WATCH_MS } }
  )
  killer.unref()
}

let started = 0
let next = 0

const operations = (count: number) =>
  Effect.gen(function*() {
    const store = yield* MemoryStore.MemoryStore
    if (next === 0) {
      if (aim === "checkpoint") watchAndKill()
      yield* say(`ready ${Math.round(performance.now() - started)}`)
    }
    for (const end = next + count; next < end; next++) {
      const i = next
      const id = `k${cycle}-${i}`
      if (i % 4 === 3) {
        const ids = [`${id}-a`, `${id}-b`, `${id}-c`]
        yield* store.write(
          ids.map((each) => ({ id: each, content: `cycle ${cycle} batch ${i} ${each} ${BODY}`, kind: "note" }))
        )
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

// One burst: open, write, close (an aimed child writes in one burst until it is killed).
const burst = (count: number) =>
  Effect.provide(
    operations(count),
    SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: filename! })))
  ).pipe(Effect.scoped)

const program = aim === "checkpoint"
  ? burst(Number.POSITIVE_INFINITY)
  : Effect.forever(Effect.suspend(() => burst(10 + Math.floor(Math.random() * 40))))

const lines = NodeReadline.createInterface({ input: process.stdin })
process.stdout.write("loaded\n")
lines.once("line", () => {
  started = performance.now()
  lines.close()
  Effect.runPromise(program).catch((error: unknown) => {
    process.stdout.write(`failed ${String(error).replace(/\s+/g, " ")}\n`)
    process.exitCode = 1
  })
})
