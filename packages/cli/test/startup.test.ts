/**
 * A command loads only what it uses: the modules a run of the real CLI loads, traced by a loader
 * hook (fixtures/traceLoads.mjs). The CPU time this saves is measured by `npm run bench -- cli`,
 * not here.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFile } from "node:child_process"
import { readFileSync, rmSync } from "node:fs"
import * as Path from "node:path"
import { promisify } from "node:util"
import { childEnv, engram, engramArgs as bundledArgs, repoRoot, runProcess, tempDir } from "./utilities.js"

const run = promisify(execFile)
const trace = Path.join(repoRoot, "packages/cli/test/fixtures/traceLoads.mjs")
// From source, whatever the other CLI tests run: the modules are traced by their source paths.
const engramArgs = (args: ReadonlyArray<string>) => [
  process.execPath,
  "--conditions=engram-source",
  "--import",
  "tsx",
  Path.join(repoRoot, "packages/cli/src/bin.ts"),
  ...args
]
const { cleanup, dir } = tempDir()
afterAll(cleanup)

/** The modules `engram ...args` loaded (URLs relative to the repository), and its output. */
const loadsOf = async (...args: ReadonlyArray<string>) => {
  const file = Path.join(dir, `loads-${Math.random().toString(36).slice(2)}.txt`)
  const [node, ...rest] = engramArgs(args)
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS" && !key.startsWith("ENGRAM_"))
  )
  const out = await run(node!, ["--import", trace, ...rest], {
    cwd: repoRoot,
    env: { ...env, NO_COLOR: "1", ENGRAM_TRACE_LOADS: file }
  })
  const loads = readFileSync(file, "utf8").trim().split("\n").map((url) =>
    url.startsWith("file://") ? Path.relative(repoRoot, new URL(url).pathname) : url
  )
  rmSync(file)
  return { loads, stdout: out.stdout }
}

const traceRequires = Path.join(repoRoot, "packages/cli/test/fixtures/traceRequires.cjs")

/** The CommonJS modules the shipped bundle's `engram ...args` required, and its output. */
const requiresOf = async (...args: ReadonlyArray<string>) => {
  const file = Path.join(dir, `requires-${Math.random().toString(36).slice(2)}.txt`)
  const [node, ...rest] = bundledArgs(args)
  const out = await runProcess(node!, ["--require", traceRequires, ...rest], {
    env: childEnv({ ENGRAM_TRACE_REQUIRES: file })
  })
  expect(out.stderr).toBe("")
  const requires = readFileSync(file, "utf8").trim().split("\n")
  rmSync(file)
  return { requires, stdout: out.stdout }
}

/**
 * Code a memory command has no use for: the server, MCP, PostgreSQL, the agent runtime, the harness,
 * the store-to-store copy of `migrate`.
 */
const unused = [
  /^packages\/server\/src\/(?!AccessTokens)/,
  /^packages\/migrate\//,
  /^packages\/store-sqlite\/src\/SqliteMigration/,
  /^packages\/mcp\//,
  /^packages\/harness\//,
  /^packages\/runtime\//,
  /^packages\/store-pg\/src\/(?!PgSchemaName|PgError)/,
  /^node_modules\/(pg|pg-[a-z-]+|@effect\/sql-pg|@modelcontextprotocol\/sdk|@effect\/ai)\//
]

describe("start-up", () => {
  it("a bare --version loads neither the command tree nor Effect", async () => {
    const { loads, stdout } = await loadsOf("--version")
    expect(stdout).toBe("0.1.0\n")
    // Which modules, not their order: the loader finishes sibling imports in either order.
    expect(loads.filter((url) => url.startsWith("packages/cli/src/")).sort()).toEqual([
      "packages/cli/src/Version.ts",
      "packages/cli/src/bin.ts",
      "packages/cli/src/internal/startupTiering.ts"
    ])
    expect(loads.filter((url) => url.includes("node_modules/effect/") || url.includes("node_modules/@effect/")))
      .toEqual([])
  })

  it("memory add and memory list on SQLite load no server, MCP, PostgreSQL, runtime, harness or migrate code", async () => {
    const db = Path.join(dir, "startup.db")
    const add = await loadsOf("--db", db, "memory", "add", "--kind", "fact", "The sky is blue.")
    const list = await loadsOf("--db", db, "memory", "list")
    expect(list.stdout).toContain("The sky is blue.")
    for (const { loads } of [add, list]) {
      expect(loads).toContain("packages/store-sqlite/src/SqliteMemoryStore.ts")
      expect(loads.filter((url) => unused.some((pattern) => pattern.test(url)))).toEqual([])
    }
  })

  it("the shipped bundle's memory list loads one entry chunk, the runner: the rest of its path is shared chunks", async () => {
    // Every import() is an entry point of the bundle, and esbuild splits what entries share into
    // chunks: an entry of its own on the start-up path would split it again (decision 0119).
    const file = Path.join(dir, `bundle-loads-${Math.random().toString(36).slice(2)}.txt`)
    const db = Path.join(dir, "entries.db")
    expect((await engram("--db", db, "memory", "add", "--kind", "fact", "The runner loads once.")).code).toBe(0)
    const [node, ...rest] = bundledArgs(["--db", db, "memory", "list"])
    const out = await runProcess(node!, ["--import", trace, ...rest], { env: childEnv({ ENGRAM_TRACE_LOADS: file }) })
    expect(out.stdout).toContain("The runner loads once.")
    // The bundle's own files (better-sqlite3 and the like load from node_modules).
    const bundle = Path.dirname(rest[0]!)
    const files = readFileSync(file, "utf8").trim().split("\n").filter((url) => url.startsWith("file://"))
      .map((url) => Path.relative(bundle, new URL(url).pathname)).filter((path) => !path.startsWith(".."))
    rmSync(file)
    expect(files.filter((path) => !path.startsWith("chunks/chunk-")).map((path) => path.replace(/-[A-Z0-9]+\.js$/, "")))
      .toEqual(["bin.js", "chunks/run"])
  })

  it("serve --help describes serve without loading the server", async () => {
    const { loads, stdout } = await loadsOf("serve", "--help")
    expect(stdout).toContain("--port")
    expect(loads.filter((url) => /^packages\/server\/src\/EngramServer/.test(url))).toEqual([])
  })

  it("the shipped bundle's memory list on SQLite loads no stemmer; memory search does", async () => {
    const db = Path.join(dir, "stemmers.db")
    expect((await engram("--db", db, "memory", "add", "--kind", "fact", "The gardens were watered.")).code).toBe(0)
    const stemmers = (requires: ReadonlyArray<string>) => requires.filter((file) => file.includes("snowball-stemmers"))
    const list = await requiresOf("--db", db, "memory", "list")
    expect(list.stdout).toContain("The gardens were watered.")
    expect(stemmers(list.requires)).toEqual([])
    const search = await requiresOf("--db", db, "memory", "search", "garden")
    expect(search.stdout).toContain("The gardens were watered.")
    expect(stemmers(search.requires)).toHaveLength(1)
    // The date reader (chrono-node, deferred like the stemmers) is extraction's alone.
    const dates = (requires: ReadonlyArray<string>) => requires.filter((file) => file.includes("chrono-node"))
    expect(dates(list.requires)).toEqual([])
    expect(dates(search.requires)).toEqual([])
  })
})
