/**
 * `engram mcp` as an editor starts it: a child process on stdio (and one on HTTP), driven by the
 * official MCP SDK client. What it saves is read back by the other commands from the same file.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { spawn } from "node:child_process"
import { writeFileSync } from "node:fs"
import * as Path from "node:path"
import { childEnv, engram, engramArgs, engramJson, expectRefused, repoRoot, startEngram, tempDir } from "./utilities.js"

interface ToolResult {
  readonly isError?: boolean
  readonly structuredContent?: Record<string, unknown>
}

// The server's environment: no store fallbacks (the tests name the store), strings only (the SDK's transport).
const serverEnv = () => childEnv({}, ["ENGRAM_PG_URL", "ENGRAM_DB"]) as Record<string, string>

// Each test starts the CLI from source (tsx) at least once: on a loaded machine that takes a while.
describe("engram mcp", { timeout: 180_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)

  it("serves the memory tools over stdio: a save routes into the agent's Background, a second one conflicts", async () => {
    const db = Path.join(tmp.dir, "stdio.db")
    const agent = Path.join(tmp.dir, "agent.json")
    writeFileSync(
      agent,
      JSON.stringify({
        spec: "user-background",
        scope: "project:demo",
        db: "stdio.db",
        persona: "You are the demo project's assistant.",
        background: {
          sections: [
            { id: "about_user", title: "About the User", promotion: "auto" },
            { id: "preferences", title: "Preferences", promotion: "guarded" }
          ]
        }
      })
    )
    const [command, ...args] = engramArgs(["mcp", "--agent", agent])
    const client = new Client({ name: "engram-test", version: "1.0.0" })
    await client.connect(new StdioClientTransport({ command: command!, args, cwd: repoRoot, env: serverEnv() }))
    try {
      expect(client.getServerVersion()?.name).toBe("engram")
      // The agent's prefix is the server's instructions.
      expect(client.getInstructions()).toContain("You are the demo project's assistant.")
      const tools = (await client.listTools()).tools.map((tool) => tool.name)
      expect(tools).toEqual([
        "memory_context",
        "memory_save",
        "memory_recall",
        "memory_list",
        "memory_review",
        "memory_forget"
      ])
      const saved = (await client.callTool({
        name: "memory_save",
        arguments: { kind: "profile", content: "The user's name is Doug", label: "name" }
      })) as ToolResult
      expect(saved.isError).toBe(false)
      expect(saved.structuredContent).toMatchObject({ status: "saved" })
      const conflict = (await client.callTool({
        name: "memory_save",
        arguments: { kind: "profile", content: "The user's name is Douglas", label: "name" }
      })) as ToolResult
      expect(conflict.structuredContent).toMatchObject({
        status: "conflict",
        holder: { id: saved.structuredContent!["id"], label: "name" }
      })
      const context =
        (await client.callTool({ name: "memory_context", arguments: { query: "who am I?" } })) as ToolResult
      expect(context.structuredContent?.["background"]).toContain("## About the User")
      expect(context.structuredContent?.["text"]).toContain("The user's name is Doug")
    } finally {
      await client.close()
    }
    // The agent's own scope and store; routed and promoted, so `engram compose` composes it.
    const listed = await engramJson("memory", "list", "--db", db, "--scope", "project:demo") as {
      readonly records: ReadonlyArray<{ readonly content: string; readonly sourceType: string }>
    }
    expect(listed.records.map((record) => [record.content, record.sourceType])).toEqual([
      ["The user's name is Doug", "conversation"]
    ])
    const composed = await engramJson("compose", "--agent", agent) as { readonly text: string }
    expect(composed.text).toContain("## About the User")
    expect(composed.text).toContain("The user's name is Doug")
  })

  it("serves streamable HTTP with --http", async () => {
    const db = Path.join(tmp.dir, "http.db")
    // `--http 0` binds a free port and prints its URL once it listens: the client connects then.
    const server = await startEngram(["mcp", "--db", db, "--scope", "project:web", "--http", "0"], { env: serverEnv() })
    try {
      const client = new Client({ name: "engram-test", version: "1.0.0" })
      const url = new URL(/(http:\/\/\S+\/mcp)/.exec(server.line)![1]!)
      await client.connect(new StreamableHTTPClientTransport(url))
      const saved = (await client.callTool({
        name: "memory_save",
        arguments: { kind: "decision", content: "Deploys go out on Tuesdays" }
      })) as ToolResult
      expect(saved.structuredContent).toMatchObject({ status: "saved" })
      const recalled = (await client.callTool({ name: "memory_recall", arguments: { query: "deploys" } })) as ToolResult
      expect(recalled.structuredContent).toMatchObject({ memories: [{ content: "Deploys go out on Tuesdays" }] })
      await client.close()
    } finally {
      await server.stop()
    }
    const listed = await engramJson("memory", "list", "--db", db, "--scope", "project:web") as {
      readonly records: ReadonlyArray<{ readonly scope: string }>
    }
    expect(listed.records.map((record) => record.scope)).toEqual(["project:web"])
  })

  it("with --embedder test, memory_recall is hybrid: it finds by sub-word overlap what keywords miss", async () => {
    const db = Path.join(tmp.dir, "hybrid.db")
    for (const content of ["Production runs PostgreSQL 16 in Frankfurt", "The office moved to Lisbon"]) {
      expect((await engram("memory", "add", content, "--kind", "fact", "--db", db)).code).toBe(0)
    }
    expect((await engram("embed", "--embedder", "test", "--db", db)).code).toBe(0)
    const recall = async (...more: ReadonlyArray<string>) => {
      const [command, ...args] = engramArgs(["mcp", "--db", db, ...more])
      const client = new Client({ name: "engram-test", version: "1.0.0" })
      await client.connect(new StdioClientTransport({ command: command!, args, cwd: repoRoot, env: serverEnv() }))
      try {
        expect(client.getServerVersion()?.name).toBe("engram")
        const recalled = (await client.callTool({ name: "memory_recall", arguments: { query: "postgres" } })) as {
          readonly structuredContent?: { readonly memories?: ReadonlyArray<{ readonly content: string }> }
        }
        return (recalled.structuredContent?.memories ?? []).map((memory) => memory.content)
      } finally {
        await client.close()
      }
    }
    expect(await recall()).toEqual([])
    expect(await recall("--embedder", "test")).toEqual(["Production runs PostgreSQL 16 in Frankfurt"])
  })

  it("answers malformed stdin lines with the JSON-RPC parse error and keeps serving", async () => {
    const db = Path.join(tmp.dir, "fuzz.db")
    const [command, ...args] = engramArgs(["mcp", "--db", db])
    const child = spawn(command!, args, { cwd: repoRoot, env: serverEnv(), stdio: ["pipe", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")))
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
    }
    child.stdin.write(["", "garbage", "\u0000", "{\"jsonrpc\":"].join("\n") + "\n")
    child.stdin.write(JSON.stringify(initialize) + "\n")
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
    child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: "two", method: "tools/list" }) + "\n")
    for (let waited = 0; !stdout.includes("\"two\"") && waited < 60_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    child.stdin.end()
    expect(await exited).toBe(0)
    const replies = stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(replies.slice(0, 4)).toEqual(Array.from({ length: 4 }, () => ({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32700, message: expect.stringContaining("Parse error") }
    })))
    expect(replies.slice(4).map((reply) => reply["id"])).toEqual([1, "two"])
    expect(stderr).not.toContain("engram: error")
  })

  it("two clients in a row are two sessions, each with a stored, byte-exact snapshot per call", async () => {
    const db = Path.join(tmp.dir, "two-clients.db")
    expect((await engram("memory", "add", "The staging database runs Postgres 15", "--kind", "fact", "--db", db)).code)
      .toBe(0)
    for (const query of ["which staging database?", "what runs Postgres?"]) {
      const [command, ...args] = engramArgs(["mcp", "--db", db])
      const client = new Client({ name: "Editor X", version: "1.0.0" })
      await client.connect(new StdioClientTransport({ command: command!, args, cwd: repoRoot, env: serverEnv() }))
      try {
        expect(client.getInstructions()).toContain("memory_save")
        const context = (await client.callTool({ name: "memory_context", arguments: { query } })) as ToolResult
        expect(context.structuredContent?.["text"]).toContain("Postgres 15")
      } finally {
        await client.close()
      }
    }
    const listed = await engramJson("sessions", "--db", db) as {
      readonly sessions: ReadonlyArray<{ readonly sessionId: string; readonly calls: number }>
    }
    expect(listed.sessions).toHaveLength(2)
    for (const session of listed.sessions) {
      expect(session.sessionId).toMatch(/^editor-x-[0-9a-f]{8}$/)
      expect(session.calls).toBe(2)
      const calls = await engramJson("inspect", session.sessionId, "--db", db) as ReadonlyArray<{
        readonly turn: number
        readonly call: number
        readonly verified: boolean
      }>
      // Turn 1 is initialize's instructions, turn 2 the memory_context call (counted from 1,
      // decision 0166); both rebuilt byte for byte.
      expect(calls.map((c) => [c.turn, c.call, c.verified])).toEqual([[1, 0, true], [2, 0, true]])
    }
  })

  it("refuses --host beyond loopback without a credential", async () => {
    const refused = await engram("mcp", "--db", Path.join(tmp.dir, "open.db"), "--http", "0", "--host", "0.0.0.0")
    expectRefused(refused, "ENGRAM_MCP_TOKEN")
  })

  it("refuses a scope that is not one, and an agent config without a spec", async () => {
    expectRefused(await engram("mcp", "--scope", "team a"), "is not a scope")
    const agent = Path.join(tmp.dir, "nospec.json")
    writeFileSync(agent, JSON.stringify({ scope: "global" }))
    expectRefused(await engram("mcp", "--agent", agent), "names no spec")
  })
})
