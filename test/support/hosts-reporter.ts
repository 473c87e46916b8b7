import type { Reporter, TestModule } from "vitest/node";
import { HOST_TEST_FILE, hostsRequired, hostsSkippedBanner, missingHosts } from "./hosts.js";

/**
 * Says loudly, at the end of the run, how many real-host tests were skipped because the
 * pinned hosts are not installed, and how to install them: an untested host must not pass
 * unnoticed.
 */
export default class HostsSkipReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const missing = missingHosts();
    if (missing.length === 0) return;
    let skipped = 0;
    for (const module of modules) {
      if (!HOST_TEST_FILE.test(module.moduleId)) continue;
      for (const test of module.children.allTests()) {
        if (test.result().state === "skipped") skipped++;
      }
    }
    if (skipped > 0) process.stderr.write(hostsSkippedBanner(skipped, hostsRequired(), missing));
  }
}
