/**
 * The README's shell tour runs as written, in order, on a fresh store: every ```sh block from
 * "Quick start" up to "Packages" is read, and each `npx engram …` line (a `&&` chain is split) is
 * run by the bundled CLI (the one the test run built, as `npm run build` links it) in a fresh
 * directory that holds only the repository's `examples/` (the tour names
 * `examples/companion.agent.json` from the repository root). Shell words are read as a POSIX shell
 * reads double quotes; `$ENGRAM_PG_URL` is the variable's value.
 *
 * What the test must supply, and nothing else, is rewritten:
 *
 * - `<id>`: the id the last `memory add` printed (`added <id>`);
 * - `path/to/legacy-knowledge.db`: the store package's v1 fixture;
 * - `serve` gets `--port 0` (a fixed port cannot be shared by parallel test runs), runs until it
 *   prints its ready line, answers `/openapi.json`, and is stopped;
 * - `--pg-schema engram`: a schema of this run's own.
 *
 * Lines that are not `npx engram` are the set-up the test run already did (`npm ci`, `npm test`);
 * any other command fails the test, so a new tour step cannot go untested. The blocks that need
 * PostgreSQL (`$ENGRAM_PG_URL`) run in the PostgreSQL suite, after the steps before them.
 */
import * as PgDatabase from "@engram/store-pg/PgDatabase"
import * as Effect from "effect/Effect"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { childEnv, engramArgs, type Run, runProcess, startEngram } from "../packages/cli/test/utilities.js"
import { describePg } from "../packages/store-pg/test/pgGate.js"
import { dropSchema } from "../packages/store-pg/test/utilities.js"
import { buildLegacyV1 } from "../packages/store-sqlite/test/fixtures/buildLegacyV1.js"

const repoRoot = NodePath.resolve(import.meta.dirname, "..")

/** One command of the tour: its words, the README line and heading it is under, whether it needs PostgreSQL. */
interface Step {
  readonly words: ReadonlyArray<string>
  readonly line: number
  readonly heading: string
  readonly pg: boolean
}

/** Splits a shell line into words: double and single quotes, `$NAME` / `"$NAME"` expanded from `vars`. */
const shellWords = (text: string, vars: Readonly<Record<string, string>>): ReadonlyArray<string> => {
  const words: Array<string> = []
  let word: string | undefined
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === " " || c === "\t") {
      if (word !== undefined) words.push(word)
      word = undefined
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1)
      word = (word ?? "") + text.slice(i + 1, end)
      i = end
    } else if (c === "\"") {
      const end = text.indexOf("\"", i + 1)
      word = (word ?? "") + text.slice(i + 1, end).replace(/\$(\w+)/g, (_, name: string) => vars[name] ?? "")
      i = end
    } else if (c === "$") {
      const name = /^\w+/.exec(text.slice(i + 1))![0]
      word = (word ?? "") + (vars[name] ?? "")
      i += name.length
    } else {
      word = (word ?? "") + c
    }
  }
  if (word !== undefined) words.push(word)
  return words
}

