import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { PromotionConformance } from "@engram/conformance"
import { InjectionLog, MemoryStore, PromotionStore, SessionStore, TelemetryStore } from "@engram/core"
import { PgDatabase } from "@engram/store-pg"
import {
  SqliteDatabase,
  SqliteEngram,
  SqlitePromotionStore,
  SqliteSessionStore,
  SqliteTelemetryStore
} from "@engram/store-sqlite"
import Database from "better-sqlite3"
import * as DateTime from "effect/DateTime"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { spawn } from "node:child_process"
import { existsSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { describePg } from "../../store-pg/test/pgGate.js"
import { dropSchema, withSql } from "../../store-pg/test/utilities.js"
import { buildLegacyV1 } from "../../store-sqlite/test/fixtures/buildLegacyV1.js"
import { engram, engramArgs, engramJson, expectRefused, repoRoot, type Run, tempDir } from "./utilities.js"

const T0 = Date.UTC(2025, 5, 1, 12, 0, 0, 0)

/**
 * Writes a SQLite store of `count` records (every lifecycle state: superseded chains, confirmed,
 * rejected, expired, with and without an expiry), promotion rows for every tenth record, and
 * `sessions` sessions with messages, a pending interrupt, injection rows and one extraction run.
 */
const buildSource = (filename: string, count: number, sessions = 3) =>
  Effect.gen(function*() {
    const memories = yield* MemoryStore.MemoryStore
    const id = (n: number) => `m-${String(n).padStart(5, "0")}`
    for (let start = 0; start < count; start += 500) {
      yield* memories.write(
        Array.from({ length: Math.min(500, count - start) }, (_, i) => {
          const n = start + i
          return {
            id: id(n),
            content: `memory ${n}: Zürich, Москва, 東京 — ${"🙂".repeat(n % 3)}`,
            kind: (["fact", "note", "profile", "decision"] as const)[n % 4],
            tags: n % 5 === 0 ? ["tagged", `n${n % 7}`] : [],
            sourceType: (["operator", "extracted", "ingest"] as const)[n % 3],
            scope: n % 6 === 0 ? "project:alpha" : "global",
            ...(n % 9 === 0 ? { label: `label ${n}` } : {}),
            ...(n % 11 === 0 ? { expiresInDays: 30 } : {})
          }
        })
      )
    }
    const lifecycle = Math.max(1, Math.floor(count / 10))
    for (let i = 0; i < lifecycle; i++) {
      yield* memories.supersede(id(i * 7), { id: `s-${i}`, content: `revised ${i}`, kind: "fact" })
      yield* memories.setReviewState(id(i * 7 + 1), i % 2 === 0 ? "confirmed" : "rejected")
      yield* memories.expire(id(i * 7 + 2))
    }
    const promotions = yield* PromotionStore.PromotionStore
    yield* promotions.commit(
      Array.from({ length: Math.floor(count / 10) }, (_, i) =>
        PromotionConformance.promotionRow(id(i * 10), i % 4 === 0 ? null : "about_user", `k${i}`))
    )
    const store = yield* SessionStore.SessionStore
    const telemetry = yield* TelemetryStore.TelemetryStore
    for (let s = 0; s < sessions; s++) {
      const at = (offset: number) =>
        DateTime.unsafeMake(T0 + s * 1000 + offset)
      yield* store.append(`thread-${s}`, [
        new SessionStore.OperatorMessage({ text: `Hi, I'm Doug (${s}) — ça va?`, at: at(0) }),
        new SessionStore.AssistantMessage({
          text: "",
          toolCalls: [{ id: "call-1", name: "memory_save", params: { content: "My name is Doug", tags: [] } }],
          at: at(1)
        }),
        new SessionStore.ToolMessage({
          results: [{ id: "call-1", name: "memory_save", isFailure: false, result: { id: id(s) } }],
          at: at(2)
        })
      ])
      if (s % 2 === 0) {
        yield* store.putInterrupt(
          `thread-${s}`,
          new SessionStore.PendingInterrupt({ turn: 1, toolCalls: [], reason: "forget?", at: at(3) })
        )
      }
      yield* store.recordExtraction(
        `thread-${s}`,
        new SessionStore.ExtractionRun({
          at: at(4),
          turns: { first: 1, last: 2 },
          outcome: "extracted",
          calls: 1,
          usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120, estimated: false },
          written: [id(s)],
          corroborated: []
        })
      )
      yield* telemetry.appendInjection(
        new InjectionLog.InjectionLogRow({
          sessionId: `thread-${s}`,
          turn: 0,
          memoryIds: [id(s)],
          sectionLabels: ["recalled_memory"],
          mode: "native",
          at: at(4)
        })
      )
    }
  }).pipe(
    Effect.provide(
      Layer.mergeAll(
        SqlitePromotionStore.layer,
        SqliteSessionStore.layer,
        SqliteTelemetryStore.layer
      ).pipe(
        Layer.provideMerge(SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename }))))
      )
    ),
    Effect.runPromise
  )

