import Database from "better-sqlite3"
import { build } from "esbuild"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { expect, it } from "vitest"
import { envInt } from "./spawn.js"

const CYCLES = envInt("ENGRAM_RELIABILITY_KILL_CYCLES", 200)
// The longest a child writes before it is killed: each cycle picks a moment in [0, MAX_KILL_MS).
const MAX_KILL_MS = 200

// Children loading ahead of the one being killed.
const PRELOADED = 2

const root = NodePath.resolve(import.meta.dirname, "../..")

/**
 * The child, bundled once with the workspace sources (the `engram-source` condition): a bundled
 * child starts several times faster than one run through tsx, which is what makes hundreds of
 * cycles affordable. It lives under node_modules so that its one external import, the native
 * better-sqlite3, resolves.
 */
const bundleChild = async (): Promise<string> => {
  const outfile = NodePath.join(root, "node_modules/.cache/engram-reliability", `killable-${process.pid}.mjs`)
  await build({
    entryPoints: [NodePath.join(import.meta.dirname, "workers/killable.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    conditions: ["engram-source"],
    external: ["better-sqlite3"],
    outfile,
    logLevel: "warning",
    // Bundled CommonJS dependencies call require(); give the ES module one.
    banner: {
      js:
        "import { createRequire as __engramRequire } from 'node:module'; const require = __engramRequire(import.meta.url);"
    }
  })
  return outfile
}

interface Child {
  readonly process: ChildProcess.ChildProcess
  readonly acked: { writes: Array<string>; reviews: Array<string> }
  readonly ready: Promise<void>
  readonly firstAck: Promise<void>
  readonly exited: Promise<void>
  failure: string | undefined
  openMs: number
}

const spawnChild = (script: string, file: string, cycle: number): Child => {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS")) }
  const child = ChildProcess.spawn(process.execPath, [script, file, String(cycle)], { cwd: root, env })
  const state: Child = {
    process: child,
    acked: { writes: [], reviews: [] },
    ready: Promise.resolve(),
    firstAck: Promise.resolve(),
    exited: new Promise((resolve) => child.on("exit", () => resolve())),
    failure: undefined,
    openMs: 0
  }
  let buffer = ""
  let signalReady: () => void = () => {}
  let signalAck: () => void = () => {}
  ;(state as { ready: Promise<void> }).ready = new Promise((resolve) => (signalReady = resolve))
  ;(state as { firstAck: Promise<void> }).firstAck = new Promise((resolve) => (signalAck = resolve))
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    const lines = buffer.split("\n")
    buffer = lines.pop()!
    for (const line of lines) {
      // A line is only counted when it arrived whole: the write was acknowledged before the kill.
      if (line.startsWith("ready ")) {
        state.openMs = Number(line.slice(6))
        signalReady()
      } else if (line.startsWith("ack write ")) {
        state.acked.writes.push(...line.slice(10).split(" "))
        signalAck()
      } else if (line.startsWith("ack review ")) state.acked.reviews.push(line.slice(11))
      else if (line.startsWith("failed ")) {
        state.failure = line
        signalReady()
      }
    }
  })
  child.stderr!.on("data", (chunk: Buffer) => {
    state.failure ??= `stderr: ${chunk.toString().slice(0, 500)}`
  })
  child.on("exit", () => {
    signalReady()
    signalAck()
  })
  return state
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// Writer processes are killed with SIGKILL at a random moment, cycle after cycle, on one SQLite
// file. Every write the child saw acknowledged must be stored after the kill, every acknowledged
// review must be in effect, and the file must pass SQLite's integrity check.
it(`SIGKILL loop: ${CYCLES} writer processes killed mid-write, 0 acknowledged writes lost, integrity ok`, async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-kill-"))
  const file = NodePath.join(dir, "engram.db")
  const script = await bundleChild()
  let acknowledged = 0
  let reviews = 0
  let killedMidRun = 0
  let cyclesWithWrites = 0
  let openMs = 0
  let waitMs = 0
  const lost: Array<string> = []
  const failures: Array<string> = []
  try {
    // The next children are spawned (and loading) while the current one runs, so that a child's
    // start-up cost overlaps earlier cycles instead of adding to each one.
    const queue = Array.from({ length: Math.min(PRELOADED, CYCLES) }, (_, i) => spawnChild(script, file, i))
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const child = queue.shift()!
      const t0 = performance.now()
      child.process.stdin!.write("go\n")
      await child.ready
      waitMs += performance.now() - t0
      openMs += child.openMs
      if (cycle + PRELOADED < CYCLES) queue.push(spawnChild(script, file, cycle + PRELOADED))
      // Three cycles in four wait for the first acknowledged write, so that most kills land among
      // writes; the fourth may kill anywhere from the end of opening on.
      if (cycle % 4 !== 0) await child.firstAck
      await sleep(Math.floor(Math.random() * MAX_KILL_MS))
      if (child.process.exitCode === null) killedMidRun++
      child.process.kill("SIGKILL")
      await child.exited
      if (child.failure !== undefined) failures.push(`cycle ${cycle}: ${child.failure}`)

      const { reviews: reviewed, writes } = child.acked
      acknowledged += writes.length
      if (writes.length > 0) cyclesWithWrites++
      reviews += reviewed.length
      const db = new Database(file)
      try {
        const stored = new Map(
          (db.prepare(`SELECT id, review_state FROM engram_memories WHERE id LIKE ?`).all(`k${cycle}-%`) as Array<
            { id: string; review_state: string }
          >).map((row) => [row.id, row.review_state])
        )
        for (const id of writes) if (!stored.has(id)) lost.push(id)
        for (const id of reviewed) if (stored.get(id) !== "confirmed") lost.push(`review of ${id}`)
        if (cycle % 50 === 49) expect(db.pragma("quick_check", { simple: true }), `cycle ${cycle}`).toBe("ok")
      } finally {
        db.close()
      }
    }

    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok")
      const count = db.prepare("SELECT count(*) FROM engram_memories").pluck().get() as number
      expect(count).toBeGreaterThanOrEqual(acknowledged)
    } finally {
      db.close()
    }
    process.stdout.write(
      `SIGKILL loop: ${CYCLES} cycles (${killedMidRun} killed while running, ${cyclesWithWrites} after acknowledged writes), ${acknowledged} acknowledged writes, ` +
        `${reviews} acknowledged reviews, ${lost.length} lost, ${failures.length} child failures; open ${
          Math.round(openMs / CYCLES)
        } ms, wait ${Math.round(waitMs / CYCLES)} ms per cycle\n`
    )
    expect(failures.slice(0, 3)).toEqual([])
    expect(lost).toEqual([])
    expect(killedMidRun).toBe(CYCLES)
    // The loop must mostly kill writers that were writing, not ones still opening the store.
    expect(cyclesWithWrites).toBeGreaterThanOrEqual(Math.floor((CYCLES * 3) / 4))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
    NodeFs.rmSync(script, { force: true })
  }
}, Math.max(600_000, CYCLES * 3_000))
