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
 *   (`@engram/migrate`), projects and runs one scripted turn on `SqliteEngram.layer`; a second
 *   one serves the review console from the installed `@engram/server` (its `dist/console/`);
 * - a project that installs `@engram/core` and `@engram/store-sqlite` alone (with `@engram/store-sql`,
 *   the SQL floor the SQLite store stands on) gets no test tooling: no vitest, vite or esbuild;
 * - the CLI's tarball alone installs globally into a temporary prefix (`npm install -g --prefix`)
 *   as the README's "Installing the CLI" says, with no `effect` package in the install (one copy,
 *   inside the bundle), and `engram demo`, `engram inspect demo-2` and `engram mcp` (initialize and
 *   list tools over stdio with the MCP SDK's client) run from it.
 *
 * The installs never build or download SQLite's native module: they run with `--ignore-scripts`
 * and take the workspace's compiled `better_sqlite3.node`, pinned to the same better-sqlite3
 * version (the install script would compile it for minutes, or hang fetching a prebuilt binary
 * without the internet). Everything else comes from npm's cache when it can (`--prefer-offline`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import * as NodeFs from "node:fs"
import { createRequire } from "node:module"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Run, runProcess } from "../packages/cli/test/utilities.js"
import { RUNTIME_DEPENDENCIES } from "../scripts/cliBundle.js"
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
/** The `npm install -g --prefix` of the CLI's tarball alone. */
let prefix = ""
let cliTarball = ""
let globalInstall = { seconds: 0, bytes: 0 }

/** The console's files as the server's build writes them (scripts/consoleBundle.ts). */
const consoleFiles = ["app.js", "console.css", "index.html"]

const npmInstall = ["--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"]

const SQLITE_BINARY = "build/Release/better_sqlite3.node"
/** Puts the workspace's compiled SQLite addon into the better-sqlite3 an install left unbuilt. */
const copySqliteBinary = (betterSqlite: string) => {
  const from = NodePath.join(NodePath.dirname(workspaceRequire.resolve("better-sqlite3/package.json")), SQLITE_BINARY)
  const to = NodePath.join(betterSqlite, SQLITE_BINARY)
  NodeFs.mkdirSync(NodePath.dirname(to), { recursive: true })
  NodeFs.copyFileSync(from, to)
}

const diskBytes = async (dir: string) => Number((await runProcess("du", ["-sb", dir])).stdout.split("\t")[0])

