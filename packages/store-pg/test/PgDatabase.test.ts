/**
 * The connections `PgDatabase` opens: every one runs with the planner settings Engram's statements
 * are planned for (decisions 0145, 0224), and a setting the URL names itself wins.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import { expect, it } from "@effect/vitest"
import { PgDatabase } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import { describePg } from "./pgGate.js"

const show = (name: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      Effect.map(sql.unsafe<{ readonly value: string }>(`SELECT current_setting('${name}') AS value`), (rows) =>
        rows[0]!.value)
  )

describePg("PgDatabase", (url) => {
  it.effect("every connection runs with the session settings", () =>
    Effect.gen(function*() {
      for (const [name, value] of PgDatabase.SESSION_SETTINGS) {
        // Every connection of the pool, not only the first: two reads held open at once.
        const values = yield* Effect.all([show(name), show(name)], { concurrency: 2 })
        expect(values).toEqual([value, value])
      }
    }).pipe(Effect.provide(PgDatabase.layer({ url, maxConnections: 2 }))))

  it.effect("a setting the URL's own options name wins, and the schema's search_path still applies", () => {
    const own = new URL(url)
    own.searchParams.set("options", "-c parallel_tuple_cost=0.5")
    const schema = PgDatabase.temporarySchemaName("engram_pgdatabase")
    return Effect.gen(function*() {
      expect(Number(yield* show("parallel_tuple_cost"))).toBe(0.5)
      expect(yield* show("search_path")).toBe(schema)
      const sql = yield* SqlClient.SqlClient
      yield* sql.unsafe(`DROP SCHEMA "${schema}"`)
    }).pipe(Effect.provide(PgDatabase.layer({ url: own.toString(), schema, maxConnections: 1 })))
  })

  it("withSessionSettings puts Engram's settings before the URL's own options", () => {
    const plain = new URL(PgDatabase.withSessionSettings("postgres://u@h:5432/db"))
    expect(plain.searchParams.get("options")).toBe("-c parallel_tuple_cost=0.01 -c jit=off")
    const own = new URL(PgDatabase.withSessionSettings("postgres://u@h:5432/db?options=-c%20work_mem%3D8MB"))
    expect(own.searchParams.get("options")).toBe("-c parallel_tuple_cost=0.01 -c jit=off -c work_mem=8MB")
  })
})
