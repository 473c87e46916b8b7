import type { Reporter, TestModule } from "vitest/node";
import { NATS_TEST_FILE, natsRequired, natsServerBinary, natsSkippedBanner } from "./nats.js";

/**
 * Says loudly, at the end of the run, how many NATS tests were skipped because nats-server
 * is not installed, and how to install it: a skipped transport must not pass unnoticed.
 */
export default class NatsSkipReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    if (natsServerBinary() !== undefined) return;
    let skipped = 0;
    for (const module of modules) {
      if (!NATS_TEST_FILE.test(module.moduleId)) continue;
      for (const test of module.children.allTests()) {
        if (test.result().state === "skipped") skipped++;
      }
    }
    if (skipped > 0) process.stderr.write(natsSkippedBanner(skipped, natsRequired()));
  }
}
