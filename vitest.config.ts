import { availableParallelism } from "node:os"
import { defineConfig } from "vitest/config"
import { SlowFirst } from "./test/support/slowFirst.js"

// Tests run against each package's TypeScript source (the "engram-source" export condition),
// so no build step stands between an edit and a test run.
export default defineConfig({
  resolve: { conditions: ["engram-source"] },
  ssr: { resolve: { conditions: ["engram-source"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    // Bundles the CLI once for the tests that run it as a process.
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // At least two files at once, even on 2 cores (vitest's default there is one): much of the
    // suite waits on child processes, PostgreSQL and the disk, and a second file fills that wait
    // (decision 0195). `--maxWorkers=1` runs the files one after another.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // A worker keeps its loaded modules from one file to the next instead of loading Effect and the
    // packages afresh for every file (collection took 206 s of the 1,115 s). Every file builds its
    // own layers, stores and directories, so nothing a test checks is left over from another file;
    // `--isolate` restores a fresh module graph per file (decision 0195).
    isolate: false,
    // The minute-long files start first, so that none of them is left running alone at the end.
    sequence: { sequencer: SlowFirst }
  }
})
