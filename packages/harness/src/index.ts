/**
 * @engram/harness — Engram run against itself: the demo behind `engram demo` and the routing eval
 * behind `engram eval` / `npm run eval`, both on a scripted model over whatever stores they are
 * given. Kept out of `@engram/runtime` so an application that runs agents does not carry them.
 *
 * @since 0.1.0
 */
export * as Demo from "./Demo.js"
export * as Eval from "./Eval.js"
