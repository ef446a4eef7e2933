/**
 * `npm run bench -- http [options]` — run with `--help` for them.
 *
 * The Engram server next to its floor, each in its own process on its own SQLite file seeded with
 * the same records (scripts/lib/httpBenchServer.ts):
 *
 * - **mixed**: 16 clients on keep-alive connections, each sending one request after another —
 *   80% single-record writes (`POST /api/memories`), 20% searches (`GET /api/memories/search`;
 *   `--searches PCT` changes the share, 0 for writes only) — for a fixed time; requests per second, and p50/p99 latency of writes and searches. Rounds
 *   alternate Engram, floor, Engram, floor… so load drifts over both alike.
 * - **batch**: one request of 1,000 records (`POST /api/memories/batch`, one transaction) against
 *   the floor's same request doing 1,000 raw inserts (record, FTS5 row, promotion row) in one
 *   transaction.
 *
 * The floor is a bare `node:http` server over better-sqlite3 doing the same job per request
 * (decision 0154): the bearer token looked up by SHA-256, the JSON body decoded, the record
 * inserted into a table with the memory table's columns and indexes, with its stemmed FTS5 row and
 * its promotion row, the stored record answered; a search is filtered to the caller's scope and to
 * current records, as Engram's is.
 *
 * With `--ceiling`, the floor's exact job is also served through `@effect/platform` on the same
 * `node:http` — a minimal `HttpApi` and a bare `HttpRouter` over the floor's own statements — and
 * alternated with the others: what the framework costs by itself (decision 0207).
 *
 * Each figure is also given per second of the server's own CPU time (from `/proc`): on a machine
 * other work loads, wall-clock rates stretch with that load, CPU time much less. Ratios are Engram / floor (rps: higher is better; time: lower).
 */
import { spawn } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeHttp from "node:http"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { createInterface } from "node:readline"
import { fmt, loadAverage, machine, option, percentile, table, writeJson } from "../lib/benchKit.js"
import { repoRoot } from "../packages.js"

export const USAGE = `usage: npm run bench -- http [options]

  --records N       records seeded in each store (default 10000)
  --clients N       concurrent clients (default 16)
  --seconds N       length of one mixed round (default 8)
  --rounds N        mixed rounds per server, alternated (default 3)
  --batches N       batch requests per server, alternated (default 20)
  --searches PCT    share of the mixed requests that are searches, 0-100 (default 20)
  --ceiling         also serve the floor's exact job through @effect/platform (an HttpApi and a
                    bare HttpRouter on the same node:http), alternated with the others: what the
                    framework itself costs
  --profile DIR     run the Engram server under node --cpu-prof, profiles written to DIR
  --json FILE       write every figure as JSON`

interface Served {
  readonly pid: number
  readonly port: number
  readonly token: string
  readonly stop: () => Promise<void>
}

type Kind = "engram" | "api" | "router" | "bare"

/** What each server is, in the table's header. */
const titles: Record<Kind, string> = {
  engram: "Engram",
  api: "HttpApi ceiling",
  router: "HttpRouter ceiling",
  bare: "bare floor"
}

const start = async (kind: Kind, db: string, records: number, profile?: string): Promise<Served> => {
  const child = spawn(process.execPath, [
    ...(profile !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
    "--conditions=engram-source",
    "--import",
    "tsx",
    NodePath.join(repoRoot, "scripts/lib/httpBenchServer.ts"),
    kind,
    db,
    String(records)
  ], { cwd: repoRoot, stdio: ["ignore", "pipe", "inherit"] })
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve)
    child.once("exit", (code) => reject(new Error(`${kind} server exited with ${code}`)))
  })
  const { port, token } = JSON.parse(line) as { port: number; token: string }
  return {
    pid: child.pid!,
    port,
    token,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve())
        child.kill("SIGINT")
      })
  }
}

const agent = new NodeHttp.Agent({ keepAlive: true, maxSockets: 64 })

const send = (served: Served, method: string, path: string, body?: unknown): Promise<number> =>
  new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const request = NodeHttp.request({
      host: "127.0.0.1",
      port: served.port,
      method,
      path,
      agent,
      headers: {
        authorization: `Bearer ${served.token}`,
        ...(text === undefined ? {} : { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
      }
    }, (response) => {
      response.resume()
      response.on("end", () => resolve(response.statusCode ?? 0))
    })
    request.on("error", reject)
    request.end(text)
  })

