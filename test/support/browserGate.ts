/**
 * The one gate every test that drives Chromium goes through, as the PostgreSQL tests have theirs
 * (`packages/store-pg/test/pgGate.ts`):
 *
 * - Chromium found (`ENGRAM_CHROMIUM`, else `/usr/bin/chromium` or `/usr/bin/chromium-browser`):
 *   the suites run in it.
 * - Otherwise, outside CI: the suites are skipped and one line (once per test run) says why and
 *   how to install it.
 * - Otherwise, with `CI=true`: each gated suite fails — CI must never pass on skipped browser tests.
 */
import { describe, it } from "@effect/vitest"
import { closeSync, existsSync, openSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { chromiumPath } from "./consoleBrowser.js"

/** How to get the browser tests to run, printed when they are skipped. */
export const HOW_TO_RUN = "apt-get install -y chromium (or set ENGRAM_CHROMIUM to a Chromium binary)"

const inCI = process.env.CI === "true" || process.env.CI === "1"

const announceOnce = (line: string) => {
  try {
    closeSync(openSync(join(tmpdir(), `engram-chromium-gate-${process.ppid}`), "wx"))
  } catch {
    return
  }
  process.stderr.write(`${line}\n`)
}

/** Declares a suite that needs Chromium (see the module documentation for what happens without it). */
export const describeChromium = (
  name: string,
  options: { readonly timeout: number },
  body: () => void
): void => {
  if (existsSync(chromiumPath)) {
    describe(name, options, body)
    return
  }
  const reason = `no Chromium at ${chromiumPath}`
  if (inCI) {
    describe(name, () => {
      it("runs in Chromium", () => {
        throw new Error(`CI=true but the browser tests would be skipped: ${reason}. Run: ${HOW_TO_RUN}`)
      })
    })
    return
  }
  announceOnce(`Browser tests skipped (${reason}); to run them: ${HOW_TO_RUN}`)
  it.skip(`${name} (needs Chromium)`, () => {})
}