/** Installs the CLI's tarball, and nothing else, globally into `prefix`; times it. */
const installCliGlobally = async () => {
  const started = Date.now()
  await must(
    "npm install -g the CLI tarball",
    run("npm", ["install", "-g", "--prefix", prefix, ...npmInstall, cliTarball], root)
  )
  globalInstall = { seconds: (Date.now() - started) / 1000, bytes: await diskBytes(prefix) }
  copySqliteBinary(NodePath.join(prefix, "lib/node_modules/@engram/cli/node_modules/better-sqlite3"))
}

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
  cliTarball = tarballs.find((tarball) => NodePath.basename(tarball).startsWith("engram-cli-"))!
  prefix = NodePath.join(root, "global")
  const cli = installCliGlobally()
  NodeFs.mkdirSync(NodePath.join(project, "src"), { recursive: true })
  // The libraries; the CLI is installed on its own (below).
  const dependencies = Object.fromEntries(
    packageDirs().flatMap((dir, index) =>
      tarballs[index] === cliTarball ? [] : [[readManifest(dir).name, `file:${tarballs[index]}`]]
    )
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
  NodeFs.copyFileSync(
    NodePath.join(repoRoot, "test/packaging/consoleServer.ts"),
    NodePath.join(project, "src/console.ts")
  )
  await must("npm install", run("npm", ["install", ...npmInstall], project))
  copySqliteBinary(NodePath.join(project, "node_modules/better-sqlite3"))
  await cli
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
      const manifest = (await runProcess("tar", ["-xzOf", tarball, "package/package.json"])).stdout
      expect(manifest).not.toContain("engram-source")
      expect(files).toEqual(expect.arrayContaining(["package/README.md", "package/LICENSE"]))
      if (tarball === cliTarball) {
        // The executable only: its launcher and bundle (the console `engram serve` serves
        // included), no modules to import.
        expect(files).toEqual(
          expect.arrayContaining([
            "package/bin/engram.js",
            "package/dist/engram/bin.js",
            ...consoleFiles.map((file) => `package/dist/engram/console/${file}`)
          ])
        )
        expect(files.filter((file) => file.startsWith("package/src/"))).toEqual([])
        expect(JSON.parse(manifest).exports).toBeUndefined()
      } else {
        expect(files).toEqual(expect.arrayContaining(["package/dist/index.js", "package/dist/index.d.ts"]))
        expect(JSON.parse(manifest).exports["./internal/*"]).toBeNull()
      }
      // The server ships its console built: the page, the bundled module and the style sheet,
      // and no console TypeScript compiled for Node.
      if (NodePath.basename(tarball).startsWith("engram-server-")) {
        const built = files.filter((file) => file.startsWith("package/dist/console/")).sort()
        expect(built).toEqual(consoleFiles.map((file) => `package/dist/console/${file}`).sort())
      }
    }
  })

  it("the install resolves every @engram library from the tarballs and holds one copy of effect", () => {
    for (const dir of packageDirs().filter((dir) => readManifest(dir).bin === undefined)) {
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

  it("a program typechecks (strict, NodeNext) and writes, searches, projects and runs a scripted turn", {
    timeout: 5 * MINUTES
  }, async () => {
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

  it("the installed server serves its console: the page, the bundled module and the style sheet", async () => {
    const output = await must(
      "the console program",
      run(process.execPath, ["dist/console.js", NodePath.join(root, "console.db")], project)
    )
    const answers = JSON.parse(output.stdout.trim().split("\n").at(-1)!) as ReadonlyArray<
      { readonly path: string; readonly status: number; readonly type: string | null; readonly chars: number }
    >
    expect(answers.map(({ chars: _, ...answer }) => answer)).toEqual([
      { path: "/", status: 200, type: "text/html; charset=utf-8" },
      { path: "/console/app.js", status: 200, type: "text/javascript; charset=utf-8" },
      { path: "/console/console.css", status: 200, type: "text/css; charset=utf-8" },
      // Any other name is 404 (a JSON body, from the server's door).
      { path: "/console/nothing.js", status: 404, type: "application/json" }
    ])
    expect(answers[1]!.chars).toBeGreaterThan(10_000)
  })

  it("internal modules are closed to importers", async () => {
    const probe = await run(process.execPath, [
      "--input-type=module",
      "-e",
      "import('@engram/core/internal/contentKey.js').then(() => console.log('opened'), (e) => console.log(e.code))"
    ], project)
    expect(probe.stdout.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED")
  })

  it("@engram/core and @engram/store-sqlite alone bring no test tooling", async () => {
    const alone = NodePath.join(root, "alone")
    NodeFs.mkdirSync(alone)
    const pick = (name: string) => tarballs.find((tarball) => NodePath.basename(tarball).startsWith(`engram-${name}-`))!
    NodeFs.writeFileSync(
      NodePath.join(alone, "package.json"),
      JSON.stringify({
        name: "engram-alone",
        private: true,
        dependencies: Object.fromEntries(
          ["core", "store-sql", "store-sqlite"].map((name) => [`@engram/${name}`, `file:${pick(name)}`])
        )
      })
    )
    // The tree npm would install (peers included), resolved without downloading a package.
    await must("npm install --package-lock-only", run("npm", ["install", "--package-lock-only", ...npmInstall], alone))
    const lock = JSON.parse(NodeFs.readFileSync(NodePath.join(alone, "package-lock.json"), "utf8")) as {
      readonly packages: Record<string, unknown>
    }
    const installed = Object.keys(lock.packages).map((path) => path.replace(/^.*node_modules\//, ""))
    expect(installed).toContain("effect")
    expect(installed).toContain("better-sqlite3")
    // (fast-check comes with effect itself, for Schema's Arbitrary: it is not the conformance kit's.)
    for (const tooling of ["vitest", "@effect/vitest", "vite", "esbuild", "@engram/conformance"]) {
      expect(installed).not.toContain(tooling)
    }
  })
})

describe("the CLI tarball installed alone, globally", () => {
  const engramBin = () => NodePath.join(prefix, "bin", "engram")
  const home = () => NodePath.join(root, "home")

  it("is what the README's \"Installing the CLI\" says, and what this test does", () => {
    const readme = NodeFs.readFileSync(NodePath.join(repoRoot, "README.md"), "utf8").split("\n")
    const open = readme.indexOf("```sh", readme.indexOf("### Installing the CLI"))
    expect(readme.slice(open + 1, readme.indexOf("```", open + 1))).toEqual([
      "npm ci && npm run build && npm run pack -- /tmp/engram-packages",
      `npm install -g /tmp/engram-packages/${NodePath.basename(cliTarball)}`,
      "engram demo"
    ])
  })

  it("depends on its native modules only (better-sqlite3, sqlite-vec): the workspace packages and Effect are inside its bundle", async () => {
    const manifest = JSON.parse((await runProcess("tar", ["-xzOf", cliTarball, "package/package.json"])).stdout) as {
      readonly dependencies: Record<string, string>
      readonly peerDependencies?: unknown
    }
    expect(Object.keys(manifest.dependencies)).toEqual([...RUNTIME_DEPENDENCIES])
    expect(manifest.peerDependencies).toBeUndefined()
    // Installed: no effect package at all (the bundle's copy is the only one), no @engram/* besides the CLI.
    const effects = await runProcess("find", [prefix, "-name", "package.json", "-path", "*/effect/package.json"])
    expect(effects.stdout.trim()).toBe("")
    expect(NodeFs.readdirSync(NodePath.join(prefix, "lib/node_modules/@engram"))).toEqual(["cli"])
    // One Effect inside the bundle: its version module is bundled once.
    const chunks = NodePath.join(prefix, "lib/node_modules/@engram/cli/dist/engram/chunks")
    const versions = NodeFs.readdirSync(chunks).flatMap((file) =>
      NodeFs.readFileSync(NodePath.join(chunks, file), "utf8").match(/moduleVersion\d* ?= ?"3\.\d+\.\d+"/g) ?? []
    )
    expect(versions).toHaveLength(1)
    console.log(
      `engram CLI, npm install -g of its tarball alone: ${globalInstall.seconds.toFixed(1)} s, ` +
        `${(globalInstall.bytes / 1024 / 1024).toFixed(1)} MB on disk`
    )
  })

  it("engram demo, then engram inspect demo-2 on the demo's store", async () => {
    NodeFs.mkdirSync(home(), { recursive: true })
    const demo = await must("engram demo", run(engramBin(), ["demo"], home()))
    expect(demo.stdout).toMatch(/From what I remember: .*Doug/)
    expect(demo.stdout).not.toMatch(/\u001b\[/)
    const inspect = await must(
      "engram inspect demo-2",
      run(engramBin(), ["--db", ".engram/demo.db", "inspect", "demo-2"], home())
    )
    expect(inspect.stdout).toContain("session demo-2")
    expect(inspect.stdout).toContain("rebuilt byte for byte")
  })

  it("engram mcp answers initialize over stdio and lists its tools", { timeout: 2 * MINUTES }, async () => {
    NodeFs.mkdirSync(home(), { recursive: true })
    const client = new Client({ name: "engram-packaging", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: engramBin(),
        args: ["--db", NodePath.join(home(), "mcp.db"), "mcp"],
        cwd: home(),
        env: env as Record<string, string>
      })
    )
    try {
      expect(client.getServerVersion()?.name).toBe("engram")
      const tools = (await client.listTools()).tools.map((tool) => tool.name)
      expect(tools).toEqual(expect.arrayContaining(["memory_save", "memory_recall", "memory_context"]))
    } finally {
      await client.close()
    }
  })
})