const queries = ["deploy friday", "build cache", "postgres schema", "review token", "index budget", "cache"]

/**
 * The CPU time a process has used so far, in milliseconds (`NaN` where there is none): what a
 * server spent on a round, however the machine's other load stretched its wall-clock time. Read
 * from each thread's `schedstat` (nanoseconds, the main thread and the pool and GC helpers alike),
 * so one batch of ~100 ms is measured to the microsecond, not in the 10 ms ticks of `stat`.
 */
const cpuMillis = (pid: number): number => {
  try {
    return NodeFs.readdirSync(`/proc/${pid}/task`).reduce(
      (sum, thread) =>
        sum + Number(NodeFs.readFileSync(`/proc/${pid}/task/${thread}/schedstat`, "utf8").split(" ")[0]) / 1e6,
      0
    )
  } catch {
    return Number.NaN
  }
}

interface Round {
  readonly rps: number
  /** Requests answered per second of the server's own CPU time. */
  readonly perCpuSecond: number
  readonly writes: Array<number>
  readonly searches: Array<number>
  readonly errors: number
}

let sequence = 0

const mixed = async (served: Served, clients: number, seconds: number, searchShare: number): Promise<Round> => {
  const writes: Array<number> = []
  const searches: Array<number> = []
  let errors = 0
  const until = performance.now() + seconds * 1_000
  const began = performance.now()
  const cpuBefore = cpuMillis(served.pid)
  await Promise.all(Array.from({ length: clients }, async () => {
    while (performance.now() < until) {
      const n = sequence++
      const isWrite = n % 100 >= searchShare
      const at = performance.now()
      const status = isWrite
        ? await send(served, "POST", "/api/memories", {
          content: `bench write ${n} about the deploy cache`,
          kind: "note"
        })
        : await send(served, "GET", `/api/memories/search?q=${encodeURIComponent(queries[n % queries.length]!)}`)
      const took = performance.now() - at
      if (status !== 200 && status !== 201) errors++
      ;(isWrite ? writes : searches).push(took)
    }
  }))
  const answered = writes.length + searches.length
  return {
    rps: answered / ((performance.now() - began) / 1_000),
    perCpuSecond: answered / ((cpuMillis(served.pid) - cpuBefore) / 1_000),
    writes,
    searches,
    errors
  }
}

const batchOf = (n: number, round: number) => ({
  records: Array.from(
    { length: n },
    (_, i) => ({ content: `batch ${round} record ${i} about the build cache`, kind: "note" })
  )
})

