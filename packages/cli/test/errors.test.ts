import { afterAll, describe, expect, it } from "@effect/vitest"
import { existsSync, writeFileSync } from "node:fs"
import * as Path from "node:path"
import { engram, engramJson, expectRefused, tempDir } from "./utilities.js"

describe("engram: bad input prints one line, exits non-zero and writes nothing", { timeout: 120_000 }, () => {
  const tmp = tempDir()
  afterAll(tmp.cleanup)
  const db = Path.join(tmp.dir, "engram.db")

  let before: unknown

  it("refuses values our schemas reject while the command line is parsed", async () => {
    expect((await engram("memory", "add", "Keep me", "--kind", "note", "--id", "keep-1", "--db", db)).code).toBe(0)
    before = await engramJson("memory", "list", "--include-superseded", "--db", db)

    expectRefused(
      await engram("memory", "add", "x", "--kind", "note", "--label", "first\nsecond", "--db", db),
      "--label: label must not contain control characters or line breaks"
    )
    expectRefused(
      await engram("memory", "add", "x", "--kind", "opinion", "--db", db),
      `--kind: "opinion" is not one of profile, standing, fact, decision, note, episode, reference, legacy`
    )
    expectRefused(
      await engram("memory", "add", "x", "--kind", "note", "--scope", "team:red", "--db", db),
      "--scope: a scope is 'global', 'project:<id>' or 'session:<id>'"
    )
  })

  it("turns @effect/cli's own validation errors into one line", async () => {
    expectRefused(
      await engram("memory", "add", "x", "--db", db),
      "--kind is required: add --kind <value> (engram memory add --help lists the options and their values)"
    )
    expectRefused(
      await engram("memory", "erase", "keep-1", "--db", db),
      `unknown command "memory erase"; memory commands: add, list, search, show, review, supersede, expire, forget, import`
    )
  })

  it("reports the store's typed errors by their messages", async () => {
    expectRefused(
      await engram("memory", "review", "no-such-id", "confirmed", "--db", db),
      `no memory with id "no-such-id"`
    )
    expectRefused(
      await engram("memory", "add", "again", "--kind", "note", "--id", "keep-1", "--db", db),
      `memory id "keep-1" already exists`
    )
  })

  it("left the store exactly as it was", async () => {
    expect(await engramJson("memory", "list", "--include-superseded", "--db", db)).toEqual(before)
  })

  it("never creates a store for a refused command line", async () => {
    const fresh = Path.join(tmp.dir, "never", "engram.db")
    expectRefused(
      await engram("memory", "add", "", "--kind", "note", "--db", fresh),
      "<content>: content must not be empty"
    )
    expect(existsSync(Path.dirname(fresh))).toBe(false)
  })

  it("reports a store that cannot be opened with exit code 2", async () => {
    const notADatabase = Path.join(tmp.dir, "notes.txt")
    writeFileSync(notADatabase, "this is not a database, just a text file that is long enough to be read\n".repeat(20))
    expectRefused(
      await engram("memory", "list", "--db", notADatabase),
      `cannot open the memory store at ${notADatabase}: the file is damaged: it is not an SQLite database (its header is missing or garbled). Nothing was read or written; run \`engram doctor --db ${notADatabase}\` for a full check, and restore the file from a backup (\`engram doctor --repair\` rebuilds only the search index)`,
      2
    )
  })
})
