/**
 * `npm run bench -- cli [options]` — run with `--help` for them.
 *
 * What a command costs before it does anything: the CPU time (user + system, of the child process
 * and everything it ran) of
 *
 * - `node -e ""` — the floor: Node starting and exiting;
 * - `engram --version`;
 * - `engram memory list` on a SQLite store of 10,000 conversational records
 *   (`scripts/lib/conversation.ts`, a fixed seed), which loads the command tree, opens the store and
 *   prints the first page;
 *
 * each run the ways the CLI is run:
 *
 * - **bundle**: the executable as it ships (`scripts/cliBundle.ts`, built into a directory of this
 *   run) — what `npm run build` links as `engram`;
 * - **source**: `node --conditions=engram-source --import tsx packages/cli/src/bin.ts`, what
 *   `npm run engram` and the CLI tests run.
 *
 * Runs are interleaved (every command of every way, then again), so load drifts over all of them
 * alike. The child's CPU time is read with bash's `times` builtin (the children's rusage).
 */
import * as MemoryStore from "@engram/core/MemoryStore"
import * as SqliteDatabase from "@engram/store-sqlite/SqliteDatabase"
import * as SqliteEngram from "@engram/store-sqlite/SqliteEngram"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"
import * as LogLevel from "effect/LogLevel"
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { bundleCli } from "../cliBundle.js"
import { fmt, machine, option, percentile, table, writeJson } from "../lib/benchKit.js"
import { generateTurns } from "../lib/conversation.js"
import { repoRoot } from "../packages.js"

export const USAGE = `usage: npm run bench -- cli [options]

  --runs N          runs of each command in each way (default 10)
  --records N       records in the store memory list reads (default 10000)
  --json FILE       write every figure as JSON
  --help            this text`

/** The targets of issue 23, CPU seconds of the shipped executable. */
export const TARGETS = { version: 0.35, list: 0.6 } as const

const WRITE_BATCH = 1_000

/** A store of `records` conversational records, written through the store itself. */
const writeStore = (filename: string, records: number) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const store = yield* MemoryStore.MemoryStore
      const inputs = generateTurns(records, 1).map((turn) => turn.input)
      for (let i = 0; i < inputs.length; i += WRITE_BATCH) yield* store.write(inputs.slice(i, i + WRITE_BATCH))
    }).pipe(
      Effect.provide(
        Layer.provide(
          SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))),
          Logger.minimumLogLevel(LogLevel.Warning)
        )
      )
    )
  )

/** bash's `times` prints the shell's own times, then its children's: `0m0.120s 0m0.032s`. */
const seconds = (text: string): number => {
  const match = /^(\d+)m([\d.]+)s$/.exec(text)
  if (match === null) throw new Error(`cannot read a time from ${JSON.stringify(text)}`)
  return Number(match[1]) * 60 + Number(match[2])
}

const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`

/** Runs `argv` once; resolves with its CPU seconds (user + system). Fails when it fails. */
const cpuOf = (argv: ReadonlyArray<string>, errFile: string): number => {
  const err = quote(errFile)
  const script = `${argv.map(quote).join(" ")} >/dev/null 2>${err} || { cat ${err} >&2; exit 1; }; times`
  const out = execFileSync("bash", ["-c", script], {
    cwd: repoRoot,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", ENGRAM_DB: "", ENGRAM_PG_URL: "" }
  })
  const children = out.trim().split("\n").at(-1)!.trim().split(/\s+/)
  return seconds(children[0]!) + seconds(children[1]!)
}

interface Row {
  readonly way: string
  readonly command: string
  readonly samples: Array<number>
  readonly target?: number | undefined
}

export const run = async (args: ReadonlyArray<string>): Promise<void> => {
  if (args.includes("--help")) {
    console.log(USAGE)
    return
  }
  const runs = Number(option(args, "--runs") ?? 10)
  const records = Number(option(args, "--records") ?? 10_000)
  // Inside the repository, so the bundle's externals (better-sqlite3, pg) resolve as installed.
  const directory = NodeFs.mkdtempSync(NodePath.join(repoRoot, "node_modules", ".engram-bench-cli-"))
  try {
    const bundleStart = performance.now()
    const files = await bundleCli(NodePath.join(directory, "engram"))
    const bundleSeconds = (performance.now() - bundleStart) / 1000
    const bundleBytes = files.reduce((sum, [, bytes]) => sum + bytes, 0)
    const store = NodePath.join(directory, "store.db")
    await writeStore(store, records)

    const node = process.execPath
    const ways = [
      { way: "bundle", argv: [node, NodePath.join(directory, "engram", "bin.js")] },
      { way: "source", argv: [node, "--conditions=engram-source", "--import", "tsx", "packages/cli/src/bin.ts"] }
    ]
    const commands = [
      { command: "--version", args: ["--version"], target: TARGETS.version },
      {
        command: `memory list (${records.toLocaleString("en-US")} records)`,
        args: ["--db", store, "memory", "list"],
        target: TARGETS.list
      }
    ]
    const rows: Array<Row> = [
      { way: "floor", command: "node -e \"\"", samples: [] },
      ...ways.flatMap((way) =>
        commands.map((c) => ({ way: way.way, command: c.command, samples: [], target: c.target }))
      )
    ]
    const argvs: Array<ReadonlyArray<string>> = [
      [node, "-e", ""],
      ...ways.flatMap((way) => commands.map((c) => [...way.argv, ...c.args]))
    ]
    // One warm-up of each (tsx's transform cache, the OS's file cache), then the interleaved runs.
    const errFile = NodePath.join(directory, "stderr.txt")
    for (const argv of argvs) cpuOf(argv, errFile)
    for (let i = 0; i < runs; i++) argvs.forEach((argv, k) => rows[k]!.samples.push(cpuOf(argv, errFile)))

    console.log(`engram start-up, CPU seconds (user + system) over ${runs} runs · ${machine()}`)
    console.log(
      `bundle: ${files.length} files, ${fmt(bundleBytes / 1024 / 1024, 1)} MB, built in ${fmt(bundleSeconds, 1)} s\n`
    )
    console.log(table(
      ["way", "command", "median", "min", "max", "target"],
      rows.map((row) => [
        row.way,
        row.command,
        fmt(percentile(row.samples, 50)),
        fmt(Math.min(...row.samples)),
        fmt(Math.max(...row.samples)),
        row.target === undefined || row.way !== "bundle" ? "" : `<= ${fmt(row.target)}`
      ])
    ))
    writeJson(option(args, "--json"), {
      machine: machine(),
      cpus: NodeOs.availableParallelism(),
      runs,
      records,
      bundle: { files: files.length, bytes: bundleBytes },
      rows: rows.map((row) => ({ ...row, median: percentile(row.samples, 50) }))
    })
  } finally {
    NodeFs.rmSync(directory, { recursive: true, force: true })
  }
}
