/**
 * What keeps `npm test` within its time (decision 0195) stays honest: every size a test shrinks for
 * `npm test` through an environment variable is raised again by `npm run soak`, and the files the
 * suite starts first still exist.
 */
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { SLOWEST } from "./support/slowFirst.js"

const root = NodePath.resolve(import.meta.dirname, "..")

const testFiles = (dir: string): Array<string> =>
  NodeFs.readdirSync(NodePath.join(root, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts") && !file.includes("node_modules"))
    .map((file) => NodePath.join(dir, file))

/** Every `ENGRAM_*` size a test reads with a default: `envInt("NAME", n)` or `Number(process.env.NAME ?? n)`. */
const sizeKnobs = (): Map<string, string> => {
  const knobs = new Map<string, string>()
  const files = [
    "test",
    ...NodeFs.readdirSync(NodePath.join(root, "packages")).map((name) => `packages/${name}/test`)
  ].filter((dir) => NodeFs.existsSync(NodePath.join(root, dir))).flatMap(testFiles)
  for (const file of files) {
    const text = NodeFs.readFileSync(NodePath.join(root, file), "utf8")
    for (const match of text.matchAll(/envInt\("(ENGRAM_[A-Z_]+)"|process\.env\.(ENGRAM_[A-Z_]+) \?\? \d/g)) {
      knobs.set(match[1] ?? match[2]!, file)
    }
  }
  return knobs
}

/** `npm run soak` and the scripts it runs, as one command line. */
const soakCommands = (): string => {
  const scripts = (JSON.parse(NodeFs.readFileSync(NodePath.join(root, "package.json"), "utf8")) as {
    readonly scripts: Record<string, string>
  }).scripts
  const seen = new Set<string>()
  const expand = (name: string): string => {
    if (seen.has(name)) return ""
    seen.add(name)
    const script = scripts[name] ?? ""
    return [script, ...[...script.matchAll(/npm run ([\w:]+)/g)].map((match) => expand(match[1]!))].join("\n")
  }
  return expand("soak")
}

describe("npm test's sizes and npm run soak", () => {
  it("every size a test takes from the environment is set by npm run soak, on a file soak runs", () => {
    const knobs = sizeKnobs()
    // The reliability suite's, the races' and the PostgreSQL model check's at least.
    expect([...knobs.keys()]).toEqual(expect.arrayContaining([
      "ENGRAM_RELIABILITY_KILL_CYCLES",
      "ENGRAM_RACE_OPERATIONS",
      "ENGRAM_PG_MODEL_RUNS"
    ]))
    const soak = soakCommands()
    for (const [knob, file] of knobs) {
      const line = soak.split("\n").find((command) => command.includes(`${knob}=`))
      expect([knob, line !== undefined]).toEqual([knob, true])
      // The command that sets it runs the file that reads it (a file, or a folder holding it).
      const runs = line!.split(/\s+/).filter((word) => /^(test|packages)\//.test(word))
      expect([knob, runs.some((path) => file === path || file.startsWith(`${path.replace(/\/$/, "")}/`))]).toEqual([
        knob,
        true
      ])
    }
  })

  it("the files the suite starts first exist", () => {
    for (const file of SLOWEST) expect([file, NodeFs.existsSync(NodePath.join(root, file))]).toEqual([file, true])
  })
})
