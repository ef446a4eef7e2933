import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawnSync } from "node:child_process"
import { existsSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { engram, engramJson, repoRoot, tempDir } from "./utilities.js"

describe("engram eval", () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)

  it("runs every family on a temporary SQLite file, prints the table and exits 0", () => {
    const run = engram("eval", "--keep")
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^family\s+case\s+result$/)
    for (const family of ["identity-paraphrase", "identity-opt-out", "save-gate", "route-cases", "vocabulary-isolation"]) {
      expect(run.stdout).toMatch(new RegExp(`^${family}\\s+hard\\s+(\\d+)/\\1 passed$`, "m"))
    }
    expect(run.stdout).toMatch(/^identity-paraphrase\s+session 2: "who am I\?" → the prompt holds the name\s+pass$/m)
    expect(run.stdout).not.toMatch(/FAIL/)
    expect(run.stdout).toMatch(/^eval passed: \d+ cases, 0 failed$/m)
    // The database was an explicit file in a new directory under the OS temp dir.
    const kept = /^database kept at (.+)$/m.exec(run.stdout)?.[1]
    expect(kept).toBeDefined()
    expect(Path.dirname(Path.dirname(kept!))).toBe(Path.resolve(tmpdir()))
    expect(existsSync(kept!)).toBe(true)
    rmSync(Path.dirname(kept!), { recursive: true, force: true })
  })

  it("prints the report as JSON with --json", () => {
    const report = engramJson("eval") as {
      passed: boolean
      db: string
      families: ReadonlyArray<{ name: string; hard: boolean; passed: boolean; cases: ReadonlyArray<{ passed: boolean }> }>
    }
    expect(report.passed).toBe(true)
    expect(report.families.map((f) => [f.name, f.hard, f.passed])).toEqual([
      ["identity-paraphrase", true, true],
      ["identity-opt-out", true, true],
      ["save-gate", true, true],
      ["route-cases", true, true],
      ["vocabulary-isolation", true, true]
    ])
    // Without --keep the temporary database is removed.
    expect(existsSync(report.db)).toBe(false)
  })

  it("exits 2 with one line when the database cannot be opened", () => {
    const file = Path.join(tmp.dir, "plain-file")
    writeFileSync(file, "not a directory")
    for (const db of [Path.join(file, "eval.db"), tmp.dir]) {
      const run = engram("eval", "--db", db)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr.trim().split("\n")).toHaveLength(1)
      expect(run.stderr).toMatch(/^engram: cannot open the memory store at /)
    }
  })

  it("refuses a database that already holds memories, and leaves it alone", () => {
    const db = Path.join(tmp.dir, "used.db")
    expect(engram("memory", "add", "A real memory", "--kind", "note", "--db", db).code).toBe(0)
    const before = engramJson("memory", "list", "--include-superseded", "--db", db)
    const run = engram("eval", "--db", db)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("the eval needs an empty store")
    expect(engramJson("memory", "list", "--include-superseded", "--db", db)).toEqual(before)
  })

  it("runs on an explicit, fresh --db file and leaves it there", () => {
    const db = Path.join(tmp.dir, "fresh", "eval.db")
    const run = engram("eval", "--db", db)
    expect(run.code).toBe(0)
    expect(existsSync(db)).toBe(true)
  })

  it("is what npm run eval runs", () => {
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS")), NO_COLOR: "1" }
    const script = spawnSync(
      process.execPath,
      ["--conditions=engram-source", "--import", "tsx", Path.join(repoRoot, "scripts/eval.ts"), "--db", tmp.dir],
      { cwd: repoRoot, encoding: "utf8", env, timeout: 60_000 }
    )
    expect(script.status).toBe(2)
    expect(script.stderr).toMatch(/^engram: cannot open the memory store at /)
    const passing = spawnSync(process.execPath, ["--conditions=engram-source", "--import", "tsx", Path.join(repoRoot, "scripts/eval.ts")], {
      cwd: repoRoot,
      encoding: "utf8",
      env,
      timeout: 60_000
    })
    expect(passing.status).toBe(0)
    expect(passing.stdout).toMatch(/^eval passed: \d+ cases, 0 failed$/m)
  })
})
