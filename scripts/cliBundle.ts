/**
 * The `engram` executable as it ships: `packages/cli/src/bin.ts` and everything it imports —
 * Effect, `@effect/*` and the workspace packages, from their sources — bundled by esbuild into
 * `packages/cli/dist/engram/bin.js`, split at every dynamic `import()` into chunks
 * (`dist/engram/chunks/`), so a command loads only the chunks it uses (decision 0063).
 *
 * Left outside the bundle, resolved at run time: better-sqlite3 only — a native addon, compiled or
 * fetched for the user's Node.js by its install script, so the published CLI depends on it
 * (decision 0078). pg's optional native binding (pg-native) and its Cloudflare socket
 * (pg-cloudflare) are never loaded by Engram and stay unresolved. Everything else, pg included, is
 * inside the bundle: installing the CLI installs one package and better-sqlite3.
 *
 * `snowball-stemmers` (850 KB, the stemmers of every language) is copied beside the chunks and
 * required the first time a word is stemmed, so a command that stems nothing (`memory list`) does
 * not parse it.
 *
 * `npm run build` (the CLI's build step) runs it; `npm run bench -- cli` calls {@link bundleCli}
 * into a directory of its own.
 */
import { build, type Plugin } from "esbuild"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** The packages the bundle imports at run time: the published CLI's only dependencies. */
export const RUNTIME_DEPENDENCIES: ReadonlyArray<string> = ["better-sqlite3"]

/** Modules the bundle imports at run time instead of carrying them. */
export const EXTERNAL: ReadonlyArray<string> = [
  ...RUNTIME_DEPENDENCIES,
  // pg requires these only for `pg.native` and on Cloudflare Workers; Engram uses neither.
  "pg-native",
  "pg-cloudflare"
]

const workspaceRequire = createRequire(NodePath.join(repoRoot, "package.json"))

/** Where the bundle keeps `snowball-stemmers`, beside its chunks. */
const SNOWBALL_FILE = "snowball-stemmers.cjs"

/**
 * `import snowball from "snowball-stemmers"` becomes an object whose `newStemmer` requires the
 * package's file (copied beside the chunks) on first use: parsing it costs every command, and
 * only the commands that tokenize text call it.
 */
const lazySnowball = (outdir: string): Plugin => ({
  name: "lazy-snowball-stemmers",
  setup(build) {
    build.onResolve(
      { filter: /^snowball-stemmers$/ },
      () => ({ path: "snowball-stemmers", namespace: "lazy-snowball" })
    )
    build.onResolve({ filter: /^\.\/snowball-stemmers\.cjs$/ }, (args) => ({ path: args.path, external: true }))
    build.onLoad({ filter: /.*/, namespace: "lazy-snowball" }, () => ({
      contents: `let loaded
const load = () => loaded ??= require("./${SNOWBALL_FILE}")
export default {
  newStemmer: (language) => load().newStemmer(language),
  algorithms: () => load().algorithms()
}
`,
      loader: "js"
    }))
    build.onEnd(() => {
      NodeFs.mkdirSync(NodePath.join(outdir, "chunks"), { recursive: true })
      NodeFs.copyFileSync(
        workspaceRequire.resolve("snowball-stemmers"),
        NodePath.join(outdir, "chunks", SNOWBALL_FILE)
      )
    })
  }
})

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
    plugins: [lazySnowball(outdir)],
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
