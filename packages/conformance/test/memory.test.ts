import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { MemoryStore } from "@engram/core"

runMemoryStoreConformance("in-memory", MemoryStore.layerMemory)
runMemoryStoreModelCheck("in-memory", MemoryStore.layerMemory)
