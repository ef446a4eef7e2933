/**
 * Runs once before the test files: bundles the `engram` CLI from source as it ships
 * (scripts/cliBundle.ts: its chunks and the console `engram serve` serves), so the many CLI tests
 * start that bundle instead of running every command through tsx (see ./bundle.ts). Test files
 * read its path with `inject("engramBin")`.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import type { TestProject } from "vitest/node"
import { bundleCli } from "../../scripts/cliBundle.js"
import { bundleDir } from "./bundle.js"

declare module "vitest" {
  export interface ProvidedContext {
    /** The bundled `engram` CLI (packages/cli/src/bin.ts), run as `node <engramBin> ...args`. */
    readonly engramBin: string
  }
}

export default async function setup(project: TestProject) {
  const outdir = bundleDir("cli")
  await bundleCli(outdir)
  project.provide("engramBin", NodePath.join(outdir, "bin.js"))
  return () => NodeFs.rmSync(outdir, { recursive: true, force: true })
}
