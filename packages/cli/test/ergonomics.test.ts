/**
 * The command line as a person meets it: suggestions for mistyped commands and options,
 * `--log-level` anywhere, help without ANSI codes when piped, `--json` failures as JSON, the
 * `ENGRAM_DB` / `ENGRAM_PG_URL` fallbacks, and declines that say why and what fixes them.
 */
import { describe, expect, it } from "@effect/vitest"
import { existsSync } from "node:fs"
import * as Path from "node:path"
import * as Argv from "../src/Argv.js"
import * as Cli from "../src/Cli.js"
import { engram, engramJson, engramWithEnv, expectRefused, tempDir } from "./utilities.js"

const PROCESSES = 180_000

const { closest } = Cli
const scan = (args: ReadonlyArray<string>) => Argv.scanArgv(args, Cli.grammar)
const describeUnknownCommand = (args: ReadonlyArray<string>) => Cli.describeUnknownCommand(scan(args))
// --log-level read from the one scan: the level, its problem, and the command line without it.
const extractLogLevel = (args: ReadonlyArray<string>) => ({
  ...Cli.logLevelOf(scan(args)),
  rest: Argv.parserArgs(scan(args))
})

describe("suggestions", () => {
  it("closest: a typo within two edits, never a distant word", () => {
    expect(closest("memroy", ["memory", "demo"])).toBe("memory")
    expect(closest("lst", ["add", "list", "search"])).toBe("list")
    expect(closest("xyz", ["memory", "demo"])).toBeUndefined()
    expect(describeUnknownCommand(["--db", "x.db", "memroy", "list"])).toContain(`did you mean "memory"?`)
    expect(describeUnknownCommand(["--log-level", "debug", "memory", "lst"])).toContain(`did you mean "memory list"?`)
  })

  it("engram: mistyped commands and options name what was meant", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "e.db")
      expectRefused(await engram("--db", db, "memroy", "list"), `unknown command "memroy"; did you mean "memory"?`)
      expectRefused(await engram("--db", db, "memory", "lst"), `did you mean "memory list"?`)
      expectRefused(await engram("--db", db, "memory", "list", "--jsn"), "unknown option --jsn; did you mean --json?")
      expectRefused(await engram("--db", db, "memory", "add", "x", "--knd", "fact"), "did you mean --kind?")
      expect(existsSync(db)).toBe(false)
    } finally {
      cleanup()
    }
  }, PROCESSES)
})

describe("global options anywhere", () => {
  it("extractLogLevel takes the option from any position and checks the level", () => {
    expect(extractLogLevel(["memory", "list", "--log-level", "debug"]).rest).toEqual(["memory", "list"])
    expect(extractLogLevel(["--log-level=warning", "memory", "list"]).level?._tag).toBe("Warning")
    expect(extractLogLevel(["memory", "add", "--", "--log-level", "x"]).level).toBeUndefined()
    expect(extractLogLevel(["--log-level", "loud"]).problem).toContain(`"loud" is not a level`)
  })

  it("engram: --log-level before or after the command, a bad level refused", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "g.db")
      expect((await engram("--db", db, "memory", "add", "hello", "--kind", "fact")).code).toBe(0)
      const after = await engram("--db", db, "memory", "list", "--log-level", "warning", "--json")
      expect(after.code).toBe(0)
      expect(JSON.parse(after.stdout).records).toHaveLength(1)
      const before = await engram("--log-level", "debug", "--db", db, "memory", "list", "--json")
      expect(before.code).toBe(0)
      expect(JSON.parse(before.stdout).records).toHaveLength(1)
      expectRefused(
        await engram("--db", db, "memory", "list", "--log-level", "loud"),
        `--log-level: "loud" is not a level`
      )
    } finally {
      cleanup()
    }
  }, PROCESSES)
})

describe("output", () => {
  it("help: no ANSI codes when piped, the whole command in its usage line, no boilerplate, 100 columns", async () => {
    const help = await engramWithEnv({ NO_COLOR: "" }, "memory", "add", "--help")
    expect(help.code).toBe(0)
    expect(help.stdout).not.toMatch(/\u001b\[/)
    // The full usage line, real descriptions only, and lines that fit a terminal.
    expect(help.stdout).toContain("$ engram memory add --kind")
    expect(help.stdout).toContain("What the memory is. One of: profile")
    expect(help.stdout).not.toContain("A user-defined piece of text.")
    expect(help.stdout).not.toContain("This setting is optional.")
    const root = await engram("--help")
    expect(Math.max(...root.stdout.split("\n").map((line) => line.length))).toBeLessThanOrEqual(100)
  }, PROCESSES)

  it("--json: a failure is also one JSON document on stdout", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const run = await engram("--db", Path.join(dir, "j.db"), "memory", "lst", "--json")
      expect(run.code).toBe(1)
      expect(JSON.parse(run.stdout)).toEqual({
        error: { problem: expect.stringContaining(`did you mean "memory list"?`), exitCode: 1 }
      })
      expect(run.stderr).toMatch(/^engram: unknown command/)
    } finally {
      cleanup()
    }
  }, PROCESSES)
})

