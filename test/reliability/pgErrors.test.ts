import { PgDatabase } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import { afterAll, expect, it } from "vitest"
import { describePg } from "../../packages/store-pg/test/pgGate.js"
import { dropSchema, withSql } from "../../packages/store-pg/test/utilities.js"
import { engram } from "./spawn.js"

describePg("the CLI prints why PostgreSQL refused, without the password", (url) => {
  const schema = PgDatabase.temporarySchemaName("engram_pg_errors")
  // Trust authentication ignores the password; it is there so the test can check it never leaks.
  const withPassword = (() => {
    const parsed = new URL(url)
    parsed.password = "s3cret-pw"
    return parsed.toString()
  })()
  afterAll(() => Effect.runPromise(dropSchema(url, schema)))

  it("a write the server refuses: exit 2, one line naming the SQLSTATE and the server's message", async () => {
    const first = await engram(
      "--pg",
      withPassword,
      "--pg-schema",
      schema,
      "memory",
      "add",
      "harmless",
      "--kind",
      "note"
    )
    expect(first.code, first.stderr).toBe(0)
    await Effect.runPromise(
      withSql(
        url,
        (sql) => sql`ALTER TABLE engram_memories ADD CONSTRAINT no_secrets CHECK (content NOT LIKE '%classified%')`,
        schema
      )
    )
    const run = await engram(
      "--pg",
      withPassword,
      "--pg-schema",
      schema,
      "memory",
      "add",
      "classified plans",
      "--kind",
      "note"
    )
    expect(run.code).toBe(2)
    expect(run.stderr.trim().split("\n")).toHaveLength(1)
    expect(run.stderr).toContain(
      `memory store write failed: PostgreSQL 23514: new row for relation "engram_memories" violates check constraint "no_secrets"`
    )
    expect(run.stderr).not.toContain("s3cret-pw")
    expect(run.stderr).not.toContain("classified plans")
  }, 120_000)

  it("a store the server will not let this role open: exit 2, the SQLSTATE and the server's message", async () => {
    const locked = `${schema}_locked`
    await Effect.runPromise(
      withSql(url, (sql) =>
        Effect.all([
          sql.unsafe(
            `DO $$ BEGIN CREATE ROLE engram_test_no_rights LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`
          ),
          sql.unsafe(`CREATE SCHEMA IF NOT EXISTS "${locked}"`),
          sql.unsafe(`REVOKE ALL ON SCHEMA "${locked}" FROM PUBLIC`)
        ], { discard: true }))
    )
    const asRole = (() => {
      const parsed = new URL(url)
      parsed.username = "engram_test_no_rights"
      parsed.password = "s3cret-pw"
      return parsed.toString()
    })()
    try {
      const run = await engram("--pg", asRole, "--pg-schema", locked, "memory", "list")
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(
        `cannot open the memory store at postgres://engram_test_no_rights:***@`
      )
      expect(run.stderr).toMatch(/PostgreSQL (3F000|42501): /)
      expect(run.stderr).not.toContain("s3cret-pw")
    } finally {
      await Effect.runPromise(dropSchema(url, locked))
    }
  }, 120_000)
})
