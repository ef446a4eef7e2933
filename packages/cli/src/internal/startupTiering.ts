/**
 * V8's optimizing compiler (TurboFan) held back while the executable starts (decision 0107).
 *
 * A command such as `engram memory list` runs for under a CPU-second, yet V8 optimizes about 35 of
 * its functions (Effect's run loop, `node:url` and `node:path` helpers) on its background threads:
 * some 0.1–0.15 s of CPU for code that is about to exit. So the executable switches TurboFan off as
 * it starts and back on once the process has used {@link OPTIMIZE_AFTER_CPU_MS} of CPU: a command
 * that runs long (an import, a busy server) is optimized as before, after a CPU-second unoptimized
 * (interpreted and baseline-compiled code). An idle process (a server waiting for requests) gets it
 * back after {@link OPTIMIZE_AFTER_WALL_S}, so the poll does not wake it for ever.
 *
 * Left alone when the user passed V8 tiering flags of their own (`--jitless`, `--no-opt`, …).
 *
 * @internal
 */
import * as NodeV8 from "node:v8"

/** The CPU time (user + system, all threads) after which TurboFan is switched back on. */
export const OPTIMIZE_AFTER_CPU_MS = 1_000
/** The process's age (wall clock) after which TurboFan is switched back on whatever the CPU time. */
export const OPTIMIZE_AFTER_WALL_S = 10
/** How often the CPU time is read. */
const POLL_MS = 250

/** Flags that say the user chose how V8 compiles: the executable does not override them. */
const tieringFlag = /--(no-)?(opt|turbofan|jitless|maglev|sparkplug|always-opt|always-turbofan)\b/

/** True when `execArgv` or `NODE_OPTIONS` set V8 tiering flags of their own. */
export const userChoseTiering = (execArgv: ReadonlyArray<string>, nodeOptions: string | undefined): boolean =>
  execArgv.some((arg) => tieringFlag.test(arg)) || (nodeOptions !== undefined && tieringFlag.test(nodeOptions))

const cpuMs = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}

/**
 * Switches TurboFan off now and back on after {@link OPTIMIZE_AFTER_CPU_MS} of CPU (or
 * {@link OPTIMIZE_AFTER_WALL_S}). The poll is an unreferenced timer: it never keeps the process
 * alive. Returns whether it switched anything.
 */
export const holdBackOptimization = (): boolean => {
  if (userChoseTiering(process.execArgv, process.env["NODE_OPTIONS"])) return false
  NodeV8.setFlagsFromString("--no-opt")
  const poll = setInterval(() => {
    if (cpuMs() < OPTIMIZE_AFTER_CPU_MS && process.uptime() < OPTIMIZE_AFTER_WALL_S) return
    NodeV8.setFlagsFromString("--opt")
    clearInterval(poll)
  }, POLL_MS)
  poll.unref()
  return true
}