describe("environment fallbacks", () => {
  it("ENGRAM_DB names the store when --db is absent; --db wins over it", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const fromEnv = Path.join(dir, "env.db")
      const fromFlag = Path.join(dir, "flag.db")
      expect(
        (await engramWithEnv({ ENGRAM_DB: fromEnv }, "memory", "add", "from the environment", "--kind", "fact")).code
      )
        .toBe(0)
      expect(existsSync(fromEnv)).toBe(true)
      const listed = await engramWithEnv({ ENGRAM_DB: fromEnv }, "memory", "list", "--json")
      expect(JSON.parse(listed.stdout).records.map((r: { content: string }) => r.content)).toEqual([
        "from the environment"
      ])
      expect(
        (await engramWithEnv({ ENGRAM_DB: fromEnv }, "--db", fromFlag, "memory", "add", "flag", "--kind", "fact")).code
      )
        .toBe(0)
      expect(await engramJson("--db", fromFlag, "memory", "list")).toMatchObject({ records: [{ content: "flag" }] })
    } finally {
      cleanup()
    }
  }, PROCESSES)

  it("ENGRAM_PG_URL is the store when neither --db nor ENGRAM_DB is given; a bad one is refused unechoed", async () => {
    const { cleanup, dir } = tempDir()
    try {
      expectRefused(
        await engramWithEnv({ ENGRAM_PG_URL: "mysql://root:hunter2@db/x" }, "memory", "list"),
        "ENGRAM_PG_URL: expected a postgres:// or postgresql:// URL"
      )
      const db = Path.join(dir, "wins.db")
      const run = await engramWithEnv(
        { ENGRAM_PG_URL: "mysql://root:hunter2@db/x", ENGRAM_DB: db },
        "memory",
        "add",
        "x",
        "--kind",
        "fact"
      )
      expect(run.code).toBe(0)
      expect(run.stderr).not.toContain("hunter2")
    } finally {
      cleanup()
    }
  }, PROCESSES)
})

describe("declines say why and what fixes them", () => {
  it(
    "compose: review-required names the guarded section and the review command; supersede says the replacement waits",
    async () => {
      const { cleanup, dir } = tempDir()
      try {
        const db = Path.join(dir, "d.db")
        const pref = await engramJson(
          "--db",
          db,
          "memory",
          "add",
          "Prefers short answers",
          "--kind",
          "standing",
          "--label",
          "answer_length",
          "--source",
          "conversation"
        ) as { record: { id: string } }
        const compose = await engram("--db", db, "compose", "--agent", "examples/companion.agent.json", "--promote")
        expect(compose.code).toBe(0)
        expect(compose.stdout).toContain(
          `${pref.record.id}: section "preferences" is guarded: only confirmed memories compose there, and this one ` +
            `is not confirmed; fix: engram --db ${db} memory review ${pref.record.id} confirmed`
        )
        const superseded = await engram("--db", db, "memory", "supersede", pref.record.id, "Prefers very short answers")
        expect(superseded.code).toBe(0)
        expect(superseded.stdout).toContain(`the replacement waits for review: `)
        expect(superseded.stdout).toMatch(/\(engram --db \S+ memory review \S+ confirmed\)/)
      } finally {
        cleanup()
      }
    },
    PROCESSES
  )
})

describe("id prefixes", () => {
  it("review, supersede, expire and forget take an unambiguous prefix; an ambiguous one is refused", async () => {
    const { cleanup, dir } = tempDir()
    try {
      const db = Path.join(dir, "p.db")
      for (const id of ["team-alpha-1", "team-alpha-2", "team-beta-1"]) {
        expect((await engram("--db", db, "memory", "add", `fact ${id}`, "--kind", "fact", "--id", id)).code).toBe(0)
      }
      const reviewed = await engramJson("--db", db, "memory", "review", "team-b", "confirmed")
      expect(reviewed).toMatchObject({ record: { id: "team-beta-1", reviewState: "confirmed" } })
      expectRefused(
        await engram("--db", db, "memory", "review", "team-alpha", "confirmed"),
        `"team-alpha" starts several memory ids (team-alpha-1, team-alpha-2); give more of the id`
      )
      const expired = await engramJson("--db", db, "memory", "expire", "team-alpha-2")
      expect(expired).toMatchObject({ record: { id: "team-alpha-2" } })
      const superseded = await engramJson("--db", db, "memory", "supersede", "team-alpha-1", "a newer fact")
      expect(superseded).toMatchObject({ superseded: { id: "team-alpha-1" } })
      // Too short to expand: the store reports it as it was typed.
      expectRefused(await engram("--db", db, "memory", "review", "tea", "confirmed"), `no memory with id "tea"`)
      const forgot = await engram("--db", db, "memory", "forget", "team-b", "--json")
      expect(forgot.code).toBe(0)
      expect(forgot.stdout).toContain("team-beta-1")
    } finally {
      cleanup()
    }
  }, PROCESSES)
})