interface Summary {
  readonly verified: boolean
  readonly to: string
  readonly schema: string | null
  readonly records: { source: number; target: number; copied: number; alreadyPresent: number; unreadable: number }
  readonly promotions: { source: number; target: number; copied: number }
  readonly sessions: { source: number; target: number }
  readonly messages: { source: number; target: number; copied: number }
  readonly interrupts: { source: number; target: number; copied: number }
  readonly injections: { source: number; target: number; copied: number }
  readonly extractions: { source: number; target: number; copied: number }
  readonly importMarkers: { source: number; target: number; copied: number }
  readonly checksum: { source: string; target: string }
}

/** Starts `engram ...args` in the background; resolves when it exits. `onLine` sees each stderr line. */
const start = (args: ReadonlyArray<string>, onLine: (line: string, kill: (signal: NodeJS.Signals) => void) => void) =>
  new Promise<Run & { readonly signal: NodeJS.Signals | null }>((resolve, reject) => {
    const [command, ...rest] = engramArgs(args)
    const child = spawn(command!, rest, { cwd: repoRoot, env: engramEnv() })
    let stdout = ""
    let stderr = ""
    let pending = ""
    const kill = (signal: NodeJS.Signals) => void child.kill(signal)
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString("utf8")))
    child.stderr.on("data", (chunk: Buffer) => {
      const text = chunk.toString("utf8")
      stderr += text
      pending += text
      const lines = pending.split("\n")
      pending = lines.pop()!
      for (const line of lines) onLine(line, kill)
    })
    child.on("error", reject)
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })

const engramEnv = () => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => key !== "NODE_OPTIONS")),
  NO_COLOR: "1"
})

