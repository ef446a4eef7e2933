import { afterAll, describe, expect, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { childEnv, engram, engramArgs, engramJson, engramWithin, repoRoot, runProcess, tempDir } from "./utilities.js"

// Two tests run the whole eval (a few hundred sessions) in a child process; a loaded machine is slow.
// They cover between them the table and --json, --keep and an explicit --db (decision 0195).
const EVAL_TIMEOUT = 300_000

const families = [
  "ideal-save",
  "label-spellings",
  "wrong-kind",
  "no-label",
  "correction-retry",
  "correction-alias",
  "correction-gives-up",
  "opt-out",
  "guarded-pending",
  "over-budget",
  "correction-unlabelled",
  "unknown-label",
  "many-facts",
  "scope-isolation",
  "scope-narrower",
  "correction-any-label",
  "multi-part-identity",
  "restatement",
  "joined-scripts",
  "route-cases",
  "vocabulary-isolation"
]

/** The one-current-truth families (issue 38): no routing column. */
const truthFamilies = ["same-label-facts", "approval-orders", "knowledge-update", "as-of"]

/** The extraction families: one case each, no routing column. */
const extractionFamilies = [
  "extract-new-fact",
  "extract-correction",
  "extract-duplicate",
  "extract-near-duplicate",
  "extract-instruction",
  "extract-chatty",
  "extract-incognito"
]

describe("engram eval", () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)

  it("runs every family on a temporary SQLite file, prints the table and exits 0", async () => {
    const run = await engramWithin(EVAL_TIMEOUT - 10_000, {}, "eval", "--keep")
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^family\s+kind\s+cases\s+rate\s+routing\s+bytes\/request$/)
    for (const family of families) {
      expect(run.stdout).toMatch(
        new RegExp(`^${family}\\s+hard\\s+(\\d+)/\\1\\s+100\\.0%\\s+100\\.0% \\((\\d+)/\\2\\)`, "m")
      )
    }
    for (const family of [...truthFamilies, ...extractionFamilies]) {
      expect(run.stdout).toMatch(new RegExp(`^${family}\\s+hard\\s+(\\d+)/\\1\\s+100\\.0%\\s+-`, "m"))
    }
    expect(run.stdout).toMatch(/^extraction: \d+ model calls, \d+ tokens for \d+ extracted memories \(/m)
    expect(run.stdout).not.toMatch(/FAIL/)
    // The poisoning screen: the tuning half is hard, the held-out half, the blind third and the Q&A probe soft; a
    // table per style follows.
    expect(run.stdout).toMatch(/^poisoning-screen\s+hard\s+(\d+)\/\1\s+100\.0%/m)
    expect(run.stdout).toMatch(/^poisoning-screen-heldout\s+soft\s+\d+\/\d+/m)
    expect(run.stdout).toMatch(/^poisoning-screen-blind\s+soft\s+\d+\/\d+/m)
    expect(run.stdout).toMatch(/^poisoning-screen-qa\s+soft\s+\d+\/\d+/m)
    expect(run.stdout).toMatch(/^poisoning screen: flagged\s+tuning half\s+held-out half\s+blind third\s+Q&A probe$/m)
    expect(run.stdout).toMatch(
      new RegExp(
        `^eval passed: \\d+ cases in ${
          families.length + truthFamilies.length + extractionFamilies.length + 4
        } families, `,
        "m"
      )
    )
    // The database was an explicit file in a new directory under the OS temp dir.
    const kept = /^database kept at (.+)$/m.exec(run.stdout)?.[1]
    expect(kept).toBeDefined()
    expect(Path.dirname(Path.dirname(kept!))).toBe(Path.resolve(tmpdir()))
    expect(existsSync(kept!)).toBe(true)
    rmSync(Path.dirname(kept!), { recursive: true, force: true })
  }, EVAL_TIMEOUT)

  // One full eval prints JSON and runs on an explicit, fresh --db file (in a directory that does not
  // exist yet), which it leaves there; the temporary file's removal is the interrupted run's below.
  it("prints the report as JSON with --json, on an explicit, fresh --db file it leaves there", async () => {
    const db = Path.join(tmp.dir, "fresh", "eval.db")
    const run = await engramWithin(EVAL_TIMEOUT - 10_000, {}, "eval", "--json", "--db", db)
    expect(run.code).toBe(0)
    const report = JSON.parse(run.stdout) as {
      passed: boolean
      db: string
      families: ReadonlyArray<
        { name: string; hard: boolean; passed: boolean; rate: number; routingAccuracy: number | null }
      >
    }
    expect(report.passed).toBe(true)
    expect(report.families.map((f) => [f.name, f.hard, f.passed, f.rate, f.routingAccuracy]).slice(0, -4)).toEqual(
      [
        ...families.map((name) => [name, true, true, 1, 1]),
        ...truthFamilies.map((name) => [name, true, true, 1, null]),
        ...extractionFamilies.map((name) => [name, true, true, 1, null])
      ]
    )
    // The poisoning screen: the tuning half (hard) meets its targets; the held-out half, the
    // blind third and the question-and-answer probe are reported.
    expect(report.families.slice(-4).map((f) => [f.name, f.hard])).toEqual([
      ["poisoning-screen", true],
      ["poisoning-screen-heldout", false],
      ["poisoning-screen-blind", false],
      ["poisoning-screen-qa", false]
    ])
    expect(report.families.at(-4)!.passed).toBe(true)
    expect(report.db).toBe(db)
    expect(existsSync(db)).toBe(true)
  }, EVAL_TIMEOUT)

  it("without --keep removes its temporary database, even when interrupted (Ctrl-C)", async () => {
    // The child's temp dir is a directory of this test's own, so what is left there is the eval's.
    const temp = Path.join(tmp.dir, "tmp")
    mkdirSync(temp)
    const [node, ...args] = engramArgs(["eval"])
    const child = spawn(node!, args, { cwd: repoRoot, env: childEnv({ TMPDIR: temp }, ["ENGRAM_DB", "ENGRAM_PG_URL"]) })
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    // Interrupted once the eval is under way: its database exists.
    const started = () =>
      readdirSync(temp, { recursive: true, encoding: "utf8" }).some((name) => name.endsWith("eval.db"))
    for (let waited = 0; !started() && child.exitCode === null && waited < 60_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(started()).toBe(true)
    child.kill("SIGINT")
    expect(await exited, stderr).toBe(130)
    expect(readdirSync(temp)).toEqual([])
  }, EVAL_TIMEOUT)

  it("exits 2 with one line when the database cannot be opened", async () => {
    const file = Path.join(tmp.dir, "plain-file")
    writeFileSync(file, "not a directory")
    for (const db of [Path.join(file, "eval.db"), tmp.dir]) {
      const run = await engramWithin(EVAL_TIMEOUT - 10_000, {}, "eval", "--db", db)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr.trim().split("\n")).toHaveLength(1)
      expect(run.stderr).toMatch(/^engram: cannot open the memory store at /)
    }
  }, EVAL_TIMEOUT)

  it("refuses a database that already holds memories, and leaves it alone", async () => {
    const db = Path.join(tmp.dir, "used.db")
    expect((await engram("memory", "add", "A real memory", "--kind", "note", "--db", db)).code).toBe(0)
    const before = await engramJson("memory", "list", "--include-superseded", "--db", db)
    const run = await engramWithin(EVAL_TIMEOUT - 10_000, {}, "eval", "--db", db)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("the eval needs an empty store")
    expect(await engramJson("memory", "list", "--include-superseded", "--db", db)).toEqual(before)
  }, EVAL_TIMEOUT)

  it("--family runs only the named families, in the eval's order, and the verdict covers only them", async () => {
    const table = await engramWithin(EVAL_TIMEOUT - 10_000, {}, "eval", "--family", "same-label-facts")
    expect(table.stderr).toBe("")
    expect(table.code).toBe(0)
    const rows = table.stdout.split("\n").slice(2).filter((line) => /^\S+\s+(hard|soft)\s/.test(line))
    expect(rows).toHaveLength(1)
    expect(rows[0]).toMatch(/^same-label-facts\s+hard\s+(\d+)\/\1\s+100\.0%\s+-/)
    expect(table.stdout).toMatch(/^eval passed: \d+ cases in 1 family, 0 failed$/m)

    const json = await engramWithin(
      EVAL_TIMEOUT - 10_000,
      {},
      "eval",
      "--json",
      "--family",
      "as-of",
      "--family",
      "same-label-facts"
    )
    expect(json.code).toBe(0)
    const report = JSON.parse(json.stdout) as { passed: boolean; families: ReadonlyArray<{ name: string }> }
    expect(report.passed).toBe(true)
    expect(report.families.map((f) => f.name)).toEqual(["same-label-facts", "as-of"])
  }, EVAL_TIMEOUT)

  it("refuses an unknown --family with one line naming every family, before any store is opened (exit 1)", async () => {
    const db = Path.join(tmp.dir, "never", "eval.db")
    const run = await engramWithin(EVAL_TIMEOUT - 10_000, {}, "eval", "--family", "no-such-family", "--db", db)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(run.stderr).toMatch(/^engram: --family: no eval family named "no-such-family"; the families are: /)
    const known = run.stderr.trimEnd().split("the families are: ")[1]!.split(", ")
    expect(known).toEqual([
      ...families,
      ...truthFamilies,
      ...extractionFamilies,
      "poisoning-screen",
      "poisoning-screen-heldout",
      "poisoning-screen-blind",
      "poisoning-screen-qa"
    ])
    expect(existsSync(Path.dirname(db))).toBe(false)
  }, EVAL_TIMEOUT)

  it("npm run eval passes --family through (scripts/eval.ts reaches the flag's refusal)", async () => {
    const script = await runProcess(
      process.execPath,
      ["--conditions=engram-source", "--import", "tsx", Path.join(repoRoot, "scripts/eval.ts"), "--family", "nope"],
      { env: childEnv(), timeout: 180_000 }
    )
    expect(script.code).toBe(1)
    expect(script.stderr).toMatch(/^engram: --family: no eval family named "nope"; the families are: ideal-save, /)
  }, EVAL_TIMEOUT)

  it("npm run eval is engram eval (from scripts/eval.ts it reaches the eval's own refusal)", async () => {
    const env = childEnv()
    const script = await runProcess(
      process.execPath,
      ["--conditions=engram-source", "--import", "tsx", Path.join(repoRoot, "scripts/eval.ts"), "--db", tmp.dir],
      { env, timeout: 180_000 }
    )
    expect(script.code).toBe(2)
    expect(script.stderr).toMatch(/^engram: cannot open the memory store at /)
    // scripts/eval.ts only puts "eval" in front of its arguments and runs the CLI: the passing runs
    // above are the one npm run eval makes, and reaching the eval's own refusal proves the script's path.
  }, EVAL_TIMEOUT)
})
