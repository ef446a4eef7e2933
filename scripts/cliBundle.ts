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
 * Beside the chunks, `console/` holds the review console `engram serve` serves, bundled for the
 * browser from its TypeScript (scripts/consoleBundle.ts, decision 0160).
 *
 * `npm run build` (the CLI's build step) runs it; `npm run bench -- cli` calls {@link bundleCli}
 * into a directory of its own.
 */
import { build, buildSync, type Plugin } from "esbuild"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { bundleConsole } from "./consoleBundle.js"

const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/**
 * The packages the bundle imports at run time: the published CLI's only dependencies.
 * better-sqlite3 is a native module, and sqlite-vec finds its platform binary through
 * `import.meta.resolve` from its own module: neither can live inside a bundle.
 */
export const RUNTIME_DEPENDENCIES: ReadonlyArray<string> = ["better-sqlite3", "sqlite-vec"]

/** Modules the bundle imports at run time instead of carrying them. */
export const EXTERNAL: ReadonlyArray<string> = [
  ...RUNTIME_DEPENDENCIES,
  // `--embedder local` loads it from beside the CLI: its encoder reads weight files next to its own
  // modules, which a bundle would separate from them.
  "@engram/embedder-local",
  // pg requires these only for `pg.native` and on Cloudflare Workers; Engram uses neither.
  "pg-native",
  "pg-cloudflare",
  // The server bundles the console's TypeScript with esbuild only when it runs from the sources;
  // the bundle serves the console built beside it (console/), so it never loads esbuild.
  "esbuild"
]

/**
 * CommonJS modules the bundle does not carry inline but copies beside its chunks and `require`s on
 * first call, so a command that never calls them neither parses nor runs them. The Snowball
 * stemmers (390 kB, every language) are imported by the search tokenizer, which every memory store
 * imports, yet only writing and searching need to stem a word: core stems nothing as it loads
 * (its stop words are pinned, decision 0107), so `memory list` never requires them. The
 * confusables table (`unhomoglyph`, ~100 kB of JSON and a pattern built from it, ~17 ms to load)
 * is imported by the poisoning screen, which every record imports, yet only text outside ASCII
 * ever needs it (decision 0131). chrono-node (~150 ms to load) reads the dates a text states, which
 * only extraction and a memory save ask for (decisions 0176, 0178). Each entry names the functions callers use, offered
 * both on the stub's default export and by name; none (`[]`) when the default export is itself
 * the function.
 */
const DEFERRED: ReadonlyArray<{ readonly module: string; readonly functions: ReadonlyArray<string> }> = [
  { module: "snowball-stemmers", functions: ["newStemmer", "algorithms"] },
  { module: "unhomoglyph", functions: [] },
  // chrono-node (~150 ms to load) reads stated dates for extraction and saves only (decisions 0176, 0178).
  { module: "chrono-node", functions: ["parse"] }
]

const deferredModules: Plugin = {
  name: "engram-deferred-modules",
  setup(build) {
    for (const { functions, module } of DEFERRED) {
      const filter = new RegExp(`^${module.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)
      // The module's own file, loaded as an asset: esbuild copies it and gives its path relative to
      // the importing output file. Named .cjs: the CLI's package is an ES-module package.
      build.onResolve({ filter }, (args) => {
        if (args.namespace === "engram-deferred") {
          const file = createRequire(NodePath.join(args.resolveDir, "index.js")).resolve(module)
          // Named after the module, so the copy says what it is (chrono-node's main is index.js).
          const named = NodePath.join(NodePath.dirname(file), `${module}.cjs`)
          return { path: named, namespace: "engram-deferred-file", pluginData: file }
        }
        return { path: module, namespace: "engram-deferred", pluginData: args.resolveDir }
      })
      // The module with everything it requires (a JSON table beside it, say) as one CommonJS file.
      build.onLoad({ filter: /.*/, namespace: "engram-deferred-file" }, (args) => ({
        contents: buildSync({
          entryPoints: [args.pluginData as string],
          bundle: true,
          format: "cjs",
          platform: "node",
          target: "node20",
          write: false,
          logLevel: "silent"
        }).outputFiles[0]!.contents,
        loader: "file"
      }))
      // Each module's own stub: the path in this namespace is the module's name.
      build.onLoad({ filter, namespace: "engram-deferred" }, (args) => ({
        resolveDir: args.pluginData as string,
        loader: "js",
        contents: [
          `import file from ${JSON.stringify(module)}`,
          `import { createRequire } from "node:module"`,
          `import { fileURLToPath } from "node:url"`,
          `let loaded`,
          `const real = () => (loaded ??= createRequire(import.meta.url)(fileURLToPath(new URL(file, import.meta.url))))`,
          functions.length === 0
            ? `export default (...args) => real()(...args)`
            : [
              `export default { ${functions.map((f) => `${f}: (...args) => real().${f}(...args)`).join(", ")} }`,
              ...functions.map((f) => `export const ${f} = (...args) => real().${f}(...args)`)
            ].join("\n")
        ].join("\n")
      }))
    }
  }
}

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
  outdir: string,
  metafile?: string
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
    plugins: [deferredModules],
    assetNames: "chunks/[name]-[hash]",
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
  if (metafile !== undefined) NodeFs.writeFileSync(metafile, JSON.stringify(result.metafile))
  return Object.entries(result.metafile.outputs).map(([file, output]) => [file, output.bytes] as const)
}

/**
 * Bundles the CLI into `outdir` (`bin.js`, `chunks/` and the console `engram serve` serves,
 * `console/`); resolves with the bytes written per file.
 * The chunks of an earlier build go first: their names carry content hashes, so a rebuild would
 * otherwise leave every old chunk beside the new ones, and `npm run pack` would ship them.
 */
export const bundleCli = async (
  outdir: string = DEFAULT_OUTDIR,
  metafile?: string
): Promise<ReadonlyArray<readonly [string, number]>> => {
  NodeFs.rmSync(NodePath.join(outdir, "chunks"), { recursive: true, force: true })
  const files = await bundle({ bin: "packages/cli/src/bin.ts" }, outdir, metafile)
  // `engram serve`'s console, where the server's code (in chunks/) looks for it: ../console/.
  const consoleDir = NodePath.join(outdir, "console")
  const assets = await bundleConsole(consoleDir)
  return [
    ...files,
    ...assets.map((name) =>
      [
        NodePath.relative(repoRoot, NodePath.join(consoleDir, name)),
        NodeFs.statSync(NodePath.join(consoleDir, name)).size
      ] as const
    )
  ]
}

if (process.argv[1] !== undefined && NodePath.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // `--metafile <file>` also writes esbuild's metafile: which sources each chunk holds and imports.
  const args = process.argv.slice(2)
  const at = args.indexOf("--metafile")
  const metafile = at === -1 ? undefined : args[at + 1]
  const outdir = args.filter((_, i) => at === -1 || (i !== at && i !== at + 1))[0] ?? DEFAULT_OUTDIR
  // A line before the work, so `npm ci` (whose prepare step this is) shows what it is doing.
  console.log(`engram bundle: bundling the CLI and the console into ${outdir}…`)
  const started = Date.now()
  const files = await bundleCli(outdir, metafile)
  const bytes = files.reduce((sum, [, size]) => sum + size, 0)
  console.log(
    `engram bundle: ${files.length} files, ${(bytes / 1024 / 1024).toFixed(1)} MB in ${outdir} ` +
      `(${((Date.now() - started) / 1000).toFixed(1)} s)`
  )
}
