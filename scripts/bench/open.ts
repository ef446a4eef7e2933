/**
 * `npm run bench -- open [--records N[,N…]] [--runs R]` — what opening a SQLite store costs by how
 * far Engram can vouch for the file (decision 0062): for each size, a store of N records (one
 * `MemoryStore.write` per 1,000), then R opens (median, milliseconds) of each kind:
 *
 * - **known sound**: the file as a clean close left it (header and schema checks only, whatever
 *   its size: decision 0094);
 * - **full check**: the same file after something else touched it (its record removed), so the
 *   open runs `quick_check` over every page — the first open after a crash, a copy or an edit.
 */
import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

const option = (args: ReadonlyArray<string>, name: string, fallback: string): string => {
  const at = args.indexOf(name)
  return at >= 0 && args[at + 1] !== undefined ? args[at + 1]! : fallback
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const openOnce = async (file: string): Promise<number> => {
  const started = performance.now()
  await Effect.runPromise(Effect.scoped(SqliteDatabase.make({ filename: file })))
  return performance.now() - started
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log("npm run bench -- open [--records 10000,100000] [--runs 5]")
    return
  }
  const sizes = option(args, "--records", "10000,100000").split(",").map(Number)
  const runs = Number(option(args, "--runs", "5"))
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-open-bench-"))
  try {
    console.log("records | file MB | known sound (ms) | full check (ms)")
    for (const records of sizes) {
      const file = NodePath.join(dir, `store-${records}.db`)
      await Effect.runPromise(
        Effect.gen(function*() {
          const store = yield* MemoryStore.MemoryStore
          for (let from = 0; from < records; from += 1_000) {
            yield* store.write(
              Array.from({ length: Math.min(1_000, records - from) }, (_, i) => ({
                content: `record ${from + i}: the staging database moved to the lisbon office; ${"notes ".repeat(40)}`,
                kind: "note" as const
              }))
            )
          }
        }).pipe(
          Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: file }))))
        )
      )
      const known: Array<number> = []
      const full: Array<number> = []
      for (let i = 0; i < runs; i++) {
        known.push(await openOnce(file))
        NodeFs.rmSync(SqliteDatabase.verifiedStateFile(file))
        full.push(await openOnce(file))
      }
      const mb = (NodeFs.statSync(file).size / 1_048_576).toFixed(1)
      console.log(`${records} | ${mb} | ${median(known).toFixed(1)} | ${median(full).toFixed(1)}`)
    }
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}
