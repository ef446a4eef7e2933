/**
 * Helpers for the reliability suite: running TypeScript worker processes against the workspace
 * sources, as a user's separate processes would.
 */
import * as ChildProcess from "node:child_process"
import * as NodePath from "node:path"

const root = NodePath.resolve(import.meta.dirname, "../..")

/** The node arguments that run a TypeScript file of this repository from source. */
export const tsNode = (script: string, args: ReadonlyArray<string>): ReadonlyArray<string> => [
  "--conditions=engram-source",
  "--import",
  "tsx",
  NodePath.resolve(import.meta.dirname, script),
  ...args
]

/**
 * Runs `engram ...args` from source, asynchronously (a synchronous spawn would stall the test
 * runner for the whole command), with the user's environment minus the runner's Node options.
 */
export const engram = (...args: ReadonlyArray<string>) => runWorker("../../packages/cli/src/bin.ts", args)

/** Runs a worker to its end (killed after `timeoutMs`); resolves with its exit code and output. */
export const runWorker = (
  script: string,
  args: ReadonlyArray<string>,
  timeoutMs = 120_000
): Promise<{ readonly code: number | null; readonly stdout: string; readonly stderr: string }> =>
  new Promise((resolve, reject) => {
    const env = {
      ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS")),
      NO_COLOR: "1"
    }
    const child = ChildProcess.spawn(process.execPath, tsNode(script, args), { cwd: root, env })
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs)
    child.on("exit", () => clearTimeout(timer))
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })

/** A whole-number setting from the environment (the soak run raises the CI defaults). */
export const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name]
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : fallback
}
