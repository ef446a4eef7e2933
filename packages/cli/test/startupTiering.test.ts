/**
 * The executable holds TurboFan back for its first CPU-second (decision 0107): a function hot from
 * the start is optimized only once the process has used `OPTIMIZE_AFTER_CPU_MS` of CPU, and a
 * process without the hold optimizes it at once; a process idle past `OPTIMIZE_AFTER_WALL_S` gets it
 * back without that CPU-second. The child (fixtures/tieringProbe.ts) is bundled
 * as the executable is, so its own start-up costs little of that second.
 */
import { afterAll, describe, expect, it } from "@effect/vitest"
import * as NodeFs from "node:fs"
import { bundleDir, bundleEntry } from "../../../test/support/bundle.js"
import { OPTIMIZE_AFTER_CPU_MS, userChoseTiering } from "../src/internal/startupTiering.js"
import { childEnv, runProcess } from "./utilities.js"

const outdir = bundleDir("tiering-probe")
let bundled: Promise<string> | undefined
const probe = () => (bundled ??= bundleEntry("packages/cli/test/fixtures/tieringProbe.ts", outdir))
afterAll(() => NodeFs.rmSync(outdir, { recursive: true, force: true }))

interface Probe {
  readonly held: boolean
  readonly startMs: number
  readonly optimizedAtMs: number | null
}

const runProbe = async (mode: "hold" | "free" | "idle"): Promise<Probe> => {
  const run = await runProcess(process.execPath, ["--allow-natives-syntax", await probe(), mode], {
    env: childEnv()
  })
  expect(run.stderr).toBe("")
  expect(run.code).toBe(0)
  return JSON.parse(run.stdout) as Probe
}

describe("start-up tiering", () => {
  it("a hot function is optimized at once without the hold, and only after a CPU-second with it", async () => {
    const free = await runProbe("free")
    expect(free.optimizedAtMs).not.toBeNull()
    expect(free.optimizedAtMs!).toBeLessThan(OPTIMIZE_AFTER_CPU_MS)

    const held = await runProbe("hold")
    expect(held.held).toBe(true)
    // The probe's own start-up stays well inside the held second, so the hold is what is measured.
    expect(held.startMs).toBeLessThan(OPTIMIZE_AFTER_CPU_MS / 2)
    expect(held.optimizedAtMs).not.toBeNull()
    expect(held.optimizedAtMs!).toBeGreaterThanOrEqual(OPTIMIZE_AFTER_CPU_MS)
  }, 60_000)

  it("an idle process gets TurboFan back after OPTIMIZE_AFTER_WALL_S, with little CPU used", async () => {
    const idle = await runProbe("idle")
    expect(idle.held).toBe(true)
    expect(idle.optimizedAtMs).not.toBeNull()
    expect(idle.optimizedAtMs!).toBeLessThan(OPTIMIZE_AFTER_CPU_MS)
  }, 60_000)

  it("leaves V8's tiering alone when the user set tiering flags of their own", () => {
    expect(userChoseTiering(["--jitless"], undefined)).toBe(true)
    expect(userChoseTiering([], "--max-old-space-size=100 --no-opt")).toBe(true)
    expect(userChoseTiering(["--turbofan"], undefined)).toBe(true)
    expect(
      userChoseTiering(["--trace-opt", "--optimize-for-size", "--conditions=engram-source"], "--enable-source-maps")
    )
      .toBe(false)
    expect(userChoseTiering([], undefined)).toBe(false)
  })
})
