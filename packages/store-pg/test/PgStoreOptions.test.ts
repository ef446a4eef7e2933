import * as SqlClient from "@effect/sql/SqlClient"
import { runStoreOptionsConformance } from "@engram/conformance"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import { describePg } from "./pgGate.js"

describePg("PostgreSQL store options", (url) => {
  // One schema per test, the store opened over it again and again (decisions 0165, 0196).
  runStoreOptionsConformance("postgres", {
    storage: PgDatabase.layerTemporarySchema({ url, prefix: "engram_house_opts", maxConnections: 2 }),
    open: PgEngram.layerStores,
    forgetLanguage: (tokenizer) =>
      Effect.flatMap(SqlClient.SqlClient, (sql) =>
        Effect.zipRight(
          sql`DELETE FROM engram_memory_meta WHERE key = 'language'`,
          sql`UPDATE engram_memory_meta SET value = ${tokenizer} WHERE key = 'tokenizer'`
        ))
  })
})
