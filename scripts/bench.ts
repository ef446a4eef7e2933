/**
 * `npm run bench -- <name> [args…]`: runs the benchmark `scripts/bench/<name>.ts`.
 *
 * A benchmark module exports `run(args)`, returning a promise that settles when it has printed
 * its figures.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"

interface BenchModule {
  readonly run: (args: ReadonlyArray<string>) => Promise<void>
}

const directory = NodePath.join(NodePath.dirname(NodeUrl.fileURLToPath(import.meta.url)), "bench")
const available = NodeFs.readdirSync(directory)
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -3))
  .sort()

const [name, ...args] = process.argv.slice(2)
if (name === undefined || name === "--help" || !available.includes(name)) {
  const usage = `usage: npm run bench -- <${
    available.join(" | ")
  }> [options]   (npm run bench -- <name> --help for its options)`
  if (name === undefined || name === "--help") console.log(usage)
  else console.error(usage)
  process.exit(name === undefined || name === "--help" ? 0 : 1)
}

const module = (await import(NodeUrl.pathToFileURL(NodePath.join(directory, `${name}.ts`)).href)) as BenchModule
await module.run(args)
