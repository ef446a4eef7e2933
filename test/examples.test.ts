/**
 * `examples/agent.ts`, the complete agent on OpenAI, typechecks with the workspace (`npm run
 * typecheck` includes `examples/`); here it runs as `npm run example:agent` does, without an API
 * key: it says what to set, exits 1 and opens no store.
 */
import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const repoRoot = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "..")

it("the OpenAI agent example refuses to start without OPENAI_API_KEY, with the fix", () => {
  const dir = mkdtempSync(Path.join(tmpdir(), "engram-example-"))
  try {
    const db = Path.join(dir, "example.db")
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS" && key !== "OPENAI_API_KEY")
    )
    const run = spawnSync(
      process.execPath,
      ["--conditions=engram-source", "--import", "tsx", "examples/agent.ts", "Hi, I'm Doug"],
      { cwd: repoRoot, env: { ...env, ENGRAM_DB: db }, encoding: "utf8", timeout: 120_000 }
    )
    expect(run.status).toBe(1)
    expect(run.stderr.trim()).toBe(
      "OPENAI_API_KEY is not set. This example calls OpenAI's API: export OPENAI_API_KEY=sk-... " +
        "(and OPENAI_BASE_URL for an OpenAI-compatible server), then run it again."
    )
    expect(existsSync(db)).toBe(false)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
