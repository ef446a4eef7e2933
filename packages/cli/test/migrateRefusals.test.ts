import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { MemoryLimits, MemoryStore } from "@engram/core"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Path from "node:path"
import { engram } from "../../../test/reliability/spawn.js"
import { describePg } from "../../store-pg/test/pgGate.js"
import { dropSchema, withSql } from "../../store-pg/test/utilities.js"
import type { Summary } from "../src/commands/Migrate.js"
import { tempDir } from "./utilities.js"

const engramJson = async (...args: ReadonlyArray<string>): Promise<unknown> => {
  const run = await engram(...args, "--json")
  if (run.code !== 0) throw new Error(`engram ${args.join(" ")} exited ${run.code}: ${run.stderr}`)
  return JSON.parse(run.stdout)
}

const RECORDS = 12
// Records whose content the PostgreSQL target's CHECK constraint refuses.
const REFUSED = ["r-03", "r-08"]

describePg("engram migrate names a record the target refuses, and stops or skips it", (url) => {
  const tmp = tempDir()
  const schema = PgDatabase.temporarySchemaName("engram_cli_refusals")
  const source = Path.join(tmp.dir, "source.db")
  const back = Path.join(tmp.dir, "back.db")
  const withPassword = (() => {
    const parsed = new URL(url)
    parsed.password = "s3cret-pw"
    return parsed.toString()
  })()

  beforeAll(async () => {
    await Effect.runPromise(
      Effect.flatMap(MemoryStore.MemoryStore, (store) =>
        store.write(Array.from({ length: RECORDS }, (_, i) => {
          const id = `r-${String(i).padStart(2, "0")}`
          return { id, content: `${REFUSED.includes(id) ? "refuse-me " : ""}record ${i}`, kind: "note" as const }
        }))).pipe(
          Effect.provide(
            SqliteEngram.layerStores().pipe(Layer.provideMerge(SqliteDatabase.layer({ filename: source })))
          )
        )
    )
    // The target's tables, with a constraint PostgreSQL enforces on two of the records.
    await Effect.runPromise(
      Effect.scoped(Layer.build(PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema })))))
        .pipe(
          Effect.zipRight(
            withSql(
              url,
              (sql) => sql`ALTER TABLE engram_memories ADD CONSTRAINT no_refuse CHECK (content NOT LIKE 'refuse-me%')`,
              schema
            )
          )
        )
    )
  }, 120_000)
  afterAll(async () => {
    tmp.cleanup()
    await Effect.runPromise(dropSchema(url, schema))
  })

  const toPg = ["migrate", "--from", source, "--to", withPassword, "--pg-schema", schema, "--batch-size", "5"]

  it("SQLite → PostgreSQL, --on-error stop (default): exit 1, the record and PostgreSQL's reason in one line", {
    timeout: 240_000
  }, async () => {
    const run = await engram(...toPg)
    // The copy reads newest first, and the seed batch is stamped in input order: r-08 is met first.
    expect(run.code).toBe(1)
    expect(run.stderr).toContain(
      `record "r-08" was not copied: memory store restore failed: PostgreSQL 23514: new row for relation ` +
        `"engram_memories" violates check constraint "no_refuse"; what was copied before it stays — fix the record, ` +
        `or run the same command with --on-error skip to leave it out`
    )
    expect(run.stderr).not.toContain("s3cret-pw")
  })

  it(
    "--on-error skip: the others are copied and verified, the summary lists each skipped record",
    { timeout: 240_000 },
    async () => {
      const summary = await engramJson(...toPg, "--on-error", "skip") as Summary
      expect(summary.verified).toBe(true)
      expect(summary.records).toMatchObject({ source: RECORDS, target: RECORDS - 2, skipped: 2 })
      expect(summary.skippedRecords.map((r) => r.id).sort()).toEqual(REFUSED)
      for (const record of summary.skippedRecords) {
        expect(record.reason).toMatch(/^memory store restore failed: PostgreSQL 23514: .*"no_refuse"$/)
      }
      const human = await engram(...toPg, "--on-error", "skip")
      expect(human.code).toBe(0)
      expect(human.stdout).toContain("2 records the target refused were not copied (--on-error skip)")
      expect(human.stdout).toContain(`not copied: r-03: memory store restore failed: PostgreSQL 23514`)
      expect(human.stdout).toContain("(the source without the skipped records and target agree)")
    }
  )

  it("PostgreSQL → SQLite: a record over the target's content limit is named; skip copies the rest", {
    timeout: 240_000
  }, async () => {
    // Written under raised limits, so PostgreSQL holds a record the SQLite target's contract refuses.
    await Effect.runPromise(
      Effect.flatMap(
        MemoryStore.MemoryStore,
        (store) => store.write([{ id: "big", content: "word ".repeat(8_000), kind: "note" }])
      ).pipe(
        Effect.provide(PgEngram.layerStores().pipe(Layer.provideMerge(PgDatabase.layer({ url, schema })))),
        Effect.provide(MemoryLimits.layer({ maxContentChars: 100_000 }))
      )
    )
    const fromPg = ["migrate", "--from", withPassword, "--pg-schema", schema, "--to", back]
    const stopped = await engram(...fromPg)
    expect(stopped.code).toBe(1)
    expect(stopped.stderr).toContain(
      `record "big" was not copied: content is 40000 characters, over the limit of 32000 (MemoryLimits.maxContentChars)`
    )
    const summary = await engramJson(...fromPg, "--on-error", "skip") as Summary
    expect(summary.records).toMatchObject({ source: RECORDS - 1, target: RECORDS - 2, skipped: 1 })
    expect(summary.skippedRecords.map((r) => r.id)).toEqual(["big"])
    const listed = await engramJson("--db", back, "memory", "list", "--limit", "100") as {
      readonly records: ReadonlyArray<{ readonly id: string }>
    }
    expect(listed.records.map((r) => r.id).sort()).toEqual(
      Array.from({ length: RECORDS }, (_, i) => `r-${String(i).padStart(2, "0")}`).filter((id) => !REFUSED.includes(id))
    )
  })

  it("a PostgreSQL source schema that does not exist is refused and not created", { timeout: 240_000 }, async () => {
    const absent = `${schema}_absent`
    const run = await engram(
      "migrate",
      "--from",
      withPassword,
      "--pg-schema",
      absent,
      "--to",
      Path.join(tmp.dir, "x.db")
    )
    expect(run.code).toBe(2)
    expect(run.stderr).toContain(`it has no schema "${absent}", so it holds no Engram store`)
    const found = await Effect.runPromise(
      withSql(url, (sql) => sql`SELECT 1 FROM pg_namespace WHERE nspname = ${absent}`)
    )
    expect(found).toEqual([])
  })

  it("refuses two PostgreSQL sides or two SQLite files", { timeout: 240_000 }, async () => {
    const both = await engram("migrate", "--from", withPassword, "--to", withPassword)
    expect(both.code).toBe(1)
    expect(both.stderr).toContain("--from and --to are both postgres:// URLs")
    const files = await engram("migrate", "--from", source, "--to", back)
    expect(files.code).toBe(1)
    expect(files.stderr).toContain("one of --from and --to must be a postgres:// URL")
  })
})
