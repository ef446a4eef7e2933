/**
 * The packages as a user gets them: every workspace package is built (`npm run build`) and packed
 * (`npm run pack`'s staging: the tarball's manifest has no workspace-only condition), the
 * tarballs are installed into a fresh project under the OS temp directory — outside the
 * workspace, so nothing resolves through it — and there:
 *
 * - the manifests list every public module, close `internal/`, keep `effect` and `@effect/*` as
 *   peers (one copy of `effect` in the install) and move their versions together;
 * - a program importing the packages (a subpath and `@engram/runtime/testing` included)
 *   typechecks under `strict` with `module: NodeNext`, then runs: it writes, searches, digests
 *   (`@engram/migrate`), projects and runs one scripted turn on `SqliteEngram.layer`;
 * - `npx engram demo` runs from the installed CLI.
 *
 * The install never builds or downloads SQLite's native module: it runs with `--ignore-scripts`
 * and takes the workspace's compiled `better_sqlite3.node`, pinned to the same better-sqlite3
 * version (an install script that downloads a prebuilt binary would hang without the internet).
 * Everything else comes from npm's cache when it can (`--prefer-offline`).
 */
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Run, runProcess } from "../packages/cli/test/utilities.js"
import { expectedManifestProblems, packageDirs, readManifest, repoRoot } from "../scripts/packages.js"

const MINUTES = 60_000

// The child processes get a clean environment: neither the test runner's Node options nor the
// npm variables of the `npm test` that started it.
const env = {
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) =>
      key !== "NODE_OPTIONS" && !key.toLowerCase().startsWith("npm_") && !key.startsWith("VITEST")
    )
  ),
  NO_COLOR: "1"
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string, timeout = 5 * MINUTES) =>
  runProcess(command, args, { cwd, env, timeout })

