/**
 * `examples/agent.ts`, the complete agent on OpenAI, typechecks with the workspace (`npm run
 * typecheck` includes `examples/`); here it runs as `npm run example:agent` does, without an API
 * key: it says what to set, exits 1 and opens no store.
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { expect, it } from "vitest"
import { childEnv, runProcess } from "../packages/cli/test/utilities.js"

it("the OpenAI agent example refuses to start without OPENAI_API_KEY, with the fix", async () => {
  const dir = mkdtempSync(Path.join(tmpdir(), "engram-example-"))
  try {
    const db = Path.join(dir, "example.db")
    const run = await runProcess(
      process.execPath,
      ["--conditions=engram-source", "--import", "tsx", "examples/agent.ts", "Hi, I'm Doug"],
      { env: childEnv({ ENGRAM_DB: db }, ["OPENAI_API_KEY"]), timeout: 120_000 }
    )
    expect(run.code).toBe(1)
    expect(run.stderr.trim()).toBe(
      "OPENAI_API_KEY is not set. This example calls OpenAI's API: export OPENAI_API_KEY=sk-... " +
        "(and OPENAI_BASE_URL for an OpenAI-compatible server), then run it again."
    )
    expect(existsSync(db)).toBe(false)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})
