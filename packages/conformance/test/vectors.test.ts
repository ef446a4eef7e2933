import { runVectorConformance } from "@engram/conformance"
import { MemoryStore } from "@engram/core"

// The in-memory index lives and dies with its store: nothing persists an embedder identity to refuse.
runVectorConformance("in-memory", MemoryStore.layerMemoryWithVectors)
