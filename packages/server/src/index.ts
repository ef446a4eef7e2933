/**
 * @engram/server — Engram's operator surfaces: the HTTP API with scoped bearer tokens, its
 * OpenAPI document and Swagger UI, and the review console.
 *
 * @since 0.1.0
 */
export * as AccessTokens from "./AccessTokens.js"
export * as EngramApi from "./EngramApi.js"
export * as EngramServer from "./EngramServer.js"
