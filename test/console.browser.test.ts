/**
 * The review console in a real browser: Debian's Chromium driven by playwright-core (no browser
 * download), against `engram serve` started here on a temporary SQLite file. Signs in with a token
 * from `engram token create`, confirms a pending memory and sees it compose into the agent view,
 * rejects one and sees it leave, forgets one and sees it gone from search, and previews a query's
 * projection that equals, byte for byte, the projection a native turn of the same agent gets in
 * the same store and scope. Screenshots of each page go to `test/.output/console/`.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ContextProjection, IdGenerator, RoutingPresets, RoutingSpecs } from "@engram/core"
import { NativeRuntime, PromptObserver } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import { EngramServer } from "@engram/server"
import { SqliteMemoryStore, SqlitePromotionStore, SqliteSessionStore, SqliteTelemetryStore } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { createServer } from "node:net"
import { tmpdir } from "node:os"
import * as Path from "node:path"
import { type Browser, chromium, type Page } from "playwright-core"
import { engram, engramArgs, repoRoot } from "../packages/cli/test/utilities.js"

/** One native-loop turn of session s-browser in project:a on the SQLite file `db`, its call stored. */
const storeSession = (db: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const agent = yield* NativeRuntime.make({
        prefix: [{
          name: "identity",
          source: "role",
          fragments: [{ source: "authored", text: "You help with French." }]
        }],
        memory: {
          scope: "project:a",
          background: RoutingPresets.userBackgroundSections,
          spec: RoutingPresets.userBackground
        },
        workingState: "goal: plan lessons"
      })
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-browser", input: "when do we practise?" })
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          ContextProjection.layer,
          ScriptedModel.layer(() => [ScriptedModel.text("On Tuesdays.")]),
          PromptObserver.layerTelemetry(),
          IdGenerator.sequential("seeded")
        ).pipe(Layer.provideMerge(
          Layer.mergeAll(
            SqlitePromotionStore.layerSqlite,
            SqliteSessionStore.layerSqlite,
            SqliteTelemetryStore.layerSqlite
          )
            .pipe(Layer.provideMerge(SqliteMemoryStore.layer({ filename: db })))
        ))
      )
    )
  )

/**
 * The projection a native turn gets for `input` in project:a, from an agent of the config `engram
 * serve` previews with (`EngramServer.defaultAgent` in the token's scope): the projection in the
 * model-visible request of its first call, as the PromptObserver captured it.
 */
const nativeProjection = (db: string, input: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const agent = yield* NativeRuntime.fromConfig({
        ...EngramServer.defaultAgent,
        scope: "project:a",
        scopes: ["project:a"]
      })
      yield* NativeRuntime.runTurn({ agent, sessionId: "s-native-compare", input })
      const [call] = yield* PromptObserver.captured
      return call!.projection.text
    }).pipe(
      Effect.provide(
        Layer.mergeAll(
          ContextProjection.layer,
          ScriptedModel.layer(() => [ScriptedModel.text("On Tuesday evenings.")]),
          PromptObserver.layerCapture,
          RoutingSpecs.layerPresets,
          IdGenerator.sequential("compare")
        ).pipe(Layer.provideMerge(
          Layer.mergeAll(
            SqlitePromotionStore.layerSqlite,
            SqliteSessionStore.layerSqlite,
            SqliteTelemetryStore.layerSqlite
          )
            .pipe(Layer.provideMerge(SqliteMemoryStore.layer({ filename: db })))
        ))
      )
    )
  )

const chromiumPath = process.env.ENGRAM_CHROMIUM ??
  ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((path) => existsSync(path)) ?? "/usr/bin/chromium"
const shots = Path.join(repoRoot, "test/.output/console")

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      server.close(
        () => (typeof address === "object" && address !== null ? resolve(address.port) : reject(new Error("no port")))
      )
    })
  })

