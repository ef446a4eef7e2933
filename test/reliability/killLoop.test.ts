import { MemoryStore } from "@engram/core"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ChildProcess from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, expect, it } from "vitest"
import { bundleDir, bundleEntry } from "../support/bundle.js"
import { envInt } from "./spawn.js"

// npm test's sizes: every kind of kill (aimed at a checkpoint, among writes, anywhere after opening;
// during creation; racing creators) happens several times. `npm run soak` repeats them by the
// hundred (1,000 kill cycles, 300 creation kills, 50 races; decision 0195).
const CYCLES = envInt("ENGRAM_RELIABILITY_KILL_CYCLES", 40)
const CREATE_CYCLES = envInt("ENGRAM_RELIABILITY_CREATE_CYCLES", 12)
// The longest a child writes before it is killed: each cycle picks a moment in [0, MAX_KILL_MS).
const MAX_KILL_MS = 200
// One cycle in AIMED has the child aim its own SIGKILL inside a checkpoint (see workers/killable.ts);
// the parent kills it after AIMED_TIMEOUT_MS if it is still alive.
const AIMED = 3
const AIMED_TIMEOUT_MS = 4_000
const aimed = (cycle: number) => cycle % AIMED === 1

// Children loading ahead of the one being killed.
const PRELOADED = 2

const root = NodePath.resolve(import.meta.dirname, "../..")

// The child, bundled once (test/support/bundle.ts): hundreds of cycles are affordable only so.
const bundleChild = (): Promise<string> => bundleEntry("test/reliability/workers/killable.ts", childDir)
const childDir = bundleDir("killable")

let bundled: Promise<string> | undefined
const childScript = (): Promise<string> => (bundled ??= bundleChild())
afterAll(async () => {
  if (bundled !== undefined) NodeFs.rmSync(childDir, { recursive: true, force: true })
})

interface Child {
  readonly process: ChildProcess.ChildProcess
  readonly acked: { writes: Array<string>; reviews: Array<string> }
  readonly loaded: Promise<void>
  readonly ready: Promise<void>
  readonly firstAck: Promise<void>
  readonly exited: Promise<void>
  failure: string | undefined
  openMs: number | undefined
}

const spawnChild = (script: string, file: string, cycle: number, aim = false): Child => {
  const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS")) }
  const args = [script, file, String(cycle), ...(aim ? ["checkpoint"] : [])]
  const child = ChildProcess.spawn(process.execPath, args, { cwd: root, env })
  const state: Child = {
    process: child,
    acked: { writes: [], reviews: [] },
    loaded: Promise.resolve(),
    ready: Promise.resolve(),
    firstAck: Promise.resolve(),
    exited: new Promise((resolve) => child.on("exit", () => resolve())),
    failure: undefined,
    openMs: undefined
  }
  let buffer = ""
  let signalLoaded: () => void = () => {}
  let signalReady: () => void = () => {}
  let signalAck: () => void = () => {}
  ;(state as { loaded: Promise<void> }).loaded = new Promise((resolve) => (signalLoaded = resolve))
  ;(state as { ready: Promise<void> }).ready = new Promise((resolve) => (signalReady = resolve))
  ;(state as { firstAck: Promise<void> }).firstAck = new Promise((resolve) => (signalAck = resolve))
  child.stdout!.on("data", (chunk: Buffer) => {
    buffer += chunk.toString()
    const lines = buffer.split("\n")
    buffer = lines.pop()!
    for (const line of lines) {
      // A line is only counted when it arrived whole: the write was acknowledged before the kill.
      if (line === "loaded") signalLoaded()
      else if (line.startsWith("ready ")) {
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
    signalLoaded()
    signalReady()
    signalAck()
  })
  return state
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Opens the store as the writers do (and lists one record); the refusal's message, if any. */
const engramRefusal = (filename: string): Promise<string | undefined> =>
  Effect.runPromise(
    Effect.flatMap(MemoryStore.MemoryStore, (store) => store.list({ limit: 1 })).pipe(
      Effect.provide(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename })))),
      Effect.as(undefined),
      Effect.catchAll((error) => Effect.succeed(error.message))
    )
  )

/** Whether the main file is shorter than its header says (a kill inside a checkpoint leaves that). */
const shorterThanHeader = (filename: string): boolean => {
  const size = NodeFs.statSync(filename).size
  const header = Buffer.alloc(100)
  const fd = NodeFs.openSync(filename, "r")
  try {
    NodeFs.readSync(fd, header, 0, 100, 0)
  } finally {
    NodeFs.closeSync(fd)
  }
  return SqliteDatabase.headerProblem(header, size)?.includes("truncated") === true
}

