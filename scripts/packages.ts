/**
 * The shape of Engram's published packages, in one place.
 *
 * - `npm run packages:sync` rewrites each `packages/<name>/package.json` so its `exports` list every
 *   public module (every `src/*.ts` except `index.ts` and the CLI's `bin.ts`) with `types`,
 *   `import` and `default` (Effect's layout), close `internal/`, and keep the `engram-source`
 *   condition the workspace's tests and `npm run engram` resolve sources through.
 * - `npm run pack -- <dir>` builds nothing: it stages each built package (its `dist`, `src`,
 *   README, the repository's LICENSE and a package.json without the `engram-source` condition,
 *   which is for the workspace only; the CLI: its launcher and bundle, see {@link published}) and
 *   runs `npm pack` there, writing one tarball per package into `<dir>`. Run `npm run build` first.
 *
 * `test/packaging.test.ts` checks the manifests against {@link expectedManifestProblems} and
 * installs the tarballs outside the workspace.
 */
import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { RUNTIME_DEPENDENCIES } from "./cliBundle.js"

export const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..")

/** The workspace's packages, in build order (dependencies first), as in the root `workspaces`. */
export const packageDirs = (): ReadonlyArray<string> => {
  const root = JSON.parse(NodeFs.readFileSync(NodePath.join(repoRoot, "package.json"), "utf8")) as {
    readonly workspaces: ReadonlyArray<string>
  }
  return root.workspaces.map((workspace) => NodePath.join(repoRoot, workspace))
}

/** A package's public modules: `src/<Name>.ts` files other than `index.ts` and `bin.ts`. */
export const publicModules = (dir: string): ReadonlyArray<string> =>
  NodeFs.readdirSync(NodePath.join(dir, "src"))
    .filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts") && file !== "index.ts" && file !== "bin.ts")
    .map((file) => file.slice(0, -3))
    .sort()

const entry = (module: string) => ({
  "engram-source": `./src/${module}.ts`,
  types: `./dist/${module}.d.ts`,
  import: `./dist/${module}.js`,
  default: `./dist/${module}.js`
})

/** The `exports` map a package must carry. */
export const expectedExports = (dir: string): Record<string, unknown> => ({
  ".": entry("index"),
  ...Object.fromEntries(publicModules(dir).map((module) => [`./${module}`, entry(module)])),
  "./internal/*": null,
  "./package.json": "./package.json"
})

/** The packages whose versions are pinned to each other: the dependencies named `@engram/…`. */
const isEngram = (name: string) => name.startsWith("@engram/")
/** Shared with the application: one copy each, so they are peers. */
export const isPeer = (name: string) => name === "effect" || name.startsWith("@effect/") || name === "vitest"

export interface Manifest {
  readonly name: string
  readonly version: string
  readonly description?: string
  readonly main?: string
  readonly types?: string
  readonly files?: ReadonlyArray<string>
  readonly exports?: Record<string, unknown>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly devDependencies?: Record<string, string>
  readonly bin?: Record<string, string>
}

export const readManifest = (dir: string): Manifest =>
  JSON.parse(NodeFs.readFileSync(NodePath.join(dir, "package.json"), "utf8")) as Manifest

/** Everything wrong with the packages' manifests, as sentences; empty when they are right. */
export const expectedManifestProblems = (): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const dirs = packageDirs()
  const version = readManifest(dirs[0]!).version
  for (const dir of dirs) {
    const manifest = readManifest(dir)
    const name = manifest.name
    if (manifest.version !== version) problems.push(`${name} is at ${manifest.version}, not ${version}`)
    if (JSON.stringify(manifest.exports) !== JSON.stringify(expectedExports(dir))) {
      problems.push(`${name}: exports do not list exactly its public modules (run npm run packages:sync)`)
    }
    if (manifest.types !== "./dist/index.d.ts") problems.push(`${name}: no top-level "types"`)
    if (manifest.main !== "./dist/index.js") problems.push(`${name}: no top-level "main"`)
    for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
      if (isPeer(dependency)) problems.push(`${name}: ${dependency} must be a peer dependency`)
      if (isEngram(dependency) && range !== version) problems.push(`${name}: ${dependency}@${range} is not ${version}`)
    }
    for (const [dependency, range] of Object.entries(manifest.peerDependencies ?? {})) {
      if (manifest.devDependencies?.[dependency] !== range) {
        problems.push(`${name}: peer ${dependency} is not also a devDependency at ${range}`)
      }
      if (range === "latest" || range === "*") problems.push(`${name}: ${dependency} has no explicit range`)
    }
    for (const file of ["README.md"]) {
      if (!NodeFs.existsSync(NodePath.join(dir, file))) problems.push(`${name}: no ${file}`)
    }
  }
  return problems
}

const sortKeys = (record: Record<string, string> | undefined) =>
  record === undefined || Object.keys(record).length === 0
    ? undefined
    : Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)))

