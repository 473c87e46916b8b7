/** `director init --bus`: where `bus = "..."` goes in a config file, whatever its shape. */
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { withWorkerBus } from "../../src/director/init-bus.js";

const busOf = (text: string) => (parse(text) as { worker?: { bus?: string } }).worker?.bus;

describe("withWorkerBus", () => {
  it("replaces the commented example of a rendered [worker] table", () => {
    const text =
      '[state]\ndir = ".engram"\n\n[worker]\n\n# Where workers send.\n# bus = "git:origin"\n';
    const out = withWorkerBus(text, "git:upstream");
    expect(out).toBe(
      '[state]\ndir = ".engram"\n\n[worker]\n\n# Where workers send.\nbus = "git:upstream"\n',
    );
    expect(busOf(out)).toBe("git:upstream");
  });

  it("adds the key under a [worker] table without the example, before the next table", () => {
    const out = withWorkerBus('[worker]\n\n[state]\ndir = "x"\n', "spool");
    expect(busOf(out)).toBe("spool");
    expect((parse(out) as { state: { dir: string } }).state.dir).toBe("x");
  });

  it("appends a [worker] table to a config without one (an older init's)", () => {
    for (const text of ["", '[state]\ndir = "x"', '[state]\ndir = "x"\n']) {
      expect(busOf(withWorkerBus(text, "git:origin"))).toBe("git:origin");
    }
  });
});
