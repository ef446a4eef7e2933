/**
 * @engram/runtime — what runs around the model: the promotion step, the save gate, the memory
 * tools, recall, Background composition over the stores, and the eval harness.
 *
 * @since 0.1.0
 */
export * as MemoryTools from "./MemoryTools.js"
export * as Promotion from "./Promotion.js"
export * as SaveGate from "./SaveGate.js"
export * as AgentBackground from "./AgentBackground.js"
export * as Recall from "./Recall.js"
export * as ContextProjection from "./ContextProjection.js"
export * as ScriptedModel from "./ScriptedModel.js"
export * as ModelRequest from "./ModelRequest.js"
export * as PromptObserver from "./PromptObserver.js"
export * as NativeRuntime from "./NativeRuntime.js"
export * as Eval from "./Eval.js"
export * as StablePrefix from "./StablePrefix.js"
export * as Replay from "./Replay.js"
export * as Demo from "./Demo.js"
export * as ContextAssembler from "./ContextAssembler.js"
export * as AcpClient from "./AcpClient.js"
