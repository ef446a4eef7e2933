/**
 * A newcomer's first hour (issue 23): the demo leaves a store to inspect, `engram sessions` and
 * `GET /api/sessions` list what it holds, the store in use is named, and the tour's wrinkles.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import * as Path from "node:path"
import { createInterface } from "node:readline"
import { promisify } from "node:util"
import { engramArgs, repoRoot, tempDir } from "./utilities.js"

const { cleanup, dir } = tempDir()
afterAll(cleanup)

const environment = (extra: Readonly<Record<string, string>>) => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) =>
      key !== "NODE_OPTIONS" && key !== "npm_command" && !key.startsWith("ENGRAM_")
    )
  ),
  NO_COLOR: "1",
  ...extra
})

interface Run {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const engramIn = async (extra: Readonly<Record<string, string>>, ...args: ReadonlyArray<string>): Promise<Run> => {
  const [node, ...rest] = engramArgs(args)
  try {
    const out = await promisify(execFile)(node!, rest, { cwd: repoRoot, env: environment(extra), timeout: 120_000 })
    return { code: 0, stdout: out.stdout, stderr: out.stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}
const engram = (...args: ReadonlyArray<string>) => engramIn({}, ...args)
const json = async (...args: ReadonlyArray<string>): Promise<any> => {
  const run = await engram(...args, "--json")
  if (run.code !== 0) throw new Error(`engram ${args.join(" ")} exited ${run.code}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

describe("the demo leaves something to inspect", () => {
  const db = Path.join(dir, "demo.db")

  it("demo, then sessions, inspect and explain on its store, as the demo's next steps say", async () => {
    const demo = await engram("--db", db, "demo")
    expect(demo.code, demo.stderr).toBe(0)
    expect(demo.stdout).toContain(
      `Next, on the demo's store:\n  engram --db ${db} sessions\n  engram --db ${db} inspect demo-2`
    )

    const listed = await json("--db", db, "sessions")
    expect(listed.store).toBe(db)
    // Newest first, with turn counts; every call of both sessions was stored.
    expect(listed.sessions.map((s: any) => [s.sessionId, s.turns, s.calls])).toEqual([["demo-2", 1, 1], [
      "demo-1",
      1,
      2
    ]])
    expect(listed.sessions[0].messages).toBe(2)
    const human = await engram("--db", db, "sessions")
    expect(human.stdout).toMatch(/^session +turns +messages +calls +last call\ndemo-2 +1 +2 +1 +\d{4}-/)
    expect(human.stdout).toContain(`2 sessions in ${db}`)

    const inspect = await engram("--db", db, "inspect", "demo-2")
    expect(inspect.code, inspect.stderr).toBe(0)
    expect(inspect.stdout).toContain("rebuilt byte for byte")
    expect(inspect.stdout).toContain("memory mem-000001")

    const explain = await json("--db", db, "explain", "mem-000001", "--session", "demo-2")
    expect(explain.calls.length).toBe(1)
  }, 180_000)

  it("GET /api/sessions lists the sessions a token's scopes may see", async () => {
    const globalToken = (await json("--db", db, "token", "create", "--scope", "global")).secret as string
    const otherToken = (await json("--db", db, "token", "create", "--scope", "project:other")).secret as string
    const [node, ...rest] = engramArgs(["--db", db, "--json", "serve", "--port", "0"])
    const child = spawn(node!, rest, { cwd: repoRoot, env: environment({}), stdio: ["ignore", "pipe", "pipe"] })
    // Awaited before the test ends: a server still closing its store writes in the directory
    // afterAll removes.
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    try {
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once("line", resolve)
        child.once("exit", (code) => reject(new Error(`serve exited ${code}`)))
      })
      const { url } = JSON.parse(line) as { url: string }
      const sessions = async (token: string) => {
        const response = await fetch(`${url}api/sessions`, { headers: { authorization: `Bearer ${token}` } })
        expect(response.status).toBe(200)
        return ((await response.json()) as { sessions: ReadonlyArray<{ sessionId: string; turns: number }> }).sessions
      }
      expect((await sessions(globalToken)).map((s) => [s.sessionId, s.turns])).toEqual([["demo-2", 1], ["demo-1", 1]])
      expect(await sessions(otherToken)).toEqual([])
      expect((await fetch(`${url}api/sessions`)).status).toBe(401)
    } finally {
      child.kill("SIGTERM")
      await exited
    }
  }, 180_000)
})

describe("the store in use is never a surprise", () => {
  it("a store the command line did not name is named on stderr; one it named is not repeated", async () => {
    const db = Path.join(dir, "env.db")
    const added = await engramIn({ ENGRAM_DB: db }, "memory", "add", "--kind", "fact", "From the environment.")
    expect(added.code, added.stderr).toBe(0)
    expect(added.stderr).toBe(`engram: store ${db} (from $ENGRAM_DB; --db <path> or --pg <url> names another)\n`)
    const listed = await engramIn({ ENGRAM_DB: db }, "memory", "list", "--json")
    expect(listed.stderr).toContain(`engram: store ${db} (from $ENGRAM_DB;`)
    expect(JSON.parse(listed.stdout)).toBeDefined()
    const named = await engram("--db", db, "memory", "list")
    expect(named.stdout).toContain("From the environment.")
    expect(named.stderr).toBe("")
  })
})

describe("the tour's wrinkles", () => {
  const db = Path.join(dir, "tour.db")

  it("a memory added without --source waits for review, so the tour's review step has work", async () => {
    const added = await json("--db", db, "memory", "add", "My name is Doug", "--kind", "profile", "--label", "name")
    expect(added.record.reviewState).toBe("pending")
    const pending = await json("--db", db, "memory", "list", "--review", "pending")
    expect(pending.records.map((r: any) => r.id)).toContain(added.record.id)
  })

  it("supersede keeps the source (and so the trust tier) of an operator's memory", async () => {
    const added = await json("--db", db, "memory", "add", "I like tea", "--kind", "profile", "--source", "operator")
    const replaced = await json("--db", db, "memory", "supersede", added.record.id.slice(0, 8), "I like green tea")
    expect(replaced.successor.sourceType).toBe("operator")
    expect(replaced.successor.trustTier).toBe(added.record.trustTier)
    expect(replaced.successor.reviewState).toBe(added.record.reviewState)
  })

  it("explain takes an unambiguous start of a memory id", async () => {
    const added = await json("--db", db, "memory", "add", "Explained by prefix", "--kind", "fact")
    const explained = await json("--db", db, "explain", added.record.id.slice(0, 8))
    expect(explained.memoryId).toBe(added.record.id)
  })

  it("demo --help names the command as it is typed", async () => {
    const help = await engram("demo", "--help")
    expect(help.stdout).toContain("$ engram demo")
  })

  it("memory add without --kind says what to add", async () => {
    const run = await engram("--db", db, "memory", "add")
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      "engram: --kind is required: add --kind <value> (engram memory add --help lists the options and their values)\n"
    )
  })
})
