import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Path from "node:path"
import { engram, engramJson, tempDir } from "./utilities.js"

interface JsonFragment {
  readonly message: number
  readonly role: string
  readonly source: string
  readonly label: string
  readonly text: string
  readonly memoryIds: ReadonlyArray<string>
}

interface JsonDemo {
  readonly db: string
  readonly saved: { readonly id: string; readonly content: string } | null
  readonly promotion: { readonly placementKey: string; readonly tier: string } | null
  readonly composedIds: ReadonlyArray<string>
  readonly second: {
    readonly text: string | null
    readonly calls: ReadonlyArray<{
      readonly fragments: ReadonlyArray<JsonFragment>
      readonly budget: {
        readonly usedTokens: number
        readonly budgetTokens: number | null
        readonly budgetChars: number | null
      }
    }>
  }
}

describe("engram demo", { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "demo", "demo.db")

  it("shows session 2's request with the name attributed to the memory session 1 saved", async () => {
    const run = await engram("demo", "--db", db)
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const saved = /saved (\S+): profile · label "name"/.exec(run.stdout)?.[1]
    expect(saved).toBeDefined()
    expect(run.stdout).toContain(`stores in ${db} (reset on every run)`)

    // After the session-2 heading, the fragment attributed to the saved memory carries "Doug".
    const seen = run.stdout.slice(run.stdout.indexOf("What the model saw (session demo-2"))
    const lines = seen.split("\n")
    const header = lines.findIndex((line) => line.includes(`prefix · Context · memory ${saved}`))
    expect(header).toBeGreaterThan(0)
    expect(lines[header + 1]).toMatch(/│ .*Doug/)
    expect(seen).toContain("who am I?")
    // The default budget: 8% of a 200k-token window, in tokens.
    expect(seen).toMatch(/Projection budget[^\n]*\n\s+used [\d,]+ of 16,000 tokens \([\d,]+ chars\)/)
    expect(run.stdout).toContain("From what I remember: The user's name is Doug.")
  })

  it("--json names every fragment's source and memory ids; each run starts from a fresh store", async () => {
    const report = await engramJson("demo", "--db", db) as JsonDemo
    expect(report.db).toBe(db)
    expect(report.saved?.content).toBe("The user's name is Doug.")
    expect(report.promotion?.tier).toBe("auto")
    expect(report.composedIds).toEqual([report.saved!.id])
    const [call] = report.second.calls
    const doug = call!.fragments.filter((fragment) => fragment.text.includes("Doug"))
    expect(doug.find((fragment) => fragment.source === "prefix")).toMatchObject({
      role: "system",
      label: "Context",
      memoryIds: [report.saved!.id]
    })
    expect(call!.fragments.find((fragment) => fragment.source === "operator")?.text).toBe("who am I?")
    expect(call!.budget.budgetChars).toBeNull()
    expect(call!.budget.usedTokens).toBeLessThanOrEqual(call!.budget.budgetTokens!)

    // Two runs, one store's worth of memories: the saved name and the session summary.
    const listed = await engramJson("memory", "list", "--db", db) as {
      readonly records: ReadonlyArray<
        { readonly id: string; readonly scope: string; readonly tags: ReadonlyArray<string> }
      >
    }
    // The summary lives in the agent's scope, tagged with its session.
    expect(listed.records.map((record) => [record.scope, record.tags.includes("session:demo-1")]).sort()).toEqual([
      ["global", false],
      ["global", true]
    ])
  })

  it("refuses to reset a database it did not create, and leaves it as it was", async () => {
    const other = Path.join(tmp.dir, "mine.db")
    await engramJson("memory", "add", "Keep me", "--kind", "fact", "--db", other)
    const run = await engram("demo", "--db", other)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("the demo did not create")
    const listed = await engramJson("memory", "list", "--db", other) as { readonly records: ReadonlyArray<unknown> }
    expect(listed.records).toHaveLength(1)
  })
})
