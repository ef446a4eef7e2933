import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { MemoryStore, PromotionStore } from "@engram/core"
import * as Layer from "effect/Layer"

// The promotion store rides along: forget deletes a record's promotion rows with it.
runMemoryStoreConformance("in-memory", Layer.merge(MemoryStore.layerMemory, PromotionStore.layerMemory))
runMemoryStoreModelCheck("in-memory", MemoryStore.layerMemory)
