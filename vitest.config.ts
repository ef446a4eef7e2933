import { defineConfig } from "vitest/config"

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
    hookTimeout: 60_000
  }
})
