import { runPromotionStoreConformance } from "@engram/conformance"
import { PromotionStore } from "@engram/core"

runPromotionStoreConformance("in-memory", PromotionStore.layerMemory)
