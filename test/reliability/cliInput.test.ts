import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import { afterEach, expect, it } from "vitest"
import { tempDir } from "../../packages/cli/test/utilities.js"
import { engram } from "./spawn.js"

const dirs: Array<() => void> = []
afterEach(async () => {
  for (const cleanup of dirs.splice(0)) cleanup()
})

it("engram refuses --tag \"\" and --expires-in-days 0x10 with a message, and creates no store", async () => {
  const { dir, cleanup } = tempDir()
  dirs.push(cleanup)
  const db = NodePath.join(dir, "engram.db")
  const emptyTag = await engram("--db", db, "memory", "add", "hello", "--kind", "fact", "--tag", "")
  expect(emptyTag.code).toBe(1)
  expect(emptyTag.stderr).toContain("--tag: the value is empty")
  const hex = await engram("--db", db, "memory", "add", "hello", "--kind", "fact", "--expires-in-days", "0x10")
  expect(hex.code).toBe(1)
  expect(hex.stderr).toContain("must be a plain decimal number of days")
  expect(NodeFs.existsSync(db)).toBe(false)
}, 120_000)
