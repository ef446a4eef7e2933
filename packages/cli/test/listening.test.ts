/**
 * `engram serve` and `engram mcp --http` say where they are: one line with the URL once the port
 * is bound (a JSON line with --json), the port `--port 0` picked, and a one-line refusal naming
 * the address when they cannot listen.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import { execFile, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { createServer } from "node:net"
import * as Path from "node:path"
import { createInterface } from "node:readline"
import { promisify } from "node:util"
import { engramArgs, repoRoot, tempDir } from "./utilities.js"

const { cleanup, dir } = tempDir()
afterAll(cleanup)

const childEnv = () => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS" && !key.startsWith("ENGRAM_"))
  ),
  NO_COLOR: "1"
})

/** Starts `engram ...args`, resolves with its first stdout line, and stops it. */
const firstLine = async (
  ...args: ReadonlyArray<string>
): Promise<{
  line: string
  check: (url: string, init?: RequestInit) => Promise<number>
  read: (urls: ReadonlyArray<string>) => Promise<ReadonlyArray<{ status: number; type: string | null; text: string }>>
}> => {
  const [node, ...rest] = engramArgs(args)
  const child = spawn(node!, rest, { cwd: repoRoot, env: childEnv(), stdio: ["pipe", "pipe", "pipe"] })
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += String(chunk)))
  const lines = createInterface({ input: child.stdout })
  const line = await new Promise<string>((resolve, reject) => {
    lines.once("line", resolve)
    child.once(
      "exit",
      (code) => reject(new Error(`engram ${args.join(" ")} exited ${code} before it was ready: ${stderr}`))
    )
  })
  // Waits for the child to exit: a server still closing its store writes files in `dir`, and
  // removing the directory under it fails with ENOTEMPTY.
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGTERM")
    })
  return {
    line,
    check: async (url, init) => {
      try {
        return (await fetch(url, init)).status
      } finally {
        await stop()
      }
    },
    read: async (urls) => {
      try {
        return await Promise.all(urls.map(async (url) => {
          const response = await fetch(url)
          return { status: response.status, type: response.headers.get("content-type"), text: await response.text() }
        }))
      } finally {
        await stop()
      }
    }
  }
}

/**
 * Whether process `pid` has ended: no such process, or a zombie its new parent has not reaped yet
 * (read from /proc where there is one).
 */
const processGone = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
  } catch {
    return true
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.startsWith("Z") === true
  } catch {
    return false
  }
}

const runToEnd = async (...args: ReadonlyArray<string>) => {
  const [node, ...rest] = engramArgs(args)
  try {
    const out = await promisify(execFile)(node!, rest, { cwd: repoRoot, env: childEnv(), timeout: 60_000 })
    return { code: 0, stdout: out.stdout, stderr: out.stderr }
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string }
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr }
  }
}

/** A port some other program holds for the duration of `use`. */
const withBusyPort = async <A>(use: (port: number) => Promise<A>): Promise<A> => {
  const holder = createServer()
  await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
  const address = holder.address()
  try {
    return await use(typeof address === "object" && address !== null ? address.port : 0)
  } finally {
    holder.close()
  }
}

