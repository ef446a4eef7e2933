import { describe, expect, it } from "@effect/vitest"
import { Argv, Cli } from "@engram/cli"
import { engram, tempDir } from "./utilities.js"

// What the runner hands @effect/cli, and the first option given an empty value: both read from the
// one scan of the command line.
const parserArgs = (args: ReadonlyArray<string>) => Argv.parserArgs(Argv.scanArgv(args, Cli.grammar))
const emptyOptionValue = (args: ReadonlyArray<string>) => Argv.emptyValue(Argv.scanArgv(args, Cli.grammar))?.name

describe("global options anywhere on the line", () => {
  it("moves --db, --pg, --pg-schema and --json in front of the command words", async () => {
    expect(parserArgs(["memory", "list", "--json", "--limit", "5", "--db", "x.db"])).toEqual([
      "--json",
      "--db",
      "x.db",
      "memory",
      "list",
      "--limit",
      "5"
    ])
    expect(parserArgs(["migrate", "--from", "a", "--pg-schema=s", "--batch-size", "40"])).toEqual([
      "--pg-schema=s",
      "migrate",
      "--from",
      "a",
      "--batch-size",
      "40"
    ])
  })

  it("leaves everything after -- alone, so content may look like an option", async () => {
    expect(parserArgs(["memory", "add", "--kind", "note", "--", "--json"])).toEqual([
      "memory",
      "add",
      "--kind",
      "note",
      "--",
      "--json"
    ])
  })
})

describe("engram with global options after the command", () => {
  it("adds and lists with --db and --json written last", async () => {
    const { dir, cleanup } = tempDir()
    try {
      const db = `${dir}/late.db`
      const added = await engram(
        "memory",
        "add",
        "My name is Doug",
        "--kind",
        "profile",
        "--source",
        "operator",
        "--db",
        db
      )
      expect(added.code).toBe(0)
      const listed = await engram("memory", "list", "--limit", "5", "--json", "--db", db)
      expect(listed.code).toBe(0)
      const page = JSON.parse(listed.stdout) as { records: ReadonlyArray<{ content: string }> }
      expect(page.records.map((r) => r.content)).toEqual(["My name is Doug"])
    } finally {
      cleanup()
    }
  })
})

describe("an empty option value (--tag \"\" is refused, not dropped)", () => {
  it("names the first option given an empty value", async () => {
    expect(emptyOptionValue(["memory", "add", "x", "--kind", "fact", "--tag", ""])).toBe("--tag")
    expect(emptyOptionValue(["memory", "add", "x", "--tag=", "--kind", "fact"])).toBe("--tag")
    expect(emptyOptionValue(["memory", "add", "x", "--tag", "a"])).toBeUndefined()
    expect(emptyOptionValue(["memory", "add", "--", "--tag", ""])).toBeUndefined()
  })
})