/** The tour's commands in README order; fails on a line that is neither set-up nor `npx engram`. */
const tourSteps = (vars: Readonly<Record<string, string>>): ReadonlyArray<Step> => {
  const lines = NodeFs.readFileSync(NodePath.join(repoRoot, "README.md"), "utf8").split("\n")
  const start = lines.indexOf("## Quick start")
  const end = lines.indexOf("## Packages")
  expect(start).toBeGreaterThan(-1)
  expect(end).toBeGreaterThan(start)
  const steps: Array<Step> = []
  let inShell = false
  let heading = ""
  for (let i = start; i < end; i++) {
    const line = lines[i]!
    if (line.startsWith("#")) heading = line.replace(/^#+ /, "")
    if (line.startsWith("```")) {
      inShell = !inShell && line === "```sh"
      continue
    }
    if (!inShell || line.trim() === "") continue
    for (const command of line.split("&&").map((part) => part.trim())) {
      if (command === "npm ci" || command === "npm test") continue
      const words = shellWords(command, vars)
      if (words[0] !== "npx" || words[1] !== "engram") {
        throw new Error(`README.md:${i + 1}: the tour runs \`${command}\`, which this test does not know how to run`)
      }
      steps.push({ words: words.slice(2), line: i + 1, heading, pg: command.includes("$ENGRAM_PG_URL") })
    }
  }
  return steps
}

// As npx runs it (the tour says `npx engram`): npx sets npm_command, and the commands a command
// suggests then start with `npx engram`.
const env = childEnv({ npm_command: "exec" }, ["ENGRAM_DB", "ENGRAM_PG_URL"])

/**
 * Runs `steps` in a fresh directory; each must exit 0. Returns every step's output by README line.
 */
const runTour = async (
  steps: ReadonlyArray<Step>,
  options: { readonly pgSchema?: string }
): Promise<ReadonlyMap<number, Run>> => {
  const cwd = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-tour-"))
  NodeFs.symlinkSync(NodePath.join(repoRoot, "examples"), NodePath.join(cwd, "examples"))
  const legacy = NodePath.join(cwd, "legacy-knowledge.db")
  buildLegacyV1(legacy)
  const outputs = new Map<number, Run>()
  let lastAdded: string | undefined
  try {
    for (const step of steps) {
      const args = step.words.map((word) => {
        if (word === "<id>") {
          expect(lastAdded, `README.md:${step.line}: <id> before any memory add`).toBeDefined()
          return lastAdded!
        }
        if (word === "path/to/legacy-knowledge.db") return legacy
        return word
      })
      const schema = args.indexOf("--pg-schema")
      if (schema !== -1 && options.pgSchema !== undefined) args[schema + 1] = options.pgSchema
      if (args.includes("serve")) {
        const server = await startEngram([...args, "--port", "0"], { cwd, env })
        try {
          const url = /https?:\/\/\S+/.exec(server.line)?.[0]
          expect(url, `README.md:${step.line}: serve's ready line: ${server.line}`).toBeDefined()
          expect((await fetch(new URL("openapi.json", url))).status).toBe(200)
          outputs.set(step.line, { code: 0, stdout: server.line, stderr: "" })
        } finally {
          await server.stop()
        }
        continue
      }
      const run = await runProcess(process.execPath, engramArgs(args).slice(1), { cwd, env, timeout: 120_000 })
      expect(run.code, `README.md:${step.line}: engram ${args.join(" ")}\n${run.stdout}\n${run.stderr}`).toBe(0)
      const added = /^added ([0-9a-f-]{36})$/m.exec(run.stdout)
      if (args.includes("add") && added !== null) lastAdded = added[1]
      outputs.set(step.line, run)
    }
  } finally {
    NodeFs.rmSync(cwd, { recursive: true, force: true })
  }
  return outputs
}

/** The output of the step whose words start with `prefix`. */
const outputOf = (steps: ReadonlyArray<Step>, outputs: ReadonlyMap<number, Run>, ...prefix: ReadonlyArray<string>) => {
  const step = steps.find((candidate) => prefix.every((word, i) => candidate.words[i] === word))
  expect(step, `no tour step starts with ${prefix.join(" ")}`).toBeDefined()
  return outputs.get(step!.line)!
}

/** The lines of the `nth` (0: the first) ```sh block after the line `heading`. */
const shellBlockAfter = (heading: string, nth = 0): ReadonlyArray<string> => {
  const lines = NodeFs.readFileSync(NodePath.join(repoRoot, "README.md"), "utf8").split("\n")
  let open = lines.indexOf("```sh", lines.indexOf(heading))
  for (let skip = 0; skip < nth; skip++) open = lines.indexOf("```sh", lines.indexOf("```", open + 1) + 1)
  return lines.slice(open + 1, lines.indexOf("```", open + 1))
}

describe("the README's shell tour", () => {
  it("runs in order on a fresh store, and says what the README says it says", { timeout: 600_000 }, async () => {
    const steps = tourSteps({}).filter((step) => !step.pg)
    expect(steps.length).toBeGreaterThanOrEqual(14)
    const outputs = await runTour(steps, {})
    const demo = outputOf(steps, outputs, "demo").stdout
    expect(demo).toMatch(/From what I remember: .*Doug/)
    // The demo's next steps are the README's, word for word.
    const next = demo.slice(demo.indexOf("Next, on the demo's store:\n")).split("\n").slice(1)
      .map((line) => line.trim()).filter((line) => line.length > 0)
    expect(next).toEqual(shellBlockAfter("## Quick start", 1))
    expect(outputOf(steps, outputs, "--db", "./.engram/demo.db", "sessions").stdout).toMatch(/^demo-2 +1 /m)
    expect(outputOf(steps, outputs, "--db", "./.engram/demo.db", "inspect").stdout).toContain("rebuilt byte for byte")
    // Added without --source, the memory waits for review: the next steps have something to do.
    expect(outputOf(steps, outputs, "memory", "list", "--review", "pending").stdout).toContain("My name is Doug")
    expect(outputOf(steps, outputs, "memory", "supersede").stdout).toContain("My name is Douglas")
    expect(outputOf(steps, outputs, "memory", "import").stdout).toMatch(/imported \d+/)
    const compose = outputOf(steps, outputs, "--db", "./.engram/tour.db", "compose").stdout
    expect(compose).toContain("- **name**: My name is Doug")
    expect(compose).toContain("review-required")
    // The fix it prints reaches the same store, as the reader ran it.
    expect(compose).toMatch(/fix: npx engram --db \.\/\.engram\/tour\.db memory review [0-9a-f-]{36} confirmed/)
  })
})

describe("the README's quick start is what CI runs", () => {
  it("two commands on a fresh clone, one for the tests, and .ci/run runs exactly those", () => {
    expect(shellBlockAfter("## Quick start")).toEqual(["npm ci", "npx engram demo"])
    expect(shellBlockAfter("To run the tests:")).toEqual(["npm test"])
    const ci = NodeFs.readFileSync(NodePath.join(repoRoot, ".ci/run"), "utf8").split("\n")
      .filter((line) => /^npm |^npx /.test(line))
    expect(ci.slice(0, 2)).toEqual(["npm ci", "npx engram demo"])
    expect(ci.at(-1)).toBe("npm test")
    // npm ci bundles the CLI (prepare), so the demo runs with no build step between.
    const manifest = JSON.parse(NodeFs.readFileSync(NodePath.join(repoRoot, "package.json"), "utf8")) as {
      readonly scripts: Record<string, string>
    }
    expect(manifest.scripts["prepare"]).toBe("node --conditions=engram-source --import tsx scripts/cliBundle.ts")
  })
})

describePg("the README's shell tour on PostgreSQL", (url) => {
  const schema = PgDatabase.temporarySchemaName("engram_readme_tour")
  afterAll(() => Effect.runPromise(dropSchema(url, schema)))

  it("section 2's store, copied across and listed with --pg", { timeout: 600_000 }, async () => {
    // The PostgreSQL steps copy the store section 2 wrote: that section, in order, is the run.
    const pgHeading = tourSteps({ ENGRAM_PG_URL: url }).find((step) => step.pg)!.heading
    const steps = tourSteps({ ENGRAM_PG_URL: url }).filter((step) => step.heading === pgHeading)
    expect(steps.filter((step) => !step.pg).length).toBeGreaterThanOrEqual(5)
    const outputs = await runTour(steps, { pgSchema: schema })
    expect(outputOf(steps, outputs, "--pg", url).stdout)
      .toContain("My name is Douglas")
  })
})
