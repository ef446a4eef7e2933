import * as SqlClient from "@effect/sql/SqlClient"
import { runStoreOptionsConformance } from "@engram/conformance"
import { SqliteDatabase, SqliteEngram } from "@engram/store-sqlite"
import * as Effect from "effect/Effect"

// One database per test, the store opened over it again and again (decisions 0165, 0196).
runStoreOptionsConformance("sqlite", {
  storage: SqliteDatabase.layer({ filename: ":memory:" }),
  open: SqliteEngram.layerStores,
  forgetLanguage: (tokenizer) =>
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.zipRight(
        sql`DELETE FROM engram_memory_meta WHERE key = 'language'`,
        sql`UPDATE engram_memory_meta SET value = ${tokenizer} WHERE key = 'tokenizer'`
      ))
})
