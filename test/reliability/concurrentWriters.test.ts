import Database from "better-sqlite3"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"
import { expect, it } from "vitest"
import { envInt, runWorker } from "./spawn.js"

const PROCESSES = envInt("ENGRAM_RELIABILITY_WRITERS", 4)
const WRITES = envInt("ENGRAM_RELIABILITY_WRITES", 60)

// Several OS processes write, read and review on one SQLite file at once, as two CLI invocations
// or a CLI beside a running agent do. Every write must succeed, none may be lost, and the file
// must pass SQLite's full integrity check afterwards.
it(
  `${PROCESSES} processes writing ${WRITES} records each to one SQLite file: 0 failed, 0 lost, integrity ok`,
  async () => {
    const dir = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "engram-writers-"))
    const file = NodePath.join(dir, "engram.db")
    // Create the store first, so the workers race on writes rather than on the first migration.
    const first = await runWorker("workers/writer.ts", [file, "0", "1"])
    expect(JSON.parse(first.stdout)).toEqual({ written: ["w0-0"], failures: [] })

    const results = await Promise.all(
      Array.from({ length: PROCESSES }, (_, i) => runWorker("workers/writer.ts", [file, String(i + 1), String(WRITES)]))
    )
    const reports = results.map((result) => {
      expect(result.code, result.stderr).toBe(0)
      return JSON.parse(result.stdout) as { written: Array<string>; failures: Array<string> }
    })
    const failures = reports.flatMap((report) => report.failures)
    const written = reports.flatMap((report) => report.written)
    process.stdout.write(
      `concurrent writers: ${PROCESSES} processes x ${WRITES} writes, ${failures.length} failed operations, ` +
        `${written.length} acknowledged\n`
    )
    expect(failures).toEqual([])
    expect(written).toHaveLength(PROCESSES * WRITES)

    const db = new Database(file, { readonly: true })
    try {
      const stored = new Set(db.prepare("SELECT id FROM engram_memories").pluck().all() as Array<string>)
      expect(written.filter((id) => !stored.has(id))).toEqual([])
      expect(stored.size).toBe(PROCESSES * WRITES + 1)
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok")
    } finally {
      db.close()
      NodeFs.rmSync(dir, { recursive: true, force: true })
    }
  },
  180_000
)
