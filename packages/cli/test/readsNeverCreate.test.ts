/**
 * Reads never create: every command that only reads refuses a store that does not exist — exit 2,
 * one line naming the path — and leaves no file or directory behind (a mistyped `--db` is not a
 * new, empty store that answers "nothing here").
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { existsSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { engram, expectRefused, tempDir } from "./utilities.js"

describe("read commands on a missing store", { timeout: 300_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const agent = Path.join(tmp.dir, "agent.json")
  writeFileSync(agent, JSON.stringify({ spec: "user-background", persona: "You help." }))

  const reads: ReadonlyArray<ReadonlyArray<string>> = [
    ["sessions"],
    ["inspect", "s-1"],
    ["explain", "mem-000001"],
    ["explain", "mem-000001", "--session", "s-1"],
    ["token", "list"],
    ["compose", "--agent", agent],
    ["memory", "list"],
    ["memory", "search", "postgres"],
    ["memory", "show", "mem-000001"],
    ["doctor"]
  ]

  for (const args of reads) {
    it(`engram ${args.join(" ")}`, async () => {
      const dir = Path.join(tmp.dir, `missing-${args.join("-").replace(/[^a-z0-9-]/gi, "")}`)
      const db = Path.join(dir, "engram.db")
      const run = await engram(...args, "--db", db)
      expectRefused(run, db, 2)
      expect(existsSync(dir)).toBe(false)
    })
  }
})
