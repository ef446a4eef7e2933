/**
 * The help printer: @effect/cli's help document laid out at a width, the usage naming the whole
 * command, no generated sentences under the options.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import { describe, expect, it } from "@effect/vitest"
import { Argv, Cli, Help } from "@engram/cli"
import { FastCheck as fc } from "effect"

const helpOf = (...args: ReadonlyArray<string>) =>
  Help.render(Cli.helpPage(Argv.scanArgv([...args, "--help"], Cli.grammar)), { width: Help.WIDTH })

const longest = (text: string) => Math.max(...text.split("\n").map((line) => line.length))

describe("Help.page through Help.render", () => {
  it("names the whole command in the usage line, at every depth", () => {
    expect(helpOf("demo")).toContain("$ engram demo")
    expect(helpOf("memory", "add")).toContain("$ engram memory add --kind")
    expect(helpOf("token", "create")).toContain("$ engram token create [--scope]...")
    expect(helpOf()).toContain("$ engram [--db] [--pg]")
  })

  it("shows repeatable options as optional, the root's --log-level and <command>, and that serve needs a token", () => {
    expect(helpOf("memory", "add")).toContain("[--tag]...")
    expect(helpOf("memory", "add")).not.toMatch(/ --tag\.\.\./)
    expect(helpOf("memory", "list")).toContain("[--scope]...")
    expect(helpOf()).toMatch(/\$ engram \[--db\][^\n]* \[--log-level\] <command>/)
    expect(helpOf("memory")).toContain("$ engram memory <command>")
    expect(helpOf("memory", "add")).not.toContain("<command>")
    expect(helpOf("serve").replace(/\s+/g, " ")).toContain(
      "need a bearer token: create one first with `engram token create`"
    )
  })

  it("keeps each option's own description and drops the sentences @effect/cli writes under every option", () => {
    const add = helpOf("memory", "add")
    expect(add).toContain("--kind kind\n  What the memory is. One of: profile")
    for (
      const sentence of ["A user-defined piece of text.", "This setting is optional.", "may be repeated", "A file."]
    ) {
      expect(add + helpOf("serve") + helpOf("memory", "forget")).not.toContain(sentence)
    }
  })

  it("lists subcommands with their descriptions in a column, and no line passes 100 columns", () => {
    const root = helpOf()
    expect(root).toMatch(/\n {2}token list {12}List tokens \(never their secrets\)\./)
    for (const page of [root, helpOf("memory"), helpOf("memory", "add"), helpOf("migrate")]) {
      expect(longest(page)).toBeLessThanOrEqual(Help.WIDTH)
    }
  })

  it("renders without ANSI codes unless asked for colour", () => {
    const page = Cli.helpPage(Argv.scanArgv(["--help"], Cli.grammar))
    expect(Help.render(page)).not.toMatch(/\u001b\[/)
    expect(Help.render(page, { color: true })).toMatch(/\u001b\[/)
  })
})

const word = fc.stringMatching(/^[a-z]{1,12}$/)

describe("Help.render properties", () => {
  it.prop(
    "fills a paragraph within the width, keeping its words in order",
    [fc.array(word, { minLength: 1, maxLength: 400 }), fc.integer({ min: 20, max: 120 })],
    ([words, width]) => {
      const text = Help.render(HelpDoc.p(words.join(" ")), { width })
      expect(longest(text)).toBeLessThanOrEqual(width)
      expect(text.split(/\s+/).filter((w) => w !== "")).toEqual(words)
    },
    { fastCheck: { numRuns: 50 } }
  )

  it("lays out a long paragraph in linear time (@effect/printer's own soft lines are exponential)", () => {
    const words = Array.from({ length: 5_000 }, (_, i) => `word${i}`).join(" ")
    const started = performance.now()
    Help.render(HelpDoc.p(words))
    expect(performance.now() - started).toBeLessThan(5_000)
  })
})