/** Whether plain SQLite opens the file and its full integrity check passes. */
const sqliteOpens = (filename: string): boolean => {
  try {
    const db = new Database(filename)
    try {
      return db.pragma("integrity_check", { simple: true }) === "ok"
    } finally {
      db.close()
    }
  } catch {
    return false
  }
}

// Writer processes are killed with SIGKILL at a random moment, cycle after cycle, on one SQLite
// file. After each kill the store must open the way a writer opens it (a refusal is counted, and
// counted again when plain SQLite opens the file and passes its integrity check: a refusal the
// user could not act on), every write the child saw acknowledged must be stored, every
// acknowledged review must be in effect, and the file must pass SQLite's integrity check.
it(`SIGKILL loop: ${CYCLES} writer processes killed mid-write, 0 acknowledged writes lost, 0 refusals`, async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-kill-"))
  const file = NodePath.join(dir, "engram.db")
  const script = await childScript()
  let acknowledged = 0
  let reviews = 0
  let killedMidRun = 0
  let selfKilled = 0
  let cyclesWithWrites = 0
  let openMs = 0
  let waitMs = 0
  let reopenMs = 0
  const lost: Array<string> = []
  const failures: Array<string> = []
  const refusals: Array<string> = []
  const refusedOpenable: Array<string> = []
  let leftShort = 0
  try {
    // The next children are spawned (and loading) while the current one runs, so that a child's
    // start-up cost overlaps earlier cycles instead of adding to each one.
    const queue = Array.from({ length: Math.min(PRELOADED, CYCLES) }, (_, i) => spawnChild(script, file, i, aimed(i)))
    for (let cycle = 0; cycle < CYCLES; cycle++) {
      const child = queue.shift()!
      const t0 = performance.now()
      child.process.stdin!.write("go\n")
      await child.ready
      waitMs += performance.now() - t0
      openMs += child.openMs ?? 0
      if (cycle + PRELOADED < CYCLES) queue.push(spawnChild(script, file, cycle + PRELOADED, aimed(cycle + PRELOADED)))
      if (aimed(cycle)) {
        await Promise.race([child.exited, sleep(AIMED_TIMEOUT_MS)])
        if (child.process.signalCode === "SIGKILL") selfKilled++
      } else {
        // Other cycles: most wait for the first acknowledged write, so that kills land among
        // writes; one in four may kill anywhere from the end of opening on.
        if (cycle % 4 !== 0) await child.firstAck
        await sleep(Math.floor(Math.random() * MAX_KILL_MS))
      }
      if (child.process.exitCode === null && (child.process.signalCode === null || aimed(cycle))) killedMidRun++
      child.process.kill("SIGKILL")
      await child.exited
      if (child.failure !== undefined) failures.push(`cycle ${cycle}: ${child.failure}`)

      // Engram opens the file first, exactly as the kill left it (plain SQLite below would replay
      // the write-ahead log and hide the state).
      if (shorterThanHeader(file)) leftShort++
      const t1 = performance.now()
      const refusal = await engramRefusal(file)
      reopenMs += performance.now() - t1
      if (refusal !== undefined) {
        refusals.push(`cycle ${cycle}: ${refusal}`)
        if (sqliteOpens(file)) refusedOpenable.push(`cycle ${cycle}: ${refusal}`)
      }

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
        if (cycle % 20 === 19) expect(db.pragma("quick_check", { simple: true }), `cycle ${cycle}`).toBe("ok")
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
      `SIGKILL loop: ${CYCLES} cycles (${killedMidRun} killed while running, ${selfKilled} by an aimed kill, ` +
        `${cyclesWithWrites} after acknowledged writes), ${acknowledged} acknowledged writes, ` +
        `${reviews} acknowledged reviews, ${lost.length} lost, ${failures.length} child failures; ` +
        `${leftShort} kills left the main file shorter than its header, ${refusals.length} refused reopens, ${refusedOpenable.length} of them files SQLite opens with integrity ok; ` +
        `open ${Math.round(openMs / CYCLES)} ms, reopen ${Math.round(reopenMs / CYCLES)} ms, wait ${
          Math.round(waitMs / CYCLES)
        } ms per cycle\n`
    )
    expect(refusedOpenable.slice(0, 3)).toEqual([])
    expect(refusals.slice(0, 3)).toEqual([])
    expect(failures.slice(0, 3)).toEqual([])
    expect(lost).toEqual([])
    expect(killedMidRun).toBe(CYCLES)
    // The loop must mostly kill writers that were writing, not ones still opening the store.
    expect(cyclesWithWrites).toBeGreaterThanOrEqual(Math.floor((CYCLES * 3) / 4))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}, Math.max(600_000, CYCLES * 3_000))