describe("engram migrate and --pg: bad input is refused in one line, before anything is opened", () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const missing = Path.join(tmp.dir, "missing.db")
  const target = "postgres://engram:hunter2@127.0.0.1:1/engram"

  it("refuses a --from that does not exist, and never creates it", async () => {
    expectRefused(await engram("migrate", "--from", missing, "--to", target), `--from: no such file: ${missing}`)
    expect(existsSync(missing)).toBe(false)
    expectRefused(await engram("migrate", "--from", tmp.dir, "--to", target), `--from: ${tmp.dir} is not a file`)
  })

  it("refuses a --from that is not an Engram store", async () => {
    const text = Path.join(tmp.dir, "notes.txt")
    writeFileSync(text, "not a database\n".repeat(100))
    expectRefused(
      await engram("migrate", "--from", text, "--to", target),
      `cannot read ${text}: the file is damaged: it is not an SQLite database`
    )
  })

  it("refuses a SQLite file that holds no Engram store, and leaves it untouched", async () => {
    const foreign = Path.join(tmp.dir, "foreign.db")
    const db = new Database(foreign)
    db.exec("CREATE TABLE notes (body TEXT)")
    db.close()
    expectRefused(
      await engram("migrate", "--from", foreign, "--to", target),
      `${foreign} is not an Engram store: it has no engram_memories table`
    )
    const reopened = new Database(foreign, { readonly: true })
    const tables = reopened.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()
    reopened.close()
    expect(tables).toEqual([{ name: "notes" }])
  })

  it("refuses --pg or --db given to migrate, which reads --from and writes --to", async () => {
    const file = Path.join(tmp.dir, "some.db")
    writeFileSync(file, "")
    expectRefused(await engram("--pg", target, "migrate", "--from", file, "--to", target), "--pg does not apply to it")
    expectRefused(await engram("--db", file, "migrate", "--from", file, "--to", target), "--db does not apply to it")
  })

  it("refuses bad URLs and schema names without echoing them, and --db with --pg", async () => {
    expectRefused(
      await engram("migrate", "--from", missing, "--to", "mysql://root:hunter2@db/x"),
      "--to: expected a postgres:// or postgresql:// URL, not mysql://…"
    )
    expectRefused(await engram("--pg", "hunter2", "memory", "list"), "--pg: not a URL")
    expectRefused(
      await engram("--pg", target, "--pg-schema", "Not-Valid", "memory", "list"),
      `--pg-schema: "Not-Valid"`
    )
    expectRefused(
      await engram("--pg", target, "--db", Path.join(tmp.dir, "x.db"), "memory", "list"),
      "--db and --pg both name a store"
    )
    expectRefused(
      await engram("--pg-schema", "engram", "memory", "list", "--db", Path.join(tmp.dir, "x.db")),
      "add --pg <url>"
    )
    for (const run of [await engram("--pg", "hunter2", "memory", "list")]) expect(run.stderr).not.toContain("hunter2")
    expect(existsSync(Path.join(tmp.dir, "x.db"))).toBe(false)
  })

  it("reports a server that does not answer with exit code 2, never printing the password", async () => {
    const list = await engram("--pg", target, "memory", "list")
    expectRefused(list, "cannot open the memory store at postgres://engram:***@127.0.0.1:1/engram", 2)
    expect(list.stderr).toContain("ECONNREFUSED")
    expect(list.stderr).not.toContain("hunter2")
  })
})

