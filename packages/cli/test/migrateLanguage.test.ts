/**
 * `engram migrate` and the store's language, through the shipped bundle (decision 0198): the target
 * stems in the source's language unless `--language` names another, either way round (SQLite →
 * PostgreSQL reads the source file's meta table, PostgreSQL → SQLite the schema's), and a target
 * that already records another language is refused naming both.
 */
import { afterAll, beforeAll, expect, it } from "@effect/vitest"
import { PgDatabase } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Path from "node:path"
import { describePg } from "../../store-pg/test/pgGate.js"
import { dropSchema } from "../../store-pg/test/utilities.js"
import { decodeRecordJson, engram, engramJson, expectRefused, tempDir } from "./utilities.js"

type Hits = { hits: ReadonlyArray<{ record: unknown }> }
const hitIds = (json: unknown) => (json as Hits).hits.map((h) => decodeRecordJson(h.record).record.id)

interface Summary {
  readonly language: { readonly source: string; readonly target: string }
}

describePg("engram migrate keeps the store's language, or takes --language", (url) => {
  const tmp = tempDir()
  const german = Path.join(tmp.dir, "german.db")
  // A copy that keeps the source's language, and one made in English with --language.
  const kept = PgDatabase.temporarySchemaName("engram_cli_lang_kept")
  const english = PgDatabase.temporarySchemaName("engram_cli_lang_en")
  const pg = (schema: string) => ["--pg", url, "--pg-schema", schema]
  let houses = ""

  beforeAll(async () => {
    const added = await engramJson(
      "memory",
      "add",
      "Die Häuser am Fluss sind alt",
      "--kind",
      "fact",
      "--db",
      german,
      "--language",
      "de"
    ) as { record: unknown }
    houses = decodeRecordJson(added.record).record.id
  }, 120_000)
  afterAll(async () => {
    tmp.cleanup()
    await Effect.runPromise(Effect.zipRight(dropSchema(url, kept), dropSchema(url, english)))
  })

  it("copies into a new target in the source's language: the copy stems in German (Haus finds Häuser)", {
    timeout: 240_000
  }, async () => {
    const summary = await engramJson("migrate", "--from", german, "--to", url, "--pg-schema", kept) as Summary
    expect(summary.language).toEqual({ source: "german", target: "german" })
    expect(hitIds(await engramJson("memory", "search", "Haus", ...pg(kept)))).toEqual([houses])
  })

  it("copies back from PostgreSQL into a new file in the schema's language", { timeout: 240_000 }, async () => {
    const back = Path.join(tmp.dir, "back.db")
    const summary = await engramJson("migrate", "--from", url, "--pg-schema", kept, "--to", back) as Summary
    expect(summary.language).toEqual({ source: "german", target: "german" })
    expect(hitIds(await engramJson("memory", "search", "Haus", "--db", back))).toEqual([houses])
  })

  it("copies into a new target in the language --language names", { timeout: 240_000 }, async () => {
    const run = await engram("migrate", "--from", german, "--to", url, "--pg-schema", english, "--language", "en")
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("language        english (the source's: german)")
    // English stems: the German stem finds nothing, the word itself still does.
    expect(hitIds(await engramJson("memory", "search", "Haus", ...pg(english)))).toEqual([])
    expect(hitIds(await engramJson("memory", "search", "Häuser", ...pg(english)))).toEqual([houses])
  })

  it("refuses a target that records another language, naming both (exit 1)", { timeout: 240_000 }, async () => {
    // Without --language the copy is German, the target English.
    const run = await engram("migrate", "--from", german, "--to", url, "--pg-schema", english)
    expectRefused(
      run,
      `is a store in english, not german (the source's language): copy into a new target, or give --language en`
    )
    expectRefused(
      await engram("migrate", "--from", german, "--to", url, "--pg-schema", kept, "--language", "fr"),
      "is a store in german, not french (--language fr)"
    )
  })

  it("still refuses the store flags, which migrate names with --from and --to", async () => {
    expectRefused(
      await engram("migrate", "--from", german, "--to", url, "--db", german),
      "migrate reads --from and writes --to; --db does not apply to it"
    )
  })
})
