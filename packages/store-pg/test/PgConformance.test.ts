import * as SqlClient from "@effect/sql/SqlClient"
import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { PgDatabase, PgEngram } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { describePg } from "./pgGate.js"

describePg("PostgreSQL memory store", (url) => {
  // Every build of this layer is an empty schema of its own, dropped when the build is released:
  // each conformance test and each model-check run starts from nothing.
  const layer = PgEngram.layerStores().pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_conf", maxConnections: 2 }))
  )

  // With the promotion store in the same schema: forget deletes promotion rows in its transaction.
  // The concurrency tier's race: 10,000 operations take about 12 s alone but minutes beside this
  // file's other tests on 2 shared cores, so npm test runs 2,000 and `npm run soak` the full 10,000.
  const raceOperations = Number(process.env.ENGRAM_RACE_OPERATIONS ?? 2_000)
  runMemoryStoreConformance("postgres", layer, {
    race: { operations: raceOperations },
    corruptRecord: (id) =>
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => Effect.asVoid(sql`UPDATE engram_memories SET kind = 'not-a-kind' WHERE id = ${id}`)
      )
  })

  // The model check: each generated sequence builds a fresh schema (about half a second), so npm test
  // runs 30 sequences (the SQLite and in-memory stores run 100 against the same model) and
  // `npm run soak` 200 (decision 0195).
  const modelRuns = Number(process.env.ENGRAM_PG_MODEL_RUNS ?? 30)
  runMemoryStoreModelCheck("postgres", layer, { numRuns: modelRuns, timeout: Math.max(180_000, modelRuns * 3_000) })
}, { concurrent: true })
