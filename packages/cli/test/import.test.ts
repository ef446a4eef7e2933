import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Path from "node:path"
import { buildLegacyV1, legacyChunks, unimportableIds } from "../../store-sqlite/test/fixtures/buildLegacyV1.js"
import { decodeRecordJson, engram, engramJson, tempDir } from "./utilities.js"

describe("engram memory import", { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "engram.db")
  // The store package's v1 fixture: every row of the mapping table, lifecycle and bad rows.
  const legacy = Path.join(tmp.dir, "knowledge-v1.db")
  buildLegacyV1(legacy)

  it("maps v1 rows by domain and provenance, once", async () => {
    const importable = legacyChunks.length - unimportableIds.length
    const report = await engramJson("memory", "import", legacy, "--db", db) as {
      rows: number
      imported: number
      skipped: number
      alreadyImported: boolean
      skippedRows: ReadonlyArray<{ rowid: number; reason: string }>
    }
    expect(report).toMatchObject({
      rows: legacyChunks.length,
      imported: importable,
      skipped: unimportableIds.length,
      alreadyImported: false
    })
    expect(report.skippedRows.map((row) => row.rowid)).toEqual(unimportableIds)

    const again = await engram("memory", "import", legacy, "--db", db)
    expect(again.code).toBe(0)
    expect(again.stdout).toContain("already imported")

    const page = await engramJson("memory", "list", "--include-superseded", "--db", db) as {
      records: ReadonlyArray<unknown>
    }
    const byId = new Map(page.records.map((json) => {
      const { record } = decodeRecordJson(json)
      return [record.id, record] as const
    }))
    expect(byId.size).toBe(importable)
    const summary = (id: string) => {
      const r = byId.get(id)!
      return [r.kind, r.deliveryPolicy, r.sourceType, r.reviewState, r.domain]
    }
    // hot -> standing/always; an operator row arrives confirmed.
    expect(summary("legacy-1")).toEqual(["standing", "always", "operator", "confirmed", "hot"])
    // general + conversation -> note, general + anything else -> reference; agent and external
    // rows wait for review.
    expect(summary("legacy-3")).toEqual(["note", "retrieved", "conversation", "pending", "general"])
    expect(summary("legacy-4")).toEqual(["reference", "retrieved", "ingest", "pending", "general"])
    // An unknown domain keeps its name and becomes legacy.
    expect(summary("legacy-9")).toEqual(["legacy", "retrieved", "background_report", "pending", "recipes"])
    expect(byId.get("legacy-13")!.scope).toBe("project:alpha")
    // The v1 supersession chain survives, pointing at the imported successor.
    expect(byId.get("legacy-18"))
      .toMatchObject({ supersededBy: "legacy-19", invalidationReason: "superseded_by:legacy-19" })
    expect(byId.get("legacy-19")).toMatchObject({ supersedes: "legacy-18" })
  })

  it("refuses a legacy file that does not exist, in one line", async () => {
    const run = await engram("memory", "import", Path.join(tmp.dir, "missing.db"), "--db", db)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(run.stderr.trim().split("\n")).toHaveLength(1)
    expect(run.stderr).toMatch(/^engram: .*missing\.db.*must exist/)
  })
})
