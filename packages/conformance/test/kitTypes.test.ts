/**
 * The kit's signature asks for what its suites need: the forget suite deletes promotion rows with
 * their records, so `runMemoryStoreConformance` takes a layer that provides a `PromotionStore` beside
 * the `MemoryStore`. Checked by the compiler (`npm run typecheck`): the registration below is never run.
 */
import { runMemoryStoreConformance, runMemoryStoreModelCheck } from "@engram/conformance"
import { MemoryStore } from "@engram/core"
import { expect, it } from "vitest"

it("a MemoryStore without a PromotionStore does not type as a conformance layer", () => {
  const register = () => {
    // @ts-expect-error the forget suite needs a PromotionStore on the same backend
    runMemoryStoreConformance("memory store alone", MemoryStore.layerMemory)
    // The model check uses the MemoryStore alone.
    runMemoryStoreModelCheck("memory store alone", MemoryStore.layerMemory)
  }
  expect(typeof register).toBe("function")
})
