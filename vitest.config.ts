import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

/** Pure and in-process tests: no built bin, no child process (`npm run test:fast`). */
export const FAST = [
  "test/core/**/*.test.ts",
  "test/schema/**/*.test.ts",
  "test/config/**/*.test.ts",
  "test/structure/**/*.test.ts",
  // Pure and in-process tests kept beside the adapters they concern.
  "test/cli/report.test.ts",
  "test/director/no-secret.test.ts",
  "test/git/pack-delta.test.ts",
  "test/graph/context-tokens.test.ts",
  "test/sessions/write-flags.test.ts",
  "test/worker/envelope-check.test.ts",
];

export default defineConfig({
  test: {
    // A timeout catches a hang; it must never be what fails a slow machine. The pure tests
    // compute and stay well under a minute even on a loaded machine; the integration tests
    // (below) wait on processes, git and servers, and get five minutes.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // A CI runner's own GitHub Actions variables would make `memory.publish = "auto"` mean
    // pull requests in every test repository: tests that want them set them themselves.
    env: { GITHUB_ACTIONS: "", GITHUB_REPOSITORY: "" },
    // One fork per core, not Vitest's cores minus one: most integration tests wait on the
    // bins, git and servers they start, so a second fork on two cores halves the wall time.
    maxWorkers: Math.max(2, availableParallelism()),
    // The default output, and a banner at the end when NATS or real-host tests were skipped.
    reporters: ["default", "./test/support/nats-reporter.ts", "./test/support/hosts-reporter.ts"],
    projects: [
      {
        extends: true,
        // Pure tests share no state: one module graph per fork instead of one per file.
        test: { name: "fast", include: FAST, isolate: false },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: FAST,
          // Five times the slowest test's quiet-machine time, and above every child's safety
          // net (test/support/bins.ts) and every wait's deadline (test/support/wait.ts), so
          // that a hung child shows as its own output, not as a bare timeout.
          testTimeout: 300_000,
          hookTimeout: 300_000,
          // The integration tests run dist/: never against a build older than src/.
          globalSetup: ["test/support/dist-fresh.ts"],
        },
      },
    ],
  },
});
