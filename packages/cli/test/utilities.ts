/**
 * Runs the real `engram` command as a child process, from the repository root: the CLI's sources
 * bundled once per test run (test/support/globalSetup.ts), which starts several times faster than
 * `npm run engram`'s tsx.
 */
import { expect, inject } from "@effect/vitest"
import { MemoryRecord } from "@engram/core"
import * as Schema from "effect/Schema"
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"

export const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The command line (executable first) that runs `engram ...args` from source. */
export const engramArgs = (args: ReadonlyArray<string>): ReadonlyArray<string> => [
  process.execPath,
  inject("engramBin"),
  ...args
]

/** Runs `engram ...args` and waits for it. */
export const engram = (...args: ReadonlyArray<string>): Promise<Run> => engramWithEnv({}, ...args)

/**
 * Runs a command and waits for it, collecting its output. `code` is null when a signal or the
 * timeout (SIGKILL after `timeout` ms, 60 s by default) ended it.
 *
 * Asynchronous on purpose, and the one way tests run a child process: a synchronous spawn blocks
 * the test worker's event loop, and a worker that cannot answer the runner for 60 s fails the
 * whole run ("Timeout calling onTaskUpdate").
 */
export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  options: {
    readonly cwd?: string
    readonly env?: NodeJS.ProcessEnv
    readonly timeout?: number
  } = {}
): Promise<Run> =>
  new Promise<Run>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? repoRoot,
      env: options.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
      timeout: options.timeout ?? 60_000,
      // A child past its time is stopped for certain: a hung one may ignore SIGTERM.
      killSignal: "SIGKILL"
    })
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.on("error", reject)
    child.on("close", (code) =>
      resolve({
        code,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8")
      }))
  })

/** The environment a child process gets: the runner's, without its Node options or `drop`. */
export const childEnv = (
  extra: Readonly<Record<string, string>> = {},
  drop: ReadonlyArray<string> = []
): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(
    // npm_command: npx sets it, and the CLI then suggests `npx engram …` (a test names it when it means to).
    Object.entries(process.env).filter(([key]) =>
      key !== "NODE_OPTIONS" && key !== "npm_command" && !drop.includes(key)
    )
  ),
  NO_COLOR: "1",
  ...extra
})

/**
 * Runs `engram ...args` with `extra` added to its environment. The store fallbacks `ENGRAM_DB`
 * and `ENGRAM_PG_URL` are never inherited (CI exports `ENGRAM_PG_URL` for the PostgreSQL tests):
 * a test that wants them passes them here.
 */
export const engramWithEnv = (
  extra: Readonly<Record<string, string>>,
  ...args: ReadonlyArray<string>
): Promise<Run> => engramWithin(60_000, extra, ...args)

/**
 * `engramWithEnv` for a command allowed `timeout` ms instead of 60 s (the eval runs hundreds of
 * turns, and a loaded CI machine must not kill it half way).
 */
export const engramWithin = (
  timeout: number,
  extra: Readonly<Record<string, string>>,
  ...args: ReadonlyArray<string>
): Promise<Run> =>
  runProcess(process.execPath, engramArgs(args).slice(1), {
    env: childEnv(extra, ["ENGRAM_DB", "ENGRAM_PG_URL", "ENGRAM_LANGUAGE"]),
    timeout
  })

/**
 * Starts a long-running `engram ...args` (`serve`, `mcp --http`) and resolves, once it printed
 * its first line on stdout (the ready line), with that line and a `stop` that ends it (SIGTERM)
 * and waits for it to exit. Rejects when it exits before it is ready.
 */
export const startEngram = (
  args: ReadonlyArray<string>,
  options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {}
): Promise<{ readonly line: string; readonly stop: () => Promise<void> }> => {
  const [node, ...rest] = engramArgs(args)
  const child = spawn(node!, rest, {
    cwd: options.cwd ?? repoRoot,
    env: options.env ?? childEnv({}, ["ENGRAM_DB", "ENGRAM_PG_URL", "ENGRAM_LANGUAGE"]),
    stdio: ["ignore", "pipe", "pipe"]
  })
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
  return new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", (line) =>
      resolve({
        line,
        stop: () => {
          child.kill("SIGTERM")
          return exited
        }
      }))
    child.once(
      "exit",
      (code) => reject(new Error(`engram ${args.join(" ")} exited ${code} before it was ready: ${stderr}`))
    )
  })
}

/** Runs `engram ...args --json` and parses stdout, failing loudly when the command failed. */
export const engramJson = async (...args: ReadonlyArray<string>): Promise<unknown> => {
  const run = await engram(...args, "--json")
  if (run.code !== 0) throw new Error(`engram ${args.join(" ")} exited ${run.code}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

/** A fresh temporary directory, removed by the returned cleanup. */
export const tempDir = (): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = mkdtempSync(Path.join(tmpdir(), "engram-cli-"))
  // Retries cover a child process that is still closing its store when the test ends.
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }) }
}

/**
 * A record as `--json` prints it: the record schema's encoded form plus what is derived — the
 * trust tier, the poisoning screen's flag and the source turns.
 */
export const JsonRecord = Schema.extend(
  Schema.encodedSchema(MemoryRecord.MemoryRecord),
  Schema.Struct({
    trustTier: MemoryRecord.TrustTier,
    flagged: Schema.Boolean,
    source: Schema.optional(Schema.Struct({
      session: Schema.String,
      hashed: Schema.Boolean,
      turns: Schema.optional(Schema.Struct({ first: Schema.Number, last: Schema.Number }))
    }))
  })
)

const decodeJsonRecord = Schema.decodeUnknownSync(JsonRecord)
const decodeRecord = Schema.decodeUnknownSync(MemoryRecord.MemoryRecord)

/** Decodes one `--json` record: it must be exactly the record schema's encoding plus `trustTier`. */
export const decodeRecordJson = (
  json: unknown
): { readonly record: MemoryRecord.MemoryRecord; readonly trustTier: MemoryRecord.TrustTier } => {
  const { flagged: _flagged, source: _source, trustTier, ...encoded } = decodeJsonRecord(json, {
    onExcessProperty: "error"
  })
  return { record: decodeRecord(encoded, { onExcessProperty: "error" }), trustTier }
}

/** The command was refused with exactly one line on stderr, containing `problem`. */
export const expectRefused = (run: Run, problem: string, code = 1) => {
  expect(run.stdout).toBe("")
  const lines = run.stderr.split("\n").filter((line) => line.length > 0)
  expect(lines).toHaveLength(1)
  expect(lines[0]).toMatch(/^engram: /)
  expect(lines[0]).toContain(problem)
  expect(run.code).toBe(code)
}
