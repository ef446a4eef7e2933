/**
 * Runs once before the test files: bundles the `engram` CLI from source as it ships
 * (scripts/cliBundle.ts), so the many CLI tests start that bundle instead of running every command
 * through tsx (see ./bundle.ts). Test files read
 * its path with `inject("engramBin")`.
 */
import * as NodeFs from "node:fs"
import type { TestProject } from "vitest/node"
import { bundleDir, bundleEntry } from "./bundle.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The bundled `engram` CLI (packages/cli/src/bin.ts), run as `node <engramBin> ...args`. */
    readonly engramBin: string
  }
}

export default async function setup(project: TestProject) {
  const outdir = bundleDir("cli")
  project.provide("engramBin", await bundleEntry("packages/cli/src/bin.ts", outdir))
  return () => NodeFs.rmSync(outdir, { recursive: true, force: true })
}
