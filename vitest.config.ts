import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/** Pure and in-process tests: no built bin, no child process (`npm run test:fast`). */
const FAST = [
  "test/core/**/*.test.ts",
  "test/schema/**/*.test.ts",
  "test/config/**/*.test.ts",
  "test/structure/**/*.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One fork per core, not Vitest's cores minus one: most integration tests wait on the
    // bins, git and servers they start, so a second fork on two cores halves the wall time.
    maxWorkers: Math.max(2, availableParallelism()),
    // The default output, and a banner at the end when NATS tests were skipped.
    reporters: ["default", "./test/support/nats-reporter.ts"],
    projects: [
      { extends: true, test: { name: "fast", include: FAST } },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: FAST,
          // The integration tests run dist/: never against a build older than src/.
          globalSetup: ["test/support/dist-fresh.ts"],
        },
      },
    ],
  },
});