describePg("engram migrate: SQLite to PostgreSQL through the CLI", (url) => {
  const tmp = tempDir()
  const schema = PgDatabase.temporarySchemaName("engram_cli_migrate")
  const big = PgDatabase.temporarySchemaName("engram_cli_resume")
  const other = PgDatabase.temporarySchemaName("engram_cli_other")
  const cliOnly = PgDatabase.temporarySchemaName("engram_cli_only")
  const source = Path.join(tmp.dir, "engram.db")
  const bigSource = Path.join(tmp.dir, "big.db")
  const RECORDS = 60
  const BIG = 4_000
  // With a password in it (trust authentication ignores it), so every test also checks it never leaks.
  const withPassword = (() => {
    const parsed = new URL(url)
    parsed.password = "s3cret-pw"
    return parsed.toString()
  })()

  const legacy = Path.join(tmp.dir, "knowledge-v1.db")
  // Records the legacy import adds to the small source (it also leaves a marker in engram_meta).
  let imported = 0
  let records = 0

  beforeAll(async () => {
    await buildSource(source, RECORDS)
    await buildSource(bigSource, BIG, 40)
    buildLegacyV1(legacy)
    imported = (await engramJson("memory", "import", legacy, "--db", source) as { imported: number }).imported
    records = RECORDS + RECORDS / 10 + imported
  }, 120_000)
  afterAll(async () => {
    tmp.cleanup()
    for (const name of [schema, big, other, cliOnly]) await Effect.runPromise(dropSchema(url, name))
  })

  const sqliteList = (db: string) =>
    engramJson("--db", db, "memory", "list", "--include-superseded", "--limit", "10000")
  const pgList = (name: string) =>
    engramJson("--pg", withPassword, "--pg-schema", name, "memory", "list", "--include-superseded", "--limit", "10000")

  it("copies records with their lifecycle, promotion rows, sessions and injections, and verifies", async () => {
    const run = await engram("migrate", "--from", source, "--to", withPassword, "--pg-schema", schema, "--json")
    expect(run.code).toBe(0)
    const summary = JSON.parse(run.stdout) as Summary
    expect(imported).toBeGreaterThan(0)
    expect(summary).toMatchObject({
      verified: true,
      schema,
      records: { source: records, target: records, copied: records, alreadyPresent: 0, unreadable: 0 },
      promotions: { source: RECORDS / 10, target: RECORDS / 10, copied: RECORDS / 10 },
      sessions: { source: 3, target: 3 },
      messages: { source: 9, target: 9, copied: 9 },
      interrupts: { source: 2, target: 2, copied: 2 },
      injections: { source: 3, target: 3, copied: 3 },
      extractions: { source: 3, target: 3, copied: 3 },
      importMarkers: { source: 1, target: 1, copied: 1 }
    })
    expect(summary.checksum.source).toMatch(/^[0-9a-f]{64}$/)
    expect(summary.checksum.target).toBe(summary.checksum.source)
    expect(summary.to).toContain(":***@")
    // Progress went to stderr as plain lines (stderr is not a terminal here).
    expect(run.stderr).toContain(`engram migrate: records ${records}/${records} (100%)`)
    expect(run.stderr).toContain("engram migrate: sessions 3/3 (100%)")
    expect(run.stderr + run.stdout).not.toContain("s3cret-pw")
  })

  it("then --pg lists exactly what the SQLite file lists, and searches alike", async () => {
    const listed = await pgList(schema)
    expect(listed).toEqual(await sqliteList(source))
    expect((listed as { records: ReadonlyArray<unknown> }).records).toHaveLength(records)
    const search = async (...store: ReadonlyArray<string>) =>
      (await engramJson(...store, "memory", "search", "revised", "--include-superseded", "--limit", "500") as {
        hits: ReadonlyArray<{ record: { id: string } }>
      }).hits.map((hit) => hit.record.id).sort()
    expect(await search("--pg", withPassword, "--pg-schema", schema)).toEqual(await search("--db", source))
    expect(await search("--db", source)).toHaveLength(RECORDS / 10)
  })

  it("the sessions and the injection log arrived too", async () => {
    const rows = await Effect.runPromise(
      withSql(url, (sql) =>
        sql<{ messages: string; interrupts: string; injections: string }>`SELECT
        (SELECT count(*) FROM engram_session_messages) AS messages,
        (SELECT count(*) FROM engram_session_interrupts) AS interrupts,
        (SELECT count(*) FROM engram_injection_log) AS injections`, schema)
    )
    expect(rows.map((r) => [Number(r.messages), Number(r.interrupts), Number(r.injections)])).toEqual([[9, 2, 3]])
  })

  it("running it again copies nothing and verifies again; --pg writes land in PostgreSQL only", async () => {
    const again = await engramJson("migrate", "--from", source, "--to", withPassword, "--pg-schema", schema) as Summary
    expect(again.records).toMatchObject({ copied: 0, alreadyPresent: records })
    expect(
      again.messages.copied + again.interrupts.copied + again.injections.copied + again.extractions.copied +
        again.promotions.copied +
        again.importMarkers.copied
    ).toBe(0)
    // The legacy import's marker came along: importing the same v1 file into PostgreSQL is a no-op.
    const reimport = await engram("--pg", withPassword, "--pg-schema", schema, "memory", "import", legacy)
    expect(reimport.code).toBe(0)
    expect(reimport.stdout).toContain("already imported")
    const human = await engram("migrate", "--from", source, "--to", withPassword, "--pg-schema", schema)
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/: verified\n/)
    // Each tally is a row of the table: the extraction ledger's three runs on both sides, none
    // written again.
    expect(human.stdout).toContain(`extraction runs ${"3".padStart(10)}${"3".padStart(10)}${"0".padStart(13)}\n`)
    expect(human.stdout).toContain(`checksum        ${again.checksum.source} (source and target agree)`)

    const review = await engram("--pg", withPassword, "--pg-schema", schema, "memory", "review", "m-00004", "confirmed")
    expect(review.code).toBe(0)
    const reviewed = (id: string, list: unknown) =>
      (list as { records: ReadonlyArray<{ id: string; reviewState: string }> }).records.find((r) => r.id === id)
    expect(reviewed("m-00004", await pgList(schema))?.reviewState).toBe("confirmed")
    expect(reviewed("m-00004", await sqliteList(source))?.reviewState).toBe("pending")
  })

  it("a store made with the CLI alone: tables it lacks count as empty and are not created in it", async () => {
    const small = Path.join(tmp.dir, "cli-only.db")
    expect((await engram("--db", small, "memory", "add", "Lunch is at noon", "--kind", "fact", "--id", "lunch")).code)
      .toBe(0)
    expect((await engram("--db", small, "memory", "supersede", "lunch", "Lunch is at one", "--id", "lunch-2")).code)
      .toBe(0)
    const tablesOf = () => {
      const db = new Database(small, { readonly: true })
      const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()
      db.close()
      return names
    }
    const before = tablesOf()
    const summary = await engramJson(
      "migrate",
      "--from",
      small,
      "--to",
      withPassword,
      "--pg-schema",
      cliOnly
    ) as Summary
    expect(summary).toMatchObject({
      records: { source: 2, target: 2, copied: 2 },
      promotions: { source: 0, target: 0 },
      sessions: { source: 0, target: 0 },
      importMarkers: { source: 0, target: 0 }
    })
    expect(tablesOf()).toEqual(before)
    expect(before).not.toContainEqual({ name: "engram_session_messages" })
    expect(await pgList(cliOnly)).toEqual(await sqliteList(small))
  })

  it("a target holding other records fails verification with exit 1, naming the counts", async () => {
    expect(
      (await engram("--pg", withPassword, "--pg-schema", other, "memory", "add", "not from the file", "--kind", "note"))
        .code
    ).toBe(0)
    const run = await engram("migrate", "--from", source, "--to", withPassword, "--pg-schema", other)
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `engram: verification failed: the target holds ${records + 1} records but the source ${records}`
    )
    expect(run.stderr).toContain("nothing in the target was deleted")
    expect(run.stdout).toBe("")
  })

  it("interrupted twice (Ctrl-C, then kill -9), it resumes and ends verified", { timeout: 300_000 }, async () => {
    const args = ["migrate", "--from", bigSource, "--to", withPassword, "--batch-size", "40", "--pg-schema", big]
    const countTarget = () =>
      Effect.runPromise(withSql(url, (sql) => sql<{ n: string }>`SELECT count(*) AS n FROM engram_memories`, big))
        .then((rows) => Number(rows[0]!.n))
    const total = BIG + BIG / 10

    // Ctrl-C after the first progress line: the command stops, says how to resume, exits 130.
    const interrupted = await start(args, (line, kill) => {
      if (/^engram migrate: records \d/.test(line)) kill("SIGINT")
    })
    expect(interrupted.code).toBe(130)
    expect(interrupted.stderr).toContain("interrupted; what was copied stays — run the same command again to resume")
    expect(interrupted.stdout).toBe("")
    const afterFirst = await countTarget()
    expect(afterFirst).toBeGreaterThan(0)
    expect(afterFirst).toBeLessThan(total)
    expect(afterFirst % 40).toBe(0)

    // Killed outright mid-copy: whole batches only.
    const killed = await start(args, (line, kill) => {
      if (/^engram migrate: records \d/.test(line)) kill("SIGKILL")
    })
    expect(killed.signal).toBe("SIGKILL")
    const afterSecond = await countTarget()
    expect(afterSecond).toBeGreaterThanOrEqual(afterFirst)
    expect(afterSecond).toBeLessThan(total)
    expect(afterSecond % 40).toBe(0)

    // Run again: the rest is copied, and everything verifies.
    const resumed = await engram(...args, "--json")
    expect(resumed.code).toBe(0)
    const summary = JSON.parse(resumed.stdout) as Summary
    expect(summary.verified).toBe(true)
    expect(summary.records).toMatchObject({ source: total, target: total, alreadyPresent: afterSecond })
    expect(summary.records.copied).toBe(total - afterSecond)
    expect(summary.promotions).toMatchObject({ source: BIG / 10, target: BIG / 10 })
    expect(summary.sessions).toMatchObject({ source: 40, target: 40 })
    expect(summary.checksum.target).toBe(summary.checksum.source)
    expect(await pgList(big)).toEqual(await sqliteList(bigSource))
  })
})
