/**
 * The console's build step: its TypeScript modules (`packages/server/src/console/`) bundled by
 * esbuild into `app.js`, with the page and the style sheet, written into a folder the server
 * serves (`packages/server/src/internal/consoleBuild.ts` holds the recipe; decision 0160).
 *
 *   node --import tsx scripts/consoleBundle.ts [outDir]   # default: packages/server/dist/console
 *
 * The server package's build runs it; `scripts/cliBundle.ts` writes the CLI bundle's copy.
 */
import * as Effect from "effect/Effect"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { write } from "../packages/server/src/internal/consoleBuild.js"

const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** The console's sources. */
export const CONSOLE_SOURCES = NodePath.join(repoRoot, "packages/server/src/console")

/** Where the server package's build puts the console: `console/` beside its compiled modules. */
export const DEFAULT_OUTDIR = NodePath.join(repoRoot, "packages/server/dist/console")

/** Bundles the console into `outDir`; resolves with the names of the files written. */
export const bundleConsole = (outDir: string = DEFAULT_OUTDIR): Promise<ReadonlyArray<string>> =>
  Effect.runPromise(write(CONSOLE_SOURCES, outDir))

if (process.argv[1] !== undefined && NodePath.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outDir = NodePath.resolve(process.argv[2] ?? DEFAULT_OUTDIR)
  const files = await bundleConsole(outDir)
  console.log(`engram console: ${files.join(", ")} in ${outDir}`)
}
