/**
 * Helpers for the reliability suite: running TypeScript worker processes against the workspace
 * sources, as a user's separate processes would.
 */
import * as NodePath from "node:path"
import { childEnv, engramArgs, type Run, runProcess } from "../../packages/cli/test/utilities.js"

const root = NodePath.resolve(import.meta.dirname, "../..")

/** The node arguments that run a TypeScript file of this repository from source. */
export const tsNode = (script: string, args: ReadonlyArray<string>): ReadonlyArray<string> => [
  "--conditions=engram-source",
  "--import",
  "tsx",
  NodePath.resolve(import.meta.dirname, script),
  ...args
]

/** Runs `engram ...args` from source, with the user's environment minus the runner's Node options. */
export const engram = (...args: ReadonlyArray<string>) =>
  runProcess(process.execPath, engramArgs(args).slice(1), { cwd: root, env: childEnv(), timeout: 120_000 })

/** Runs a worker to its end (killed after `timeoutMs`); resolves with its exit code and output. */
export const runWorker = (script: string, args: ReadonlyArray<string>, timeoutMs = 120_000): Promise<Run> =>
  runProcess(process.execPath, tsNode(script, args), { cwd: root, env: childEnv(), timeout: timeoutMs })

/** A whole-number setting from the environment (the soak run raises the CI defaults). */
export const envInt = (name: string, fallback: number): number => {
  const raw = process.env[name]
  return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : fallback
}
