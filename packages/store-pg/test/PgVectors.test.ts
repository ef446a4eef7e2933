import { runVectorConformance } from "@engram/conformance"
import { PgDatabase, PgEngram, PgVectorIndex } from "@engram/store-pg"
import * as Layer from "effect/Layer"
import { describePg } from "./pgGate.js"

describePg("PostgreSQL vectors", (url) => {
  // An empty schema per build; this server has no pgvector, so this runs the exact scan.
  const layer = PgEngram.layerStoresWithVectors().pipe(
    Layer.provideMerge(PgDatabase.layerTemporarySchema({ url, prefix: "engram_vec", maxConnections: 2 }))
  )
  runVectorConformance("postgres", layer, { vectorIndex: PgVectorIndex.make })
})
