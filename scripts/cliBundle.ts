/**
 * The `engram` executable as it ships: `packages/cli/src/bin.ts` and everything it imports —
 * Effect, `@effect/*` and the workspace packages, from their sources — bundled by esbuild into
 * `packages/cli/dist/engram/bin.js`, split at every dynamic `import()` into chunks
 * (`dist/engram/chunks/`), so a command loads only the chunks it uses (decision 0063).
 *
 * Left outside the bundle, resolved at run time: better-sqlite3 (a native addon) and pg (with its
 * optional pg-native).
 *
 * `npm run build` (the CLI's build step) runs it; `npm run bench -- cli` calls {@link bundleCli}
 * into a directory of its own.
 */
import { build } from "esbuild"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** Modules the bundle imports at run time instead of carrying them. */
// sqlite-vec finds its platform binary through import.meta.resolve from its own module.
export const EXTERNAL: ReadonlyArray<string> = ["better-sqlite3", "pg", "pg-native", "sqlite-vec"]

/** Where `npm run build` writes the executable (the committed `bin/engram.js` runs it). */
export const DEFAULT_OUTDIR = NodePath.join(repoRoot, "packages/cli/dist/engram")

/**
 * Bundles `entryPoints` (output name → path from the repository root) into `outdir` the way the
 * executable is bundled: the workspace sources, split at every dynamic `import()`, externals left
 * to Node. Resolves with the bytes written per file. The bundle imports its externals by bare
 * name, so `outdir` must sit where they resolve. The tests bundle their worker processes with it.
 */
export const bundle = async (
  entryPoints: Readonly<Record<string, string>>,
  outdir: string
): Promise<ReadonlyArray<readonly [string, number]>> => {
  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: { ...entryPoints },
    outdir,
    chunkNames: "chunks/[name]-[hash]",
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: "node20",
    // The sources the workspace's tests run, not another package's build.
    conditions: ["engram-source"],
    external: [...EXTERNAL],
    // CommonJS code inside the bundle (pg's dependencies, say) calls `require`.
    banner: {
      js: "import { createRequire as __engramCreateRequire } from \"node:module\"; " +
        "const require = __engramCreateRequire(import.meta.url);"
    },
    // Whitespace and syntax only: names stay as written, so errors and stack traces still read.
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: "none",
    metafile: true,
    logLevel: "warning"
  })
  return Object.entries(result.metafile.outputs).map(([file, output]) => [file, output.bytes] as const)
}

/** Bundles the CLI into `outdir` (`bin.js` and `chunks/`); resolves with the bytes written per file. */
export const bundleCli = (outdir: string = DEFAULT_OUTDIR): Promise<ReadonlyArray<readonly [string, number]>> =>
  bundle({ bin: "packages/cli/src/bin.ts" }, outdir)

if (process.argv[1] !== undefined && NodePath.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outdir = process.argv[2] ?? DEFAULT_OUTDIR
  const files = await bundleCli(outdir)
  const bytes = files.reduce((sum, [, size]) => sum + size, 0)
  console.log(`engram bundle: ${files.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB in ${outdir}`)
}
