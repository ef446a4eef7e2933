/**
 * Runs the real `engram` command as a child process, the way `npm run engram` does: Node with
 * the `engram-source` condition and tsx, from the repository root.
 */
import { expect } from "@effect/vitest"
import { MemoryRecord } from "@engram/core"
import * as Schema from "effect/Schema"
import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../..")
const bin = Path.join(repoRoot, "packages/cli/src/bin.ts")

export interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** The command line (executable first) that runs `engram ...args` from source. */
export const engramArgs = (args: ReadonlyArray<string>): ReadonlyArray<string> => [
  process.execPath,
  "--conditions=engram-source",
  "--import",
  "tsx",
  bin,
  ...args
]

/** Runs `engram ...args` and waits for it. */
export const engram = (...args: ReadonlyArray<string>): Run => engramWithEnv({}, ...args)

/**
 * Runs `engram ...args` with `extra` added to its environment. The store fallbacks `ENGRAM_DB`
 * and `ENGRAM_PG_URL` are never inherited (CI exports `ENGRAM_PG_URL` for the PostgreSQL tests):
 * a test that wants them passes them here.
 */
export const engramWithEnv = (extra: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>): Run => {
  // The child gets its own Node options (the test runner's are not the user's).
  const inherited = Object.entries(process.env).filter(([key]) =>
    key !== "NODE_OPTIONS" && key !== "ENGRAM_DB" && key !== "ENGRAM_PG_URL"
  )
  const env = { ...Object.fromEntries(inherited), NO_COLOR: "1", ...extra }
  const result = spawnSync(process.execPath, engramArgs(args).slice(1), {
    cwd: repoRoot,
    encoding: "utf8",
    env,
    timeout: 60_000,
    // Listings of thousands of records print megabytes of JSON.
    maxBuffer: 64 * 1024 * 1024
  })
  return { code: result.status, stdout: result.stdout, stderr: result.stderr }
}

/** Runs `engram ...args --json` and parses stdout, failing loudly when the command failed. */
export const engramJson = (...args: ReadonlyArray<string>): unknown => {
  const run = engram(...args, "--json")
  if (run.code !== 0) throw new Error(`engram ${args.join(" ")} exited ${run.code}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

/** A fresh temporary directory, removed by the returned cleanup. */
export const tempDir = (): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = mkdtempSync(Path.join(tmpdir(), "engram-cli-"))
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A record as `--json` prints it: the record schema's encoded form plus the derived trust tier. */
export const JsonRecord = Schema.extend(
  Schema.encodedSchema(MemoryRecord.MemoryRecord),
  Schema.Struct({ trustTier: MemoryRecord.TrustTier })
)

const decodeJsonRecord = Schema.decodeUnknownSync(JsonRecord)
const decodeRecord = Schema.decodeUnknownSync(MemoryRecord.MemoryRecord)

/** Decodes one `--json` record: it must be exactly the record schema's encoding plus `trustTier`. */
export const decodeRecordJson = (
  json: unknown
): { readonly record: MemoryRecord.MemoryRecord; readonly trustTier: MemoryRecord.TrustTier } => {
  const { trustTier, ...encoded } = decodeJsonRecord(json, { onExcessProperty: "error" })
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
