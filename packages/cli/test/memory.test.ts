import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Path from "node:path"
import { decodeRecordJson, engram, engramJson, tempDir } from "./utilities.js"

interface JsonPage {
  readonly records: ReadonlyArray<unknown>
  readonly skipped: number
  readonly nextCursor: string | null
}

const idsOf = (page: unknown) => (page as JsonPage).records.map((r) => decodeRecordJson(r).record.id)

/** A table row of the human view: the cells in order, separated by runs of spaces. */
const row = (...cells: ReadonlyArray<string>) => new RegExp(`^${cells.join("\\s+")}`)

describe("engram memory: one store through its whole lifecycle", { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  // A path whose directory does not exist yet: the store creates it.
  const db = Path.join(tmp.dir, "nested", "engram.db")

  let doug = ""
  let lunch = ""

  it("add stamps trust and review from the source, and --json encodes the record schema", async () => {
    const added = await engramJson(
      "memory",
      "add",
      "My name is Doug",
      "--kind",
      "profile",
      "--label",
      "name",
      "--source",
      "operator",
      "--db",
      db
    ) as { record: unknown }
    const { record, trustTier } = decodeRecordJson(added.record)
    doug = record.id
    expect(record).toMatchObject({
      content: "My name is Doug",
      kind: "profile",
      label: "name",
      sourceType: "operator",
      reviewState: "confirmed",
      scope: "global",
      deliveryPolicy: "retrieved"
    })
    expect(trustTier).toBe(3)

    // No --source: the writer is unknown, so the memory waits for review at the lowest tier.
    const run = await engram(
      "memory",
      "add",
      "Lunch is at noon on Fridays",
      "--kind",
      "fact",
      "--tag",
      "schedule",
      "--tag",
      "team",
      "--scope",
      "project:alpha",
      "--id",
      "lunch-1",
      "--expires-in-days",
      "30",
      "--db",
      db
    )
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    expect(run.stdout).toContain("added lunch-1")
    expect(run.stdout).toMatch(/source\s+unknown \(trust tier 1\)/)
    expect(run.stdout).toMatch(/review\s+pending/)
    expect(run.stdout).toMatch(/tags\s+schedule, team/)
    lunch = "lunch-1"
  })

  it("list prints a table newest first, filters, and pages with a cursor", async () => {
    const human = await engram("memory", "list", "--db", db)
    expect(human.code).toBe(0)
    const lines = human.stdout.trim().split("\n")
    expect(lines[0]).toMatch(/^ID\s+KIND\s+REVIEW\s+STATE\s+SCOPE\s+LABEL\s+CONTENT$/)
    expect(lines[1]).toMatch(row(lunch, "fact", "pending", "active", "project:alpha", "-", "Lunch is at noon"))
    expect(lines[2]).toMatch(row(doug, "profile", "confirmed", "active", "global", "name", "My name is Doug$"))
    expect(human.stdout).toContain("2 memories")

    const first = await engramJson("memory", "list", "--limit", "1", "--db", db) as JsonPage
    expect(idsOf(first)).toEqual([lunch])
    expect(first.nextCursor).not.toBeNull()
    const second = await engramJson(
      "memory",
      "list",
      "--limit",
      "1",
      "--cursor",
      first.nextCursor!,
      "--db",
      db
    ) as JsonPage
    expect(idsOf(second)).toEqual([doug])
    expect(second.nextCursor).toBeNull()
  })

  it("search matches whole words in label, content and tags", async () => {
    const human = await engram("memory", "search", "doug", "--db", db)
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(row("#", "ID", "KIND"))
    expect(human.stdout).toMatch(new RegExp(`\\n1\\s+${doug}\\s+profile`))
    expect(human.stdout).toContain(doug)
    expect(human.stdout).not.toContain(lunch)

    type Hits = { hits: ReadonlyArray<{ record: unknown; score: number }> }
    const hits = (json: unknown) => (json as Hits).hits.map((h) => decodeRecordJson(h.record).record.id)
    // Case folded, tokens OR-joined ("nobody" matches nothing), tags searched too.
    expect(hits(await engramJson("memory", "search", "SCHEDULE nobody", "--db", db))).toEqual([lunch])
  })

  it("review, supersede and expire change lifecycle state without losing anything", async () => {
    const reviewed = await engram("memory", "review", lunch, "confirmed", "--db", db)
    expect(reviewed.code).toBe(0)
    expect(reviewed.stdout.trim()).toBe(`${lunch} is now confirmed`)

    const outcome = await engramJson(
      "memory",
      "supersede",
      doug,
      "My name is Douglas",
      "--source",
      "operator",
      "--db",
      db
    ) as { superseded: unknown; successor: unknown }
    const superseded = decodeRecordJson(outcome.superseded).record
    const successor = decodeRecordJson(outcome.successor).record
    // Kind and label carry over from the original when not given.
    expect(successor).toMatchObject({ kind: "profile", label: "name", supersedes: doug, reviewState: "confirmed" })
    expect(superseded)
      .toMatchObject({ supersededBy: successor.id, invalidationReason: `superseded_by:${successor.id}` })

    const expired = await engramJson("memory", "expire", lunch, "--db", db) as { record: unknown }
    expect(decodeRecordJson(expired.record).record.expiresAt).toBeDefined()

    // The superseded original is hidden by default, shown on request; the expired one stays
    // listed but is not deliverable.
    expect(idsOf(await engramJson("memory", "list", "--db", db))).toEqual([successor.id, lunch])
    const deliverable = await engramJson(
      "memory",
      "list",
      "--deliverable",
      "--scope",
      "global",
      "--scope",
      "project:alpha",
      "--db",
      db
    )
    expect(idsOf(deliverable)).toEqual([successor.id])
    const all = await engram("memory", "list", "--include-superseded", "--db", db)
    const rows = all.stdout.split("\n")
    expect(rows.some((line) => row(doug, "profile", "confirmed", "superseded").test(line))).toBe(true)
    expect(rows.some((line) => row(lunch, "fact", "confirmed", "expired").test(line))).toBe(true)
    expect(all.stdout).toContain("3 memories")
  })
})

