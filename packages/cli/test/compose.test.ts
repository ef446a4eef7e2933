import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { engram, engramJson, tempDir } from "./utilities.js"

interface Composition {
  readonly agent: string | null
  readonly spec: { readonly key: string; readonly version: string } | null
  readonly scope: string
  readonly store: string
  readonly promoted: number
  readonly unpromoted: number
  readonly text: string
  readonly fragments: ReadonlyArray<
    { readonly source: string; readonly text: string; readonly memoryIds?: ReadonlyArray<string> }
  >
  readonly report: {
    readonly specKey: string
    readonly outcomes: ReadonlyArray<{ readonly recordId: string; readonly status: string; readonly reason?: string }>
  } | null
}

const agentConfig = (overrides: Record<string, unknown> = {}) => ({
  name: "companion",
  persona: "You are a friendly companion.",
  spec: "user-background",
  scope: "global",
  db: "engram.db",
  awareness: "### Available Information Sources\n- the calendar",
  background: {
    sections: [
      { id: "assistant", title: "Assistant", entries: [{ key: "tone", value: "warm" }] },
      { id: "about_user", title: "About the User", promotion: "auto" },
      { id: "preferences", title: "Preferences", promotion: "guarded" }
    ]
  },
  ...overrides
})

describe("engram compose", () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "engram.db")
  const config = Path.join(tmp.dir, "agent.json")
  const write = (name: string, json: unknown) => {
    const path = Path.join(tmp.dir, name)
    writeFileSync(path, typeof json === "string" ? json : JSON.stringify(json, null, 2))
    return path
  }

  beforeAll(async () => {
    write("agent.json", agentConfig())
    const add = async (...args: ReadonlyArray<string>) =>
      expect((await engram("memory", "add", ...args, "--db", db)).code).toBe(0)
    await add("My name is Doug", "--kind", "profile", "--label", "name", "--source", "conversation", "--id", "m-name")
    await add(
      "Answer briefly",
      "--kind",
      "standing",
      "--label",
      "length",
      "--source",
      "conversation",
      "--id",
      "m-length"
    )
    await add("It rained", "--kind", "episode", "--id", "m-rain")
  })

  it("shows the authored Background, and says which records are not promoted yet", async () => {
    const run = await engram("compose", "--agent", config)
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(run.stdout).toContain(`agent companion · spec user-background@4 · scope global · store ${db}`)
    expect(run.stdout).toContain("3 records have no promotion row under this spec yet and cannot be composed")
    expect(run.stdout).toContain(
      "## Context\n\n### Assistant\n- **tone**: warm\n\n### Available Information Sources\n- the calendar"
    )
    expect(run.stdout).toContain("overlay report (user-background@4, 0 placed records)")
  })

  it("with --promote, composes the promoted memories and prints each fragment's source and ids, and the report", async () => {
    const run = await engram("compose", "--agent", config, "--promote")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("promoted 3 records first")
    expect(run.stdout).toContain(
      "## Context\n\n### Assistant\n- **tone**: warm\n\n### About the User\n- **name**: My name is Doug\n\n" +
        "### Available Information Sources\n- the calendar"
    )
    expect(run.stdout).toMatch(/^5\s+memory\s+m-name\s+"- \*\*name\*\*: My name is Doug"$/m)
    expect(run.stdout).toMatch(/^1\s+authored\s+-\s+"## Context\\n\\n"$/m)
    expect(run.stdout).toMatch(/^m-length\s+review-required\s+preferences \/ response_length\s+alias$/m)
    expect(run.stdout).toMatch(/^m-name\s+composed\s+about_user \/ name\s+canonical\s+27 chars$/m)
    expect(run.stdout).toMatch(/^m-rain\s+spec-declined\s+-\s+-$/m)
    expect(run.stdout).not.toContain("no promotion row")
  })

  it("prints the same as one JSON document with --json, never writing without --promote", async () => {
    const composition = await engramJson("compose", "--agent", config) as Composition
    expect(composition).toMatchObject({
      agent: "companion",
      spec: { key: "user-background", version: "4" },
      scope: "global",
      store: db,
      promoted: 0,
      unpromoted: 0
    })
    expect(composition.fragments.map((f) => f.text).join("")).toBe(composition.text)
    expect(composition.fragments.filter((f) => f.source === "memory").map((f) => f.memoryIds)).toEqual([["m-name"]])
    expect(composition.report?.outcomes.map((o) => [o.recordId, o.status, o.reason ?? null])).toEqual([
      ["m-length", "declined", "review-required"],
      ["m-name", "composed", null],
      ["m-rain", "declined", "spec-declined"]
    ])
  })

  it("follows review: a confirmed standing memory enters the guarded section", async () => {
    expect((await engram("memory", "review", "m-length", "confirmed", "--db", db)).code).toBe(0)
    const composition = await engramJson("compose", "--agent", config) as Composition
    expect(composition.text).toContain("### Preferences\n- **response_length**: Answer briefly")
  })

  it("reads the database named by the global --db instead of the config's", async () => {
    const other = Path.join(tmp.dir, "other", "engram.db")
    // compose only reads: the other store must exist (a missing one is refused, never created).
    expect((await engram("memory", "add", "An unrelated note", "--kind", "note", "--db", other)).code).toBe(0)
    const composition = await engramJson("compose", "--agent", config, "--db", other) as Composition
    expect(composition.store).toBe(other)
    expect(composition.report?.outcomes).toEqual([])
    expect(composition.text).not.toContain("Doug")
  })

  it("shows the Background as authored when the config names no spec", async () => {
    const { spec: _spec, ...rest } = agentConfig()
    const composition = await engramJson("compose", "--agent", write("no-spec.json", rest)) as Composition
    expect(composition.spec).toBeNull()
    expect(composition.report).toBeNull()
    expect(composition.text).not.toContain("Doug")
  })

  const refused: ReadonlyArray<readonly [string, () => string, string]> = [
    ["a misspelt field", () => write("typo.json", agentConfig({ sectoins: [] })), "invalid agent config"],
    ["an unknown spec", () => write("spec.json", agentConfig({ spec: "nope" })), `no routing spec named "nope"`],
    [
      "a duplicate section id",
      () =>
        write(
          "dup.json",
          agentConfig({ background: { sections: [{ id: "a", title: "A" }, { id: "a", title: "B" }] } })
        ),
      `duplicate section id "a"`
    ],
    ["a file that is not JSON", () => write("broken.json", "{ not json"), "is not JSON"]
  ]
  for (const [what, file, problem] of refused) {
    it(`refuses ${what} with one line and exit code 1`, async () => {
      const run = await engram("compose", "--agent", file())
      expect(run.code).toBe(1)
      expect(run.stdout).toBe("")
      expect(run.stderr.trim().split("\n")).toHaveLength(1)
      expect(run.stderr).toContain(problem)
    })
  }

  it("exits 2 when the database cannot be opened", async () => {
    const run = await engram("compose", "--agent", config, "--db", tmp.dir)
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/^engram: cannot open the memory store at /)
  })
})