describe("serve and mcp --http say where they are", () => {
  it("serve --port 0 prints the URL of the port it bound, and that URL answers", async () => {
    const db = Path.join(dir, "serve.db")
    const { check, line } = await firstLine("--db", db, "serve", "--port", "0")
    const match = /^engram serve: listening on (http:\/\/127\.0\.0\.1:(\d+)\/) \(.*\); store (.+)$/.exec(line)
    expect(match, line).not.toBeNull()
    expect(Number(match![2])).toBeGreaterThan(0)
    expect(match![3]).toBe(db)
    expect(await check(`${match![1]}openapi.json`)).toBe(200)
  })

  it("with --json, the ready line is one JSON document", async () => {
    const db = Path.join(dir, "serve-json.db")
    const { check, line } = await firstLine("--db", db, "--json", "serve", "--port", "0")
    const ready = JSON.parse(line) as { ready: boolean; url: string; port: number; host: string; store: string }
    expect(ready).toMatchObject({ ready: true, command: "serve", host: "127.0.0.1", store: db })
    expect(ready.url).toBe(`http://127.0.0.1:${ready.port}/`)
    expect(await check(`${ready.url}openapi.json`)).toBe(200)
  })

  it("serve answers the review console from the bundle: the page, its module and its style sheet", async () => {
    const { line, read } = await firstLine("--db", Path.join(dir, "serve-console.db"), "--json", "serve", "--port", "0")
    const { url } = JSON.parse(line) as { url: string }
    const [page, app, css, other] = await read([
      url,
      `${url}console/app.js`,
      `${url}console/console.css`,
      `${url}console/nothing.js`
    ])
    expect(page).toMatchObject({ status: 200, type: "text/html; charset=utf-8" })
    expect(page!.text).toContain("<script type=\"module\" src=\"/console/app.js\"></script>")
    // The module bundled from the console's TypeScript, beside the CLI's chunks.
    expect(app).toMatchObject({ status: 200, type: "text/javascript; charset=utf-8" })
    expect(app!.text).toContain("Review queue")
    expect(css).toMatchObject({ status: 200, type: "text/css; charset=utf-8" })
    expect(other!.status).toBe(404)
  })

  it("mcp --http 0 prints the URL of its /mcp endpoint", async () => {
    const db = Path.join(dir, "mcp.db")
    const { check, line } = await firstLine("--db", db, "--json", "mcp", "--http", "0")
    const ready = JSON.parse(line) as { url: string; port: number; command: string; store: string }
    expect(ready).toMatchObject({ command: "mcp", store: db, url: `http://127.0.0.1:${ready.port}/mcp` })
    // The endpoint answers an MCP client's first request.
    const initialize = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "test", version: "0" } }
    }
    expect(
      await check(ready.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify(initialize)
      })
    ).toBe(200)
  })

  it("a port in use is one line naming the address (serve and mcp)", async () => {
    await withBusyPort(async (port) => {
      const serve = await runToEnd("--db", Path.join(dir, "busy.db"), "serve", "--port", String(port))
      expect(serve.code).toBe(1)
      expect(serve.stderr).toBe(
        `engram: cannot listen on 127.0.0.1:${port}: the port is in use; pick another with --port ` +
          "(0 picks a free one) (EADDRINUSE)\n"
      )
      const mcp = await runToEnd("--db", Path.join(dir, "busy.db"), "--json", "mcp", "--http", String(port))
      expect(mcp.code).toBe(1)
      expect(JSON.parse(mcp.stdout)).toEqual({
        error: {
          problem: `cannot listen on 127.0.0.1:${port}: the port is in use; pick another with --http ` +
            "(0 picks a free one) (EADDRINUSE)",
          exitCode: 1
        }
      })
    })
  })

  it("a host that is not this machine's is one line naming it", async () => {
    const run = await runToEnd(
      "--db",
      Path.join(dir, "host.db"),
      "serve",
      "--port",
      "0",
      "--host",
      "no-such-host.invalid"
    )
    expect(run.code).toBe(1)
    expect(run.stderr).toMatch(
      /^engram: cannot listen on no-such-host\.invalid:0: no-such-host\.invalid is not an address of this machine; .*\((ENOTFOUND|EAI_AGAIN)\)\n$/
    )
  })
})

describe("a server whose starter is gone", () => {
  // `npx engram serve`: npm exec runs a shell that runs engram. A SIGTERM to npx ends npm and the
  // shell but never reaches engram; re-parented, it must stop by itself (within its 1 s check).
  it("stops when the shell that started it is killed, as under npx", async () => {
    const [node, ...rest] = engramArgs(["--db", Path.join(dir, "orphan.db"), "serve", "--port", "0"])
    const quoted = [node!, ...rest].map((word) => `'${word.replace(/'/g, "'\\''")}'`).join(" ")
    // The shell stays alive as engram's parent (a lone command would be exec'd) and names engram's
    // process id on stderr, so that the test can wait for that process itself to end.
    const shell = spawn("sh", ["-c", `${quoted} & echo "$!" >&2; wait; true`], {
      cwd: repoRoot,
      env: childEnv(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    const pid = new Promise<number>((resolve) =>
      createInterface({ input: shell.stderr }).once("line", (line) => resolve(Number(line)))
    )
    const ready = await new Promise<string>((resolve, reject) => {
      createInterface({ input: shell.stdout }).once("line", resolve)
      shell.once("exit", (code) => reject(new Error(`the shell exited ${code} before engram was ready`)))
    })
    const url = /listening on (\S+)/.exec(ready)![1]!
    expect((await fetch(url)).status).toBe(200)
    shell.kill("SIGKILL")
    // Stopped means the process is gone, not only its port closed: until it exits it may still be
    // closing its store in `dir` (removing the directory under it fails with ENOTEMPTY).
    const engramPid = await pid
    let stopped = false
    for (let waited = 0; waited < 20_000 && !stopped; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      stopped = processGone(engramPid)
    }
    expect(stopped).toBe(true)
    expect(await fetch(url).then(() => "answered", () => "refused")).toBe("refused")
  }, 120_000)
})