// Eleven CLI processes: generous on a loaded machine.
describe("engram memory forget", { timeout: 300_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "engram.db")

  it("deletes memories by id or scope, leaves tombstones without content, and refuses an empty target", async () => {
    const add = async (content: string, ...flags: ReadonlyArray<string>) =>
      decodeRecordJson(
        (await engramJson("memory", "add", content, "--kind", "fact", ...flags, "--db", db) as {
          record: unknown
        }).record
      ).record.id
    const secret = await add("The vault code is kumquat", "--scope", "project:a")
    const other = await add("Kumquat trees are small", "--scope", "project:a")
    const elsewhere = await add("Kumquat jam recipe", "--scope", "project:b")

    const forgot = await engram("memory", "forget", secret, "--by", "operator:ana", "--db", db)
    expect(forgot.code).toBe(0)
    expect(forgot.stdout.trim()).toBe(`forgot ${secret}`)
    const hits = (await engramJson("memory", "search", "kumquat vault", "--db", db) as {
      hits: ReadonlyArray<{ record: unknown }>
    }).hits.map((h) => decodeRecordJson(h.record).record.id)
    expect(hits.sort()).toEqual([elsewhere, other].sort())

    const byScope = await engramJson("memory", "forget", "--scope", "project:a", "--db", db) as {
      tombstones: ReadonlyArray<{ memoryId: string; scope: string; forgottenBy: string }>
    }
    expect(byScope.tombstones.map((t) => [t.memoryId, t.scope, t.forgottenBy])).toEqual([[other, "project:a", "cli"]])
    expect(JSON.stringify(byScope)).not.toMatch(/[Kk]umquat/)
    expect(idsOf(await engramJson("memory", "list", "--db", db))).toEqual([elsewhere])

    expect((await engram("memory", "forget", secret, "--db", db)).stdout.trim()).toBe(
      "nothing to forget: no such memory"
    )
    const neither = await engram("memory", "forget", "--db", db)
    expect(neither.code).not.toBe(0)
    expect(neither.stderr).toContain("one or more ids, or --scope")
    const both = await engram("memory", "forget", elsewhere, "--scope", "project:b", "--db", db)
    expect(both.code).not.toBe(0)
    expect(idsOf(await engramJson("memory", "list", "--db", db))).toEqual([elsewhere])
  })
})