const median = (samples: ReadonlyArray<number>) => percentile(samples, 50)

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) return console.log(USAGE)
  const records = Number(option(args, "--records") ?? 10_000)
  const clients = Number(option(args, "--clients") ?? 16)
  const seconds = Number(option(args, "--seconds") ?? 8)
  const rounds = Number(option(args, "--rounds") ?? 3)
  const batches = Number(option(args, "--batches") ?? 20)
  const profile = option(args, "--profile")
  const searchShare = Number(option(args, "--searches") ?? 20)
  const directory = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-bench-http-"))
  try {
    console.log(`HTTP bench: ${records} records, ${clients} clients, ${rounds} × ${seconds}s rounds each; ${machine()}`)
    const kinds: Array<Kind> = args.includes("--ceiling") ? ["engram", "api", "router", "bare"] : ["engram", "bare"]
    const servers = new Map<Kind, Served>()
    for (const kind of kinds) {
      servers.set(
        kind,
        await start(kind, NodePath.join(directory, `${kind}.db`), records, kind === "engram" ? profile : undefined)
      )
    }
    const results = new Map(kinds.map((kind) => [kind, [] as Array<Round>]))
    const batch = new Map(kinds.map((kind) => [kind, [] as Array<number>]))
    const batchCpu = new Map(kinds.map((kind) => [kind, [] as Array<number>]))
    try {
      // Warm-up: one short round each (JIT, page cache), not counted.
      for (const kind of kinds) await mixed(servers.get(kind)!, clients, 2, searchShare)
      // Each round runs every server once, the order rotated round by round so load drifts over all alike.
      for (let round = 0; round < rounds; round++) {
        for (let k = 0; k < kinds.length; k++) {
          const kind = kinds[(k + round) % kinds.length]!
          results.get(kind)!.push(await mixed(servers.get(kind)!, clients, seconds, searchShare))
        }
      }
      for (let round = 0; round < batches + 1; round++) {
        for (const kind of kinds) {
          const served = servers.get(kind)!
          const at = performance.now()
          const cpuBefore = cpuMillis(served.pid)
          const status = await send(served, "POST", "/api/memories/batch", batchOf(1_000, round))
          if (status !== 201) throw new Error(`${kind} batch answered ${status}`)
          if (round > 0) {
            batch.get(kind)!.push(performance.now() - at)
            batchCpu.get(kind)!.push(cpuMillis(served.pid) - cpuBefore)
          }
        }
      }
    } finally {
      for (const served of servers.values()) await served.stop()
    }
    const summary = (kind: Kind) => {
      const all = results.get(kind)!
      const writes = all.flatMap((round) => round.writes)
      const searches = all.flatMap((round) => round.searches)
      return {
        rps: median(all.map((round) => round.rps)),
        perCpuSecond: median(all.map((round) => round.perCpuSecond)),
        writeP50: percentile(writes, 50),
        writeP99: percentile(writes, 99),
        searchP50: percentile(searches, 50),
        searchP99: percentile(searches, 99),
        errors: all.reduce((sum, round) => sum + round.errors, 0),
        batchMs: median(batch.get(kind)!),
        batchCpuMs: median(batchCpu.get(kind)!),
        batchCpuMeanMs: batchCpu.get(kind)!.reduce((sum, ms) => sum + ms, 0) / batchCpu.get(kind)!.length
      }
    }
    const figures = new Map(kinds.map((kind) => [kind, summary(kind)]))
    const b = figures.get("bare")!
    // Each server's figure, then its ratio to the floor: rates as Engram / floor (higher is
    // better), times as the floor's throughput over the server's (higher is better) where noted.
    const row = (
      label: string,
      value: (f: ReturnType<typeof summary>) => number,
      digits: number,
      ratio: (f: ReturnType<typeof summary>) => number
    ) => [
      label,
      ...kinds.map((kind) => {
        const f = figures.get(kind)!
        return kind === "bare" ? fmt(value(f), digits) : `${fmt(value(f), digits)} (${fmt(ratio(f))}×)`
      })
    ]
    console.log(table(["", ...kinds.map((kind) => titles[kind])], [
      row("requests/s (median round) (× floor)", (f) => f.rps, 0, (f) => f.rps / b.rps),
      row("requests per CPU-second (× floor)", (f) => f.perCpuSecond, 0, (f) => f.perCpuSecond / b.perCpuSecond),
      row("write p50 ms (× floor's)", (f) => f.writeP50, 1, (f) => f.writeP50 / b.writeP50),
      row("write p99 ms (× floor's)", (f) => f.writeP99, 1, (f) => f.writeP99 / b.writeP99),
      row("search p50 ms (× floor's)", (f) => f.searchP50, 1, (f) => f.searchP50 / b.searchP50),
      row("search p99 ms (× floor's)", (f) => f.searchP99, 1, (f) => f.searchP99 / b.searchP99),
      ["errors", ...kinds.map((kind) => String(figures.get(kind)!.errors))],
      row("batch of 1,000 ms (× floor's throughput)", (f) => f.batchMs, 1, (f) => b.batchMs / f.batchMs),
      row(
        "batch of 1,000, server CPU ms (× floor's throughput)",
        (f) => f.batchCpuMs,
        0,
        (f) => b.batchCpuMs / f.batchCpuMs
      ),
      row(
        "batch of 1,000, server CPU ms, mean (× floor's throughput)",
        (f) => f.batchCpuMeanMs,
        1,
        (f) => b.batchCpuMeanMs / f.batchCpuMeanMs
      )
    ]))
    console.log(`load average at the end: ${loadAverage()}`)
    writeJson(option(args, "--json"), {
      records,
      clients,
      seconds,
      rounds,
      ...Object.fromEntries(figures),
      loadAverage: loadAverage()
    })
  } finally {
    agent.destroy()
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
}
