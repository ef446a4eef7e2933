#!/usr/bin/env node
// The `engram` command as npm links it. This file is committed, so it exists before the build does:
// npm does not link a bin whose file is missing, and `npm ci` on a fresh clone links bins before
// its `prepare` step bundles the CLI. It runs the bundled CLI (scripts/cliBundle.ts writes it), or
// says how to build it.
import { existsSync } from "node:fs"

const compiled = new URL("../dist/engram/bin.js", import.meta.url)
if (!existsSync(compiled)) {
  console.error("engram: the CLI is not built yet: run `npm run prepare` (or `npm run engram -- …` to run it from source)")
  process.exit(1)
}
await import(compiled.href)
