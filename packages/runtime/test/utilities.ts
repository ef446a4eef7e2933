/**
 * Shared fixtures for the runtime tests: in-memory stores with sequential ids, the memory
 * toolkit bound to one agent, and a scripted language model.
 */
import { Background, IdGenerator, MemoryStore, PromotionStore, RoutingPresets } from "@engram/core"
import { MemoryTools } from "@engram/runtime"
import { ScriptedModel } from "@engram/runtime/testing"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

/** Fresh in-memory stores (and sequential ids `mem-000001`, …) for each build. */
export const stores = Layer.mergeAll(MemoryStore.layerMemory, PromotionStore.layerMemory, IdGenerator.sequential("mem"))

/** A companion: the user-background vocabulary plus one authored section. */
export const companionBackground = Background.mergeBackground(
  Background.unsafeMake({
    sections: [{ id: "assistant", title: "Assistant", entries: [{ key: "tone", value: "warm" }] }]
  }),
  RoutingPresets.userBackgroundSections
)

/** The memory tools of a companion in `global`, unless overridden. */
export const companion = (overrides: Partial<MemoryTools.MemoryToolsConfig> = {}): MemoryTools.MemoryToolsConfig => ({
  scope: "global",
  background: companionBackground,
  spec: RoutingPresets.userBackground,
  ...overrides
})

/** The toolkit with its handlers, ready for `handle(name, params)`. */
export const toolkit = (config: MemoryTools.MemoryToolsConfig) => MemoryTools.handled(config)

/** Calls `memory_save` with raw (undecoded) arguments, as a model would. */
export const save = (config: MemoryTools.MemoryToolsConfig, params: Record<string, unknown>) =>
  Effect.flatMap(toolkit(config), (kit) => kit.handle("memory_save", params as never))

/** A language model that answers every request with these tool calls. */
export const scriptedModel = (calls: ReadonlyArray<{ readonly name: string; readonly params: unknown }>) =>
  ScriptedModel.layer(() => calls.map((call) => ScriptedModel.toolCall(call.name, call.params)))