const must = async (what: string, pending: Promise<Run>): Promise<Run> => {
  const result = await pending
  if (result.code !== 0) throw new Error(`${what} exited ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result
}

const workspaceRequire = createRequire(NodePath.join(repoRoot, "package.json"))
const workspaceVersion = (name: string) =>
  (JSON.parse(NodeFs.readFileSync(workspaceRequire.resolve(`${name}/package.json`), "utf8")) as { version: string })
    .version

let root = ""
let project = ""
let tarballs: ReadonlyArray<string> = []

beforeAll(async () => {
  root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-packaging-"))
  project = NodePath.join(root, "consumer")
  await must("npm run build", run("npm", ["run", "build"], repoRoot, 10 * MINUTES))
  const packed = await must(
    "npm run pack",
    run("npm", ["run", "--silent", "pack", "--", NodePath.join(root, "tarballs")], repoRoot)
  )
  tarballs = packed.stdout.split("\n").filter((line) => line.endsWith(".tgz"))
  expect(tarballs).toHaveLength(packageDirs().length)
  NodeFs.mkdirSync(NodePath.join(project, "src"), { recursive: true })
  const dependencies = Object.fromEntries(
    packageDirs().map((dir, index) => [readManifest(dir).name, `file:${tarballs[index]}`])
  )
  NodeFs.writeFileSync(
    NodePath.join(project, "package.json"),
    JSON.stringify(
      {
        name: "engram-consumer",
        private: true,
        type: "module",
        dependencies: {
          ...dependencies,
          typescript: workspaceVersion("typescript"),
          "@types/node": workspaceVersion("@types/node")
        },
        overrides: { "better-sqlite3": workspaceVersion("better-sqlite3") }
      },
      null,
      2
    )
  )
  NodeFs.writeFileSync(
    NodePath.join(project, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        strict: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        types: ["node"],
        rootDir: "src",
        outDir: "dist"
      },
      include: ["src"]
    })
  )
  NodeFs.copyFileSync(NodePath.join(repoRoot, "test/packaging/consumer.ts"), NodePath.join(project, "src/main.ts"))
  await must(
    "npm install",
    run(
      "npm",
      ["install", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"],
      project
    )
  )
  const binary = "build/Release/better_sqlite3.node"
  const from = NodePath.join(NodePath.dirname(workspaceRequire.resolve("better-sqlite3/package.json")), binary)
  const to = NodePath.join(project, "node_modules/better-sqlite3", binary)
  NodeFs.mkdirSync(NodePath.dirname(to), { recursive: true })
  NodeFs.copyFileSync(from, to)
}, 20 * MINUTES)

afterAll(() => {
  if (root !== "") NodeFs.rmSync(root, { recursive: true, force: true })
})

const findAll = (dir: string, name: string, found: Array<string> = []): Array<string> => {
  for (const entry of NodeFs.readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const path = NodePath.join(dir, entry.name)
    if (entry.name === name && NodeFs.existsSync(NodePath.join(path, "package.json"))) found.push(path)
    else findAll(path, name, found)
  }
  return found
}

describe("packed packages installed outside the workspace", () => {
  it("manifests: every public module exported, internal/ closed, peers, one version", () => {
    expect(expectedManifestProblems()).toEqual([])
  })

  it("npm ci links the engram bin in the workspace (npx engram after npm ci && npm run build)", () => {
    // npm skips a bin whose file is missing at install time; the committed launcher always exists.
    const linked = NodePath.join(repoRoot, "node_modules/.bin/engram")
    expect(NodeFs.realpathSync(linked)).toBe(NodeFs.realpathSync(NodePath.join(repoRoot, "packages/cli/bin/engram.js")))
    expect(() => NodeFs.accessSync(linked, NodeFs.constants.X_OK)).not.toThrow()
  })

  it("each tarball ships its build, README and LICENSE, without the workspace-only condition", async () => {
    for (const tarball of tarballs) {
      const files = (await runProcess("tar", ["-tzf", tarball])).stdout.split("\n")
      expect(files).toEqual(expect.arrayContaining([
        "package/README.md",
        "package/LICENSE",
        "package/dist/index.js",
        "package/dist/index.d.ts"
      ]))
      const manifest = (await runProcess("tar", ["-xzOf", tarball, "package/package.json"])).stdout
      expect(manifest).not.toContain("engram-source")
      expect(JSON.parse(manifest).exports["./internal/*"]).toBeNull()
    }
  })

  it("the install resolves every @engram package from the tarballs and holds one copy of effect", () => {
    for (const dir of packageDirs()) {
      const name = readManifest(dir).name
      const installed = JSON.parse(
        NodeFs.readFileSync(NodePath.join(project, "node_modules", name, "package.json"), "utf8")
      ) as { readonly description: string }
      expect(installed.description).toBe(readManifest(dir).description)
    }
    expect(findAll(NodePath.join(project, "node_modules"), "effect")).toEqual([
      NodePath.join(project, "node_modules", "effect")
    ])
  })

  it("a program typechecks (strict, NodeNext) and writes, searches, projects and runs a scripted turn", async () => {
    await must("tsc", run(NodePath.join(project, "node_modules/.bin/tsc"), ["-p", "."], project))
    const db = NodePath.join(root, "consumer.db")
    const output = await must("the program", run(process.execPath, ["dist/main.js", db], project))
    const result = JSON.parse(output.stdout) as {
      readonly id: string
      readonly hits: ReadonlyArray<string>
      readonly digested: number
      readonly projectedIds: ReadonlyArray<string>
      readonly turn: string
      readonly text: string | null
    }
    expect(result.hits).toEqual([result.id])
    expect(result.digested).toBe(1)
    expect(result.projectedIds).toContain(result.id)
    expect(result.turn).toBe("Completed")
    expect(result.text).toBe("You are Doug.")
    expect(NodeFs.statSync(db).size).toBeGreaterThan(0)
  })

  it("internal modules are closed to importers", async () => {
    const probe = await run(process.execPath, [
      "--input-type=module",
      "-e",
      "import('@engram/core/internal/contentKey.js').then(() => console.log('opened'), (e) => console.log(e.code))"
    ], project)
    expect(probe.stdout.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
  })

  it("npx engram demo runs from the installed CLI", async () => {
    const demo = await must("npx engram demo", run("npx", ["--no-install", "engram", "demo"], project))
    expect(demo.stdout).toMatch(/From what I remember: .*Doug/)
    expect(demo.stdout).not.toMatch(/\u001b\[/)
  })
})
