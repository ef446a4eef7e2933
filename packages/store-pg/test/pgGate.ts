/**
 * The one gate every PostgreSQL test file goes through.
 *
 * - `ENGRAM_PG_URL` set and the server answering: the suites run against it.
 * - Otherwise, outside CI: the suites are skipped and one line (once per test run, however many
 *   files are gated) says how to run them.
 * - Otherwise, with `CI=true`: each gated suite fails — CI must never pass on skipped Postgres tests.
 */
import { describe, it } from "@effect/vitest"
import { PgDatabase } from "@engram/store-pg"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import { closeSync, openSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

/** How to run the PostgreSQL tests, printed when they are skipped. */
export const HOW_TO_RUN = "ENGRAM_PG_URL=postgres://postgres@127.0.0.1:5432/test npm test"

type Gate =
  | { readonly _tag: "Ready"; readonly url: string }
  | { readonly _tag: "Unavailable"; readonly reason: string }

const probe = async (): Promise<Gate> => {
  const url = process.env.ENGRAM_PG_URL
  if (url === undefined || url.trim() === "") return { _tag: "Unavailable", reason: "ENGRAM_PG_URL is not set" }
  const connected = await Effect.runPromise(
    Layer.build(PgDatabase.layer({ url, maxConnections: 1, connectTimeout: "3 seconds" })).pipe(
      Effect.scoped,
      Effect.either
    )
  )
  // The reason never repeats the URL: it may carry a password.
  return Either.isRight(connected)
    ? { _tag: "Ready", url }
    : { _tag: "Unavailable", reason: `the server at ENGRAM_PG_URL did not answer (${connected.left.message})` }
}

/** The gate's verdict for this test run. */
export const gate: Gate = await probe()

const inCI = process.env.CI === "true" || process.env.CI === "1"

// Test files run in worker processes of one vitest process: a marker file named after that
// parent makes the skip line appear once per run rather than once per file.
const announceOnce = (line: string) => {
  try {
    closeSync(openSync(join(tmpdir(), `engram-pg-gate-${process.ppid}`), "wx"))
  } catch {
    return
  }
  process.stderr.write(`${line}\n`)
}

/**
 * Declares a suite that needs PostgreSQL; `body` receives the server URL. With `concurrent`, its
 * tests run concurrently (vitest's `maxConcurrency` at a time) — for suites whose every test
 * works in a schema of its own.
 */
export const describePg = (
  name: string,
  body: (url: string) => void,
  options?: { readonly concurrent?: boolean }
): void => {
  if (gate._tag === "Ready") {
    const url = gate.url
    if (options?.concurrent === true) describe.concurrent(name, () => body(url))
    else describe(name, () => body(url))
    return
  }
  const reason = gate.reason
  if (inCI) {
    describe(name, () => {
      it("runs against a real PostgreSQL server", () => {
        throw new Error(`CI=true but the PostgreSQL tests would be skipped: ${reason}. Run: ${HOW_TO_RUN}`)
      })
    })
    return
  }
  announceOnce(`PostgreSQL tests skipped (${reason}); to run them: ${HOW_TO_RUN}`)
  // The body is not even collected: suites may connect while registering their tests.
  it.skip(`${name} (needs PostgreSQL)`, () => {})
}