/** Rewrites every manifest into the expected shape (exports, top-level entry points, peers). */
export const sync = (): void => {
  for (const dir of packageDirs()) {
    const manifest = readManifest(dir)
    const dependencies: Record<string, string> = {}
    const peers: Record<string, string> = { ...manifest.peerDependencies }
    const dev: Record<string, string> = { ...manifest.devDependencies }
    for (const [dependency, range] of Object.entries(manifest.dependencies ?? {})) {
      if (isPeer(dependency)) peers[dependency] = range
      else dependencies[dependency] = range
    }
    for (const [dependency, range] of Object.entries(peers)) dev[dependency] = range
    const {
      bin,
      dependencies: _d,
      devDependencies: _dd,
      exports: _e,
      main: _m,
      peerDependencies: _p,
      types: _t,
      ...rest
    } = manifest
    const next = {
      ...rest,
      // A bin's launcher lives in bin/ (committed, so npm links it before the build exists).
      files: [...(bin === undefined ? [] : ["bin"]), "dist", "src", "README.md", "LICENSE"],
      main: "./dist/index.js",
      types: "./dist/index.d.ts",
      exports: expectedExports(dir),
      ...(bin === undefined ? {} : { bin }),
      ...(sortKeys(dependencies) === undefined ? {} : { dependencies: sortKeys(dependencies) }),
      ...(sortKeys(peers) === undefined ? {} : { peerDependencies: sortKeys(peers) }),
      ...(sortKeys(dev) === undefined ? {} : { devDependencies: sortKeys(dev) })
    }
    NodeFs.writeFileSync(NodePath.join(dir, "package.json"), JSON.stringify(next, null, 2) + "\n")
  }
}

/** Drops the workspace-only `engram-source` condition from an exports map. */
export const publishedExports = (exports: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(exports).map(([key, value]) => [
      key,
      value !== null && typeof value === "object"
        ? Object.fromEntries(Object.entries(value).filter(([condition]) => condition !== "engram-source"))
        : value
    ])
  )

/**
 * The version of `name` the workspace resolves (what the bundle was built and tested against), read
 * from its installed directory: `require.resolve("<name>/package.json")` fails for a package whose
 * `exports` leaves out its manifest (sqlite-vec).
 */
const workspaceVersion = (name: string): string =>
  (JSON.parse(NodeFs.readFileSync(NodePath.join(repoRoot, "node_modules", name, "package.json"), "utf8")) as {
    version: string
  }).version

/**
 * What a package publishes: its manifest without the workspace's scripts, devDependencies and
 * `engram-source` condition, and the parts of the package it ships.
 *
 * A package with a `bin` (the CLI) ships its executable only: the launcher (`bin/`) and the bundle
 * (`dist/engram/`, every workspace package and Effect inside it, decision 0078), depending on the
 * bundle's run-time externals alone ({@link RUNTIME_DEPENDENCIES}, at the range of the version
 * the workspace built it with) — no `@engram/*` package, no peer, nothing to import.
 */
export const published = (
  manifest: Manifest & { readonly scripts?: unknown }
): { readonly manifest: Record<string, unknown>; readonly parts: ReadonlyArray<string> } => {
  const { devDependencies: _dev, scripts: _scripts, ...rest } = manifest
  if (manifest.bin === undefined) {
    return {
      manifest: { ...rest, exports: publishedExports(manifest.exports ?? {}) },
      parts: (manifest.files ?? []).filter((part) => part !== "README.md" && part !== "LICENSE")
    }
  }
  const {
    dependencies: _d,
    exports: _e,
    files: _f,
    main: _m,
    peerDependencies: _p,
    types: _t,
    ...executable
  } = rest as Manifest & Record<string, unknown>
  return {
    manifest: {
      ...executable,
      files: ["bin", "dist/engram", "README.md", "LICENSE"],
      engines: { node: ">=20" },
      dependencies: Object.fromEntries(RUNTIME_DEPENDENCIES.map((name) => [name, `^${workspaceVersion(name)}`]))
    },
    parts: ["bin", "dist/engram"]
  }
}

/**
 * Stages every built package and packs it into `outDir`; returns the tarballs' paths in build
 * order. Fails when a package has not been built.
 */
export const pack = (outDir: string): ReadonlyArray<string> => {
  NodeFs.mkdirSync(outDir, { recursive: true })
  const staging = NodeFs.mkdtempSync(NodePath.join(outDir, "stage-"))
  try {
    return packageDirs().map((dir) => {
      const manifest = readManifest(dir)
      if (!NodeFs.existsSync(NodePath.join(dir, "dist", "index.js"))) {
        throw new Error(`${manifest.name} is not built: run npm run build first`)
      }
      const stage = NodePath.join(staging, NodePath.basename(dir))
      NodeFs.mkdirSync(stage)
      const shipped = published(manifest)
      for (const part of shipped.parts) {
        NodeFs.cpSync(NodePath.join(dir, part), NodePath.join(stage, part), { recursive: true })
      }
      NodeFs.copyFileSync(NodePath.join(dir, "README.md"), NodePath.join(stage, "README.md"))
      NodeFs.copyFileSync(NodePath.join(repoRoot, "LICENSE"), NodePath.join(stage, "LICENSE"))
      NodeFs.writeFileSync(NodePath.join(stage, "package.json"), JSON.stringify(shipped.manifest, null, 2) + "\n")
      const output = execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", outDir], {
        cwd: stage,
        encoding: "utf8"
      })
      const [packed] = JSON.parse(output) as ReadonlyArray<{ readonly filename: string }>
      return NodePath.join(outDir, packed!.filename)
    })
  } finally {
    NodeFs.rmSync(staging, { recursive: true, force: true })
  }
}

const main = (args: ReadonlyArray<string>) => {
  const [command, target] = args
  if (command === "sync") return sync()
  if (command === "check") {
    const problems = expectedManifestProblems()
    for (const problem of problems) console.error(problem)
    process.exitCode = problems.length === 0 ? 0 : 1
    return
  }
  if (command === "pack") {
    for (const tarball of pack(NodePath.resolve(target ?? "packed"))) console.log(tarball)
    return
  }
  console.error("usage: packages.ts sync | check | pack [dir]")
  process.exitCode = 2
}

if (process.argv[1] !== undefined && NodePath.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2))
}