// Each cycle a child creates a new store in a directory of its own and is killed at a random
// moment while it opens: what the kill leaves must be no file or a whole store that opens.
it(`SIGKILL during creation: ${CREATE_CYCLES} new stores killed while created, 0 left unopenable`, async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-create-kill-"))
  const script = await childScript()
  // How long creating a store takes here, learned from the children that finish it; kills are
  // spread over [0, 1.2 x that).
  const creationMs: Array<number> = []
  const killWindow = () =>
    creationMs.length === 0 ? 400 : 1.2 * creationMs.sort((a, b) => a - b)[creationMs.length >> 1]!
  let killedMidCreation = 0
  let noFile = 0
  let whole = 0
  const unopenable: Array<string> = []
  const failures: Array<string> = []
  const file = (cycle: number) => NodePath.join(dir, `c${cycle}`, "engram.db")
  try {
    const queue = Array.from(
      { length: Math.min(PRELOADED, CREATE_CYCLES) },
      (_, i) => spawnChild(script, file(i), i)
    )
    for (let cycle = 0; cycle < CREATE_CYCLES; cycle++) {
      const child = queue.shift()!
      // The kill must land in creation, not while the child is still loading.
      await child.loaded
      if (cycle + PRELOADED < CREATE_CYCLES) queue.push(spawnChild(script, file(cycle + PRELOADED), cycle + PRELOADED))
      child.process.stdin!.write("go\n")
      await sleep(Math.random() * killWindow())
      child.process.kill("SIGKILL")
      await child.exited
      if (child.openMs === undefined) killedMidCreation++
      else creationMs.push(child.openMs)
      if (child.failure !== undefined) failures.push(`cycle ${cycle}: ${child.failure}`)
      if (!NodeFs.existsSync(file(cycle))) noFile++
      else {
        const refusal = await engramRefusal(file(cycle))
        if (refusal === undefined) whole++
        else unopenable.push(`cycle ${cycle}: ${refusal}`)
      }
    }
    const names = NodeFs.readdirSync(dir, { recursive: true, encoding: "utf8" })
    // A kill while the new database is written leaves its file under a name of its own (removed by
    // the next writable open in that directory once it is a minute old); besides the store, its log
    // and the record a clean close leaves (decision 0062), nothing else may be left.
    const creating = names.filter((name) => /^c\d+\/engram\.db\.creating-[^/]+$/.test(name))
    const other = names.filter((name) =>
      !/^c\d+(\/engram\.db(-wal|-shm|-verified(\.\d+)?)?)?$/.test(name) && !creating.includes(name)
    )
    process.stdout.write(
      `SIGKILL during creation: ${CREATE_CYCLES} cycles, ${killedMidCreation} killed before the store was open ` +
        `(kill window ${Math.round(killWindow())} ms); left ${noFile} no file, ${whole} whole stores, ` +
        `${unopenable.length} unopenable; ${creating.length} unfinished creations left beside them, ${other.length} other files\n`
    )
    expect(unopenable.slice(0, 3)).toEqual([])
    expect(other).toEqual([])
    expect(failures.slice(0, 3)).toEqual([])
    // The loop must kill mid-creation often enough to mean something.
    expect(killedMidCreation).toBeGreaterThanOrEqual(Math.floor(CREATE_CYCLES / 4))
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}, Math.max(300_000, CREATE_CYCLES * 3_000))

// Several processes open one store that does not exist yet, released at the same moment (two CLI
// commands, or an agent and a command, on a fresh machine): each must open it and write, none may
// find it half-made.
const CREATORS = 4
const CREATE_RACES = envInt("ENGRAM_RELIABILITY_CREATE_RACES", 4)
it(`${CREATORS} processes creating one new store at once, ${CREATE_RACES} times: every one opens it`, async () => {
  const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-create-race-"))
  const script = await childScript()
  const failures: Array<string> = []
  try {
    for (let race = 0; race < CREATE_RACES; race++) {
      const file = NodePath.join(dir, `r${race}`, "engram.db")
      const children = Array.from({ length: CREATORS }, (_, i) => spawnChild(script, file, race * CREATORS + i))
      await Promise.all(children.map((child) => child.loaded))
      for (const child of children) child.process.stdin!.write("go\n")
      // A child that fails to open says so instead of becoming ready.
      await Promise.all(
        children.map((child) => child.ready.then(() => (child.failure === undefined ? child.firstAck : undefined)))
      )
      for (const child of children) {
        child.process.kill("SIGKILL")
        await child.exited
        if (child.failure !== undefined || child.acked.writes.length === 0) {
          failures.push(`race ${race}: ${child.failure ?? "no acknowledged write"}`)
        }
      }
      expect(await engramRefusal(file)).toBeUndefined()
    }
    process.stdout.write(
      `creation races: ${CREATE_RACES} x ${CREATORS} processes creating one store at once, ${failures.length} failed\n`
    )
    expect(failures.slice(0, 3)).toEqual([])
  } finally {
    NodeFs.rmSync(dir, { recursive: true, force: true })
  }
}, 300_000)
