/**
 * Worker processes for the tests, bundled the way the `engram` executable is (scripts/cliBundle.ts):
 * a bundled child starts several times faster than one run through tsx (the CLI: about 1.2 s of
 * CPU for `memory list` against 5.9 s), and the sources are what is bundled, so an edit is what
 * a test runs. Bundles live under node_modules so that the external native modules resolve.
 */
import * as NodePath from "node:path"
import { bundle } from "../../scripts/cliBundle.js"

/** The repository root. */
export const repoRoot = NodePath.resolve(import.meta.dirname, "../..")

/** Bundles `entry` (a path from the repository root) into `outdir`; resolves with the bundled entry's path. */
export const bundleEntry = async (entry: string, outdir: string): Promise<string> => {
  const name = NodePath.basename(entry, NodePath.extname(entry))
  await bundle({ [name]: entry }, outdir)
  return NodePath.join(outdir, `${name}.js`)
}

/** A fresh directory for one run's bundles, under node_modules/.cache. */
export const bundleDir = (name: string): string =>
  NodePath.join(repoRoot, "node_modules/.cache/engram-tests", `${name}-${process.pid}-${Date.now()}`)
