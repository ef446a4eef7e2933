/**
 * `@engram/runtime/testing` — what a test of an Engram agent needs and a production build does
 * not: a scripted `LanguageModel` that answers from a function of the request and records every
 * request it got.
 *
 * @since 0.1.0
 */
export * as ScriptedModel from "./ScriptedModel.js"