describe("the console in Chromium", { timeout: 240_000 }, () => {
  const dir = mkdtempSync(Path.join(tmpdir(), "engram-console-"))
  const db = Path.join(dir, "engram.db")
  let server: ChildProcess | undefined
  let browser: Browser | undefined
  let base = ""
  let token = ""

  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {})
    })
    return (await response.json()) as { record: { id: string }; hits: ReadonlyArray<unknown> }
  }

  beforeAll(async () => {
    if (!existsSync(chromiumPath)) {
      throw new Error(`Chromium not found at ${chromiumPath}: apt-get install -y chromium (or set ENGRAM_CHROMIUM)`)
    }
    const created = await engram("token", "create", "--scope", "project:a", "--label", "browser-test", "--db", db)
    expect(created.code, created.stderr).toBe(0)
    token = created.stdout.split("\n")[0]!.trim()
    await storeSession(db)
    const port = await freePort()
    base = `http://127.0.0.1:${port}`
    const [node, ...args] = engramArgs(["serve", "--port", String(port), "--db", db])
    server = spawn(node!, args, { cwd: repoRoot, stdio: "ignore", env: { ...process.env, NODE_OPTIONS: "" } })
    for (let i = 0; i < 240; i++) {
      const up = await fetch(base + "/").then((r) => r.ok, () => false)
      if (up) break
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    browser = await chromium.launch({ executablePath: chromiumPath, args: ["--no-sandbox", "--disable-gpu"] })
    mkdirSync(shots, { recursive: true })
  })

  afterAll(async () => {
    await browser?.close()
    server?.kill()
    rmSync(dir, { recursive: true, force: true })
  })

  const shoot = (page: Page, name: string) => page.screenshot({ path: Path.join(shots, `${name}.png`), fullPage: true })

  it("signs in, confirms one pending memory into the agent view, rejects one, forgets one; previews a native turn's projection byte for byte", async () => {
    // Two agent-derived preferences wait for review; the guarded Preferences section composes
    // neither until an operator confirms it. A third memory is a plain fact.
    const brief = (await api("POST", "/api/memories", {
      content: "Answer in short sentences",
      kind: "standing",
      label: "length",
      sourceType: "conversation"
    })).record.id
    const french = (await api("POST", "/api/memories", {
      content: "Reply in French",
      kind: "standing",
      label: "language",
      sourceType: "conversation"
    })).record.id
    const vault = (await api("POST", "/api/memories", {
      content: "The vault code is kumquat",
      kind: "fact",
      sourceType: "operator"
    })).record.id

    // The same server answers the OpenAPI document and Swagger UI.
    expect((await fetch(base + "/openapi.json")).status).toBe(200)
    expect((await fetch(base + "/docs")).status).toBe(200)

    const page = await browser!.newPage({ viewport: { width: 1280, height: 800 } })
    // Each step waits for the page's answer; a loaded 2-core machine can take longer than 30 s.
    page.setDefaultTimeout(90_000)
    page.on("dialog", (dialog) => void dialog.accept())
    await page.goto(base + "/")
    await page.getByTestId("token").waitFor()
    await shoot(page, "login")

    // A wrong token stays on the login form with the server's message.
    await page.getByTestId("token").fill("egm_wrong")
    await page.getByTestId("login").click()
    await expect.poll(() => page.getByTestId("login-error").textContent()).toContain("not valid")

    await page.getByTestId("token").fill(token)
    await page.getByTestId("login").click()
    await page.getByTestId("who").waitFor()
    expect(await page.getByTestId("who").textContent()).toContain("project:a")

    // Pending queue: both preferences wait; the agent composes neither yet.
    await page.getByTestId("tab-pending").click()
    await page.locator(`[data-testid=pending] tr[data-id="${brief}"]`).waitFor()
    await page.locator(`[data-testid=pending] tr[data-id="${french}"]`).waitFor()
    await shoot(page, "pending")
    await page.getByTestId("tab-agent").click()
    await page.getByTestId("prefix").waitFor()
    expect(await page.locator(".chip.memory").count()).toBe(0)

    // Confirm one: it leaves the queue and composes into the prefix as a memory chip with its id.
    await page.getByTestId("tab-pending").click()
    await page.locator(`tr[data-id="${brief}"] [data-testid=confirm]`).click()
    await page.locator(`[data-testid=pending] tr[data-id="${brief}"]`).waitFor({ state: "detached" })
    await page.getByTestId("tab-agent").click()
    const chip = page.locator(`.chip.memory[data-ids~="${brief}"]`)
    await chip.waitFor()
    expect(await chip.textContent()).toContain("Answer in short sentences")
    expect(await chip.getAttribute("title")).toContain(brief)
    expect(await page.locator(".chip.authored").count()).toBeGreaterThan(0)
    await chip.hover()
    await shoot(page, "agent")

    // Reject the other: it leaves the queue and never composes.
    await page.getByTestId("tab-pending").click()
    await page.locator(`tr[data-id="${french}"] [data-testid=reject]`).click()
    await page.getByTestId("empty").waitFor()
    await page.getByTestId("tab-agent").click()
    await page.locator(`.chip.memory[data-ids~="${brief}"]`).waitFor()
    expect(await page.locator(`.chip.memory[data-ids~="${french}"]`).count()).toBe(0)
    expect(await page.getByTestId("report").textContent()).toContain(french)

    // Forget the fact from the memory browser: gone from search.
    await page.getByTestId("tab-memories").click()
    await page.getByTestId("search").fill("kumquat")
    await page.getByTestId("apply").click()
    await page.locator(`tr[data-id="${vault}"]`).click()
    await page.getByTestId("history").waitFor()
    expect(await page.getByTestId("history").textContent()).toBe(vault)
    expect(await page.getByTestId("detail").textContent()).toContain("sourceTypeoperator")
    await shoot(page, "memories")
    await page.getByTestId("detail-forget").click()
    await page.locator(`tr[data-id="${vault}"]`).waitFor({ state: "detached" })
    await page.getByTestId("empty").waitFor()
    expect((await api("GET", "/api/memories/search?q=kumquat")).hits).toEqual([])

    // The prompt inspector: per-section budget bars for a query; the confirmed preference is in
    // the prefix already, so only the recalled fact is projected.
    const lessons = (await api("POST", "/api/memories", {
      content: "French lessons are on Tuesday evenings",
      kind: "fact",
      sourceType: "operator"
    })).record.id
    await page.getByTestId("tab-prompt").click()
    await page.getByTestId("query").fill("when are the French lessons")
    await page.getByTestId("inspect").click()
    await page.locator(`[data-testid=sections] tr[data-section=recalled_memory]`).waitFor()
    expect(await page.locator(`[data-testid=sections] tr[data-section=recalled_memory]`).textContent()).toContain(
      lessons
    )
    expect(await page.getByTestId("projection").textContent()).not.toContain("Reply in French")
    // The default budget is in tokens, and so are the bars.
    expect(await page.getByTestId("budget-use").textContent()).toMatch(/^used \d+ of 16000 tokens \(\d+ chars\)$/)
    expect(
      await page.locator(`[data-testid=sections] tr[data-section=recalled_memory] .bar`).getAttribute("title")
    ).toMatch(/^\d+ \/ 16000 tokens$/)
    await shoot(page, "prompt")
    // What the inspector shows is what a native turn of this agent sends, byte for byte.
    const previewed = await page.locator("[data-testid=projection] .prefix").textContent()

    // Stored calls: the session's call rebuilt from the trajectory, with its fragments and budget.
    await page.getByTestId("session").fill("s-browser")
    await page.getByTestId("load-calls").click()
    await page.locator(`[data-call="1.0"]`).waitFor()
    const call = await page.locator(`[data-call="1.0"]`).textContent()
    expect(call).toContain("rebuilt byte for byte")
    expect(call).toContain("You help with French.")
    expect(call).toContain("when do we practise?")
    await shoot(page, "stored-calls")
    await page.close()
    const native = await nativeProjection(db, "when are the French lessons")
    expect(native).toContain("French lessons are on Tuesday evenings")
    expect(previewed).toBe(native)
  })
})
