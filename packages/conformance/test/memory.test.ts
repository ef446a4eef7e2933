import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { MemoryStore, PromotionStore, TelemetryStore } from "@engram/core"
import * as Layer from "effect/Layer"

// The promotion store rides along: forget deletes a record's promotion rows with it.
runMemoryStoreConformance(
  "in-memory",
  MemoryStore.layerMemoryCascading.pipe(
    Layer.provideMerge(Layer.merge(PromotionStore.layerMemory, TelemetryStore.layerMemory))
  )
)
runMemoryStoreModelCheck("in-memory", MemoryStore.layerMemory)
