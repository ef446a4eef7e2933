#!/usr/bin/env node
/**
 * The `engram` executable.
 *
 * A bare `engram --version` is answered here, before anything else loads; every other command line
 * loads the runner (`internal/run.ts`, one dynamic import: one entry point of the bundle for the
 * whole start-up path, decision 0119), whose commands in turn load only what they use. TurboFan
 * waits for the first CPU-second (`internal/startupTiering.ts`, decision 0107).
 *
 * @since 0.1.0
 */
import { holdBackOptimization } from "./internal/startupTiering.js"
import { VERSION } from "./Version.js"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  holdBackOptimization()
  const { run } = await import("./internal/run.js")
  run(process.argv)
}
