/**
 * @engram/mcp — Engram's memory tools over the Model Context Protocol (stdio and streamable HTTP).
 *
 * @since 0.1.0
 */
export * as EngramMcp from "./EngramMcp.js"
export * as OperatorTools from "./OperatorTools.js"
