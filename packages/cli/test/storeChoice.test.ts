/**
 * Every command chooses its store in one place, `StoreBackend.locationOf`: the precedence table
 * (flags, the command's configured file or its own file, the environment, the default), the
 * refusals, and — read from the sources — no command choosing around it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Root, StoreBackend } from "@engram/cli"
import { FastCheck as fc } from "effect"
import * as ConfigProvider from "effect/ConfigProvider"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Redacted from "effect/Redacted"
import { execFile } from "node:child_process"
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { engramArgs, repoRoot, type Run, tempDir } from "./utilities.js"

// Asynchronous, so the test worker keeps answering the runner while the commands run; like the
// shared helper, the child inherits neither Node options nor the store fallbacks.
const engramWithEnv = (extra: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>): Promise<Run> => {
  const inherited = Object.entries(process.env).filter(([key]) =>
    key !== "NODE_OPTIONS" && key !== "ENGRAM_DB" && key !== "ENGRAM_PG_URL"
  )
  const [node, ...rest] = engramArgs(args)
  return new Promise((resolve) => {
    execFile(
      node!,
      rest,
      { cwd: repoRoot, env: { ...Object.fromEntries(inherited), NO_COLOR: "1", ...extra }, timeout: 60_000 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : null, stdout, stderr })
    )
  })
}

const PG = "postgres://u:secret@127.0.0.1:5432/db"

interface Case {
  readonly db?: string | undefined
  readonly pg?: boolean | undefined
  readonly env: Readonly<Record<string, string>>
  readonly choice: StoreBackend.Choice
}

const choose = (c: Case) =>
  StoreBackend.locationOf(
    {
      db: c.db,
      pg: c.pg === true ? Redacted.make(PG) : undefined,
      pgSchema: undefined,
      language: undefined,
      json: false
    },
    c.choice
  ).pipe(
    Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(c.env)))),
    Effect.either,
    Effect.runSync
  )

const origin = (c: Case) =>
  Either.map(choose(c), (location) => [location.origin, location.pg === undefined ? location.db : "pg"])

describe("StoreBackend.locationOf: one precedence for every command", () => {
  it("flags, then the configured file, then the command's own file, then the environment, then the default", async () => {
    const env = { ENGRAM_DB: "env.db", ENGRAM_PG_URL: PG }
    expect(origin({ pg: true, env, choice: { configured: "agent.db" } })).toEqual(Either.right(["--pg", "pg"]))
    expect(origin({ db: "flag.db", env, choice: { configured: "agent.db" } })).toEqual(
      Either.right(["--db", "flag.db"])
    )
    expect(origin({ env, choice: { configured: "agent.db" } })).toEqual(Either.right(["agent config", "agent.db"]))
    expect(origin({ env, choice: { ownFile: Effect.succeed("own.db") } })).toEqual(Either.right(["command", "own.db"]))
    expect(origin({ env, choice: {} })).toEqual(Either.right(["ENGRAM_DB", "env.db"]))
    expect(origin({ env: { ENGRAM_PG_URL: PG }, choice: {} })).toEqual(Either.right(["ENGRAM_PG_URL", "pg"]))
    expect(origin({ env: {}, choice: {} })).toEqual(Either.right(["default", Root.DEFAULT_DATABASE]))
  })

  it("refuses --db with --pg, PostgreSQL for a SQLite-only command, and a bad ENGRAM_PG_URL unechoed", async () => {
    const problem = (c: Case) => Either.match(choose(c), { onLeft: (e) => String(e.problem), onRight: () => "" })
    expect(problem({ db: "x.db", pg: true, env: {}, choice: {} })).toContain("--db and --pg both name a store")
    expect(problem({ pg: true, env: {}, choice: { sqliteOnly: "SQLite only" } })).toBe("SQLite only")
    expect(problem({ env: { ENGRAM_PG_URL: PG }, choice: { sqliteOnly: "SQLite only" } })).toBe("SQLite only")
    const bad = problem({ env: { ENGRAM_PG_URL: "mysql://root:hunter2@db/x" }, choice: {} })
    expect(bad).toContain("ENGRAM_PG_URL: expected a postgres://")
    expect(bad).not.toContain("hunter2")
  })

  const maybe = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: undefined })
  it.prop(
    "a flag always wins; without one, a command's own file keeps the environment out",
    [
      maybe(fc.constant("flag.db")),
      maybe(fc.constant("agent.db")),
      fc.boolean(),
      maybe(fc.constant("env.db")),
      fc.boolean()
    ],
    ([db, configured, own, envDb, envPg]) => {
      const env: Record<string, string> = {}
      if (envDb !== undefined) env.ENGRAM_DB = envDb
      if (envPg) env.ENGRAM_PG_URL = PG
      const chosen = choose({
        db,
        env,
        choice: { configured, ownFile: own ? Effect.succeed("own.db") : undefined }
      })
      const location = Either.getOrThrow(chosen)
      if (db !== undefined) expect(location).toMatchObject({ db, origin: "--db" })
      else if (configured !== undefined) expect(location).toMatchObject({ db: configured, origin: "agent config" })
      else if (own) expect(location).toMatchObject({ db: "own.db", origin: "command" })
      else if (envDb !== undefined) expect(location.origin).toBe("ENGRAM_DB")
      else expect(location.origin).toBe(envPg ? "ENGRAM_PG_URL" : "default")
    }
  )
})

describe("no command chooses its store around StoreBackend", () => {
  const dir = Path.join(repoRoot, "packages/cli/src/commands")
  const sources = readdirSync(dir).map((file) => [file, readFileSync(Path.join(dir, file), "utf8")] as const)

  it("command modules never read the store flags nor build a location themselves", async () => {
    for (const [file, source] of sources) {
      // The store flags are read by StoreBackend.locationOf only (migrate's --pg-schema names its --to).
      expect([file, source.match(/settings\.(db|pg)\b/g)]).toEqual([file, null])
      // A location is what locationOf / locationFor / location returned, never an object literal.
      expect([file, source.match(/StoreBackend\.(layer\w*|provide)\(\s*\{/g)]).toEqual([file, null])
      expect([file, source.match(/SqliteDatabase\.DEFAULT_FILENAME|DEFAULT_DATABASE\b(?!\s*=)/g)]).toEqual([file, null])
    }
  })

  it("every command module that opens a store asks StoreBackend where it is", async () => {
    const opening = sources.filter(([, source]) => /StoreBackend\.(layer\w*|provide)\(/.test(source))
    expect(opening.length).toBeGreaterThan(5)
    for (const [file, source] of opening) {
      expect([file, /StoreBackend\.(locationOf|locationFor|location|provide)\b/.test(source)]).toEqual([file, true])
    }
  })
})

describe("engram: commands with an agent config choose the same way", () => {
  it("compose reads the config's db over ENGRAM_DB, --db over both; the demo refuses --pg", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const config = Path.join(dir, "agent.json")
      const agent = JSON.parse(readFileSync(Path.join(repoRoot, "examples/companion.agent.json"), "utf8")) as object
      writeFileSync(config, JSON.stringify({ ...agent, db: "from-config.db" }))
      const env = { ENGRAM_DB: Path.join(dir, "from-env.db") }
      // compose only reads: each store it may choose exists (a missing one is refused, never created).
      for (const file of ["from-config.db", "flag.db"]) {
        expect(
          (await engramWithEnv({}, "memory", "add", "A note", "--kind", "note", "--db", Path.join(dir, file))).code
        )
          .toBe(0)
      }
      const viaConfig = await engramWithEnv(env, "compose", "--agent", config, "--json")
      expect(JSON.parse(viaConfig.stdout).store).toBe(Path.join(dir, "from-config.db"))
      const viaFlag = await engramWithEnv(
        env,
        "compose",
        "--agent",
        config,
        "--json",
        "--db",
        Path.join(dir, "flag.db")
      )
      expect(JSON.parse(viaFlag.stdout).store).toBe(Path.join(dir, "flag.db"))
      const demo = await engramWithEnv({}, "--pg", PG, "demo")
      expect(demo.code).toBe(1)
      expect(demo.stderr).toMatch(/^engram: the demo runs on a SQLite file of its own: drop --pg/)
      expect(demo.stderr).not.toContain("secret")
    } finally {
      cleanup()
    }
  }, 180_000)
})
