/**
 * @engram/runtime — what runs around the model: the promotion step, the save gate, the memory
 * tools, recall, Background composition over the stores, the agent and its loops. The projection
 * they call is `@engram/core`'s `ContextProjection`.
 * The scripted model for tests is in `@engram/runtime/testing`; the demo and the eval are in
 * `@engram/harness`.
 *
 * @since 0.1.0
 */
export * as AcpClient from "./AcpClient.js"
export * as Agent from "./Agent.js"
export * as AgentBackground from "./AgentBackground.js"
export * as ContextAssembler from "./ContextAssembler.js"
export * as Explain from "./Explain.js"
export * as Extraction from "./Extraction.js"
export * as ExtractionError from "./ExtractionError.js"
export * as Inspect from "./Inspect.js"
export * as MemoryTools from "./MemoryTools.js"
export * as ModelEmbeddings from "./ModelEmbeddings.js"
export * as ModelRequest from "./ModelRequest.js"
export * as ModelScreen from "./ModelScreen.js"
export * as NativeRuntime from "./NativeRuntime.js"
export * as NativeRuntimeError from "./NativeRuntimeError.js"
export * as Promotion from "./Promotion.js"
export * as PromptObserver from "./PromptObserver.js"
export * as Replay from "./Replay.js"
export * as SaveGate from "./SaveGate.js"
export * as StablePrefix from "./StablePrefix.js"
export * as StablePrefixError from "./StablePrefixError.js"
export * as Subagent from "./Subagent.js"
export * as TokenEstimatorBpe from "./TokenEstimatorBpe.js"
export * as Turn from "./Turn.js"
