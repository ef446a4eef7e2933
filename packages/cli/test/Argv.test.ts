/**
 * The one scan of the command line: `--`, option values, the command path, global options
 * anywhere — on engram's own grammar (read from the command tree) and on a small one.
 */
import { describe, expect, it } from "@effect/vitest"
import { Argv, Cli } from "@engram/cli"
import { FastCheck as fc } from "effect"

const scan = (args: ReadonlyArray<string>) => Argv.scanArgv(args, Cli.grammar)

describe("Argv.scanArgv on engram's grammar", () => {
  it("reads the command path, options with their values, and the arguments", () => {
    const argv = scan(["--db", "x.db", "memory", "add", "My name is Doug", "--kind", "profile", "--json"])
    expect(argv.command).toEqual(["memory", "add"])
    expect(Argv.options(argv).map((o) => [o.name, o.value, o.kind])).toEqual([
      ["--db", "x.db", "global"],
      ["--kind", "profile", "command"],
      ["--json", undefined, "global"]
    ])
    expect(Argv.argumentsOf(argv)).toEqual(["My name is Doug"])
    expect(argv.afterDashes).toBeUndefined()
  })

  it("knows which options take a value from the command tree: a flag's next word is an argument", () => {
    const argv = scan(["memory", "list", "--deliverable", "--limit", "5", "extra"])
    expect(Argv.lastValue(argv, "--limit")).toBe("5")
    expect(Argv.options(argv, "--deliverable")[0]?.value).toBeUndefined()
    expect(Argv.argumentsOf(argv)).toEqual(["extra"])
  })

  it("a value that looks like an option is the value (`--label --json`), and `--` is never a value", () => {
    const argv = scan(["memory", "add", "x", "--kind", "fact", "--label", "--json"])
    expect(Argv.lastValue(argv, "--label")).toBe("--json")
    expect(Argv.has(argv, "--json")).toBe(false)
    const dashes = scan(["memory", "add", "--label", "--", "--json"])
    expect(Argv.options(dashes, "--label")[0]?.value).toBeUndefined()
    expect(dashes.afterDashes).toEqual(["--json"])
  })

  it("--name=value carries its value; an empty one is found", () => {
    const argv = scan(["memory", "add", "x", "--tag=", "--kind=fact"])
    expect(Argv.lastValue(argv, "--kind")).toBe("fact")
    expect(Argv.emptyValue(argv)?.name).toBe("--tag")
  })

  it("an option no command on the path accepts is unknown; one of another command is too", () => {
    expect(Argv.unknownOption(scan(["memory", "list", "--jsn"]))?.name).toBe("--jsn")
    expect(Argv.unknownOption(scan(["memory", "list", "--agent", "a.json"]))?.name).toBe("--agent")
    expect(Argv.unknownOption(scan(["compose", "--agent", "a.json"]))).toBeUndefined()
    expect(Cli.describeUnknownOption(scan(["memory", "list", "--jsn"]))).toContain("did you mean --json?")
    expect(Cli.describeUnknownOption(scan(["memory", "add", "x", "--knd", "fact"]))).toContain("did you mean --kind?")
  })

  it("the path stops at the first word that names no subcommand", () => {
    expect(scan(["memory", "lst", "add"]).command).toEqual(["memory"])
    expect(scan(["memroy", "list"]).command).toEqual([])
    expect(scan(["demo", "--help"]).command).toEqual(["demo"])
    expect(Argv.has(scan(["demo", "--help"]), "--help")).toBe(true)
    expect(Argv.has(scan(["memory", "add", "--", "--help"]), "--help")).toBe(false)
  })

  it("parserArgs: global options first, the runner's own left out, `--` kept", () => {
    expect(Argv.parserArgs(scan(["memory", "list", "--log-level", "debug", "--json", "--", "x"]))).toEqual([
      "--json",
      "memory",
      "list",
      "--",
      "x"
    ])
  })
})

// A small grammar: root options --g (value) and --f (flag); `cmd` with --v (value) and --b (flag).
const grammar: Argv.Grammar = {
  root: {
    name: "root",
    options: new Map([["--g", true], ["--f", false]]),
    subcommands: [{ name: "cmd", options: new Map([["--v", true], ["--b", false]]), subcommands: [] }]
  },
  builtIns: new Map([["--help", false]])
}

// Words that are safe as arguments or values: they never look like an option or `--`.
const plainWord = fc.stringMatching(/^[a-z0-9:.]{1,8}$/).filter((word) => word !== "cmd")
// Anything at all, `--` and option look-alikes included.
const anyWord = fc.oneof(plainWord, fc.constantFrom("--", "--g", "--f", "--v", "--b", "--help", "--v=x", "-h", ""))

// A command line of `cmd` as units that keep their meaning wherever they stand after the command
// word: a value option with its value, a flag, an argument.
const unit = fc.oneof(
  plainWord.map((v) => ["--v", v]),
  fc.constant(["--b"]),
  plainWord.map((a) => [a])
)

describe("Argv.scanArgv properties", () => {
  it.prop(
    "nothing after the first `--` is read as an option",
    [fc.array(anyWord), fc.array(anyWord)],
    ([before, after]) => {
      const clean = before.filter((word) => word !== "--")
      const argv = Argv.scanArgv([...clean, "--", ...after], grammar)
      expect(argv.afterDashes).toEqual(after)
      expect(Argv.options(argv)).toEqual(Argv.options(Argv.scanArgv(clean, grammar)))
      expect(Argv.parserArgs(argv).slice(-after.length - 1)).toEqual(["--", ...after])
    }
  )

  it.prop(
    "a global option written anywhere between units is found once, with its value, and hoisted first",
    [fc.array(unit, { maxLength: 6 }), fc.nat(), plainWord],
    ([units, at, value]) => {
      const position = at % (units.length + 2)
      // Position 0 is before the command word; the rest are between (or after) the units.
      const words = [["cmd"], ...units]
      const withGlobal = [...words.slice(0, position), ["--g", value], ...words.slice(position)].flat()
      const argv = Argv.scanArgv(withGlobal, grammar)
      const globals = Argv.options(argv).filter((option) => option.kind === "global")
      expect(globals.map((option) => [option.name, option.value])).toEqual([["--g", value]])
      expect(argv.command).toEqual(["cmd"])
      expect(Argv.parserArgs(argv)).toEqual(["--g", value, ...words.flat()])
      expect(Argv.unknownOption(argv)).toBeUndefined()
    }
  )

  it.prop(
    "every word is accounted for once: options, values, command words, arguments",
    [fc.array(anyWord)],
    ([args]) => {
      const argv = Argv.scanArgv(args, grammar)
      const written = argv.tokens.flatMap((token) => (token._tag === "Word" ? [token.text] : token.written))
      expect([...written, ...(argv.afterDashes === undefined ? [] : ["--", ...argv.afterDashes])]).toEqual(args)
    }
  )
})
