/**
 * @engram/mcp — Engram's memory tools and the agent's context over the Model Context Protocol
 * (stdio and streamable HTTP).
 *
 * @since 0.1.0
 */
export * as AgentContext from "./AgentContext.js"
export * as EngramMcp from "./EngramMcp.js"
export * as OperatorTools from "./OperatorTools.js"
