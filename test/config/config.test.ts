import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parseConfigText } from "../../src/config/parse.js";
import { defaultConfig } from "../../src/schema/config.js";
import { errorOf, FILE, problemsOf } from "./config-fixtures.js";

describe("parseConfigText: valid input", () => {
  it("gives the defaults for an empty file and for comments only", () => {
    expect(parseConfigText("", FILE)).toEqual(defaultConfig());
    expect(parseConfigText("# nothing here\n\n", FILE)).toEqual(defaultConfig());
  });

  it("merges what is set with the defaults, section by section", () => {
    const config = parseConfigText(
      [
        "[memory]",
        "buffer_max_events = 5000",
        "memory_md_update_cadence = 'hybrid'",
        "[policy.sync_main]",
        "max_commits_behind = 3",
        "[redaction]",
        'patterns = ["sk_live_[A-Za-z0-9]{16,}"]',
      ].join("\n"),
      FILE,
    );
    const expected = defaultConfig();
    expected.memory.buffer_max_events = 5000;
    expected.memory.memory_md_update_cadence = "hybrid";
    expected.policy.sync_main.max_commits_behind = 3;
    expected.redaction.patterns = ["sk_live_[A-Za-z0-9]{16,}"];
    expect(config).toEqual(expected);
  });

  it("accepts a byte-order mark, CRLF line ends and digit separators", () => {
    const config = parseConfigText("\uFEFF[memory]\r\nbuffer_max_bytes = 64_000_000\r\n", FILE);
    expect(config.memory.buffer_max_bytes).toBe(64_000_000);
  });
});

describe("parseConfigText: errors name the file, the line and the key", () => {
  it("formats a wrong type exactly as documented", () => {
    const lines = [
      "# engram",
      "",
      "[memory]",
      ...Array(8).fill("# padding"),
      'buffer_max_bytes = "lots"',
    ];
    const err = errorOf(lines);
    expect(err.message).toBe(
      'config/dev.toml:12: memory.buffer_max_bytes: expected a positive integer, got "lots"',
    );
    expect(err.file).toBe(FILE);
    expect(err.exitCode).toBe(2);
    expect(err.problems).toEqual([
      {
        key: "memory.buffer_max_bytes",
        line: 12,
        message: 'expected a positive integer, got "lots"',
      },
    ]);
  });

  it("reports a TOML syntax error with its line and column", () => {
    const err = errorOf(["[memory]", "buffer_max_events = 10", "stall_seconds = "]);
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ key: "", line: 3 });
    expect(err.message).toMatch(/^config\/dev\.toml:3: TOML syntax error: .+ \(column \d+\)$/);
  });

  it("reports a key defined twice as a syntax error on the second line", () => {
    const err = errorOf(["[memory]", "stall_seconds = 1", "stall_seconds = 2"]);
    expect(err.problems[0]?.line).toBe(3);
  });

  it("reports an unknown key with a suggestion", () => {
    const err = errorOf(["[memory]", "buffer_max_events = 1000", "bufer_max_bytes = 1000"]);
    expect(err.message).toBe(
      "config/dev.toml:3: memory.bufer_max_bytes: unknown key (did you mean buffer_max_bytes?)",
    );
  });

  it("reports a key put in the wrong section", () => {
    expect(problemsOf(["[agent_bus]", "", "dir = 'x'"])).toEqual([
      { key: "agent_bus.dir", line: 3, message: "unknown key (dir belongs in [state])" },
    ]);
    expect(problemsOf(["stall_seconds = 5"])).toEqual([
      { key: "stall_seconds", line: 1, message: "unknown key (stall_seconds belongs in [memory])" },
    ]);
  });

  it("reports an unknown section, top-level or nested, at its header", () => {
    expect(problemsOf(["[memory]", "stall_seconds = 5", "", "[memroy]", "x = 1"])).toEqual([
      { key: "memroy", line: 4, message: "unknown section (did you mean memory?)" },
    ]);
    expect(problemsOf(["[policy.sync_mian]", "max_commits_behind = 1"])).toEqual([
      { key: "policy.sync_mian", line: 1, message: "unknown section (did you mean sync_main?)" },
    ]);
    expect(problemsOf(["[adapters.notion]", "token = 'x'"])[0]).toMatchObject({
      key: "adapters",
      line: 1,
      message: expect.stringMatching(/^unknown section \(known: memory, agent_bus, policy/),
    });
  });

  it("says what was expected and what was found for each type", () => {
    const problems = problemsOf([
      "[memory]",
      "buffer_max_events = 1.5",
      "buffer_keep_recent_events = -1",
      "promote_decisions = 'yes'",
      'memory_md_update_cadence = "weekly"',
      "promote_min_confidence = 2",
      "compaction_min_interval_seconds = -0.5",
      "[agent_bus]",
      "max_message_bytes = [1]",
      "[redaction]",
      "patterns = ['ok', 3]",
      "[state]",
      "dir = 1979-05-27",
    ]);
    expect(problems.map((p) => `${p.line}: ${p.key}: ${p.message}`)).toEqual([
      "2: memory.buffer_max_events: expected a positive integer, got 1.5",
      "3: memory.buffer_keep_recent_events: expected a non-negative integer, got -1",
      '4: memory.promote_decisions: expected true or false, got "yes"',
      '5: memory.memory_md_update_cadence: expected one of "on_merge", "periodic", "hybrid", got "weekly"',
      "6: memory.promote_min_confidence: expected a number from 0 to 1, got 2",
      "7: memory.compaction_min_interval_seconds: expected a non-negative number, got -0.5",
      "9: agent_bus.max_message_bytes: expected a positive integer, got an array",
      "11: redaction.patterns[1]: expected a string, got 3",
      "13: state.dir: expected a string, got a date or time (1979-05-27)",
    ]);
  });

  it("reports out-of-range values", () => {
    expect(problemsOf(["[memory]", "buffer_high_water_ratio = 1"])).toEqual([
      {
        key: "memory.buffer_high_water_ratio",
        line: 2,
        message: "expected a number greater than 0 and less than 1, got 1",
      },
    ]);
    expect(problemsOf(["[agent_bus]", "heartbeat_ttl_seconds = 0"])[0]?.message).toBe(
      "expected a positive integer, got 0",
    );
    expect(problemsOf(["[memory]", "buffer_low_water_ratio = nan"])[0]?.message).toBe(
      "expected a number greater than 0 and less than 1, got nan",
    );
  });

  it("reports a section that is not a table", () => {
    expect(problemsOf(["memory = 3"])).toEqual([
      { key: "memory", line: 1, message: "expected a table, got 3" },
    ]);
  });

  it("locates dotted keys, quoted keys and one-line inline tables", () => {
    const problems = problemsOf([
      "memory.stall_seconds = 0",
      "[agent_bus]",
      '"max_message_bytes" = 0',
      "[policy]",
      "sync_main = { max_commits_behind = 1, max_seconds_behind = -1 }",
    ]);
    expect(problems.map((p) => [p.line, p.key])).toEqual([
      [1, "memory.stall_seconds"],
      [3, "agent_bus.max_message_bytes"],
      [5, "policy.sync_main.max_seconds_behind"],
    ]);
  });

  it("does not mistake lines inside a multi-line string for keys", () => {
    // (A multi-line `[state] dir` would itself be refused: a folder name has no line break.)
    const problems = problemsOf([
      "[sync]",
      'project = """',
      "[memory]",
      "stall_seconds = 'x'",
      '"""',
      "[memory]",
      "stall_seconds = 'x'",
    ]);
    expect(problems.map((p) => [p.line, p.key])).toEqual([[7, "memory.stall_seconds"]]);
  });

  it("counts lines the same with CRLF line ends", () => {
    const err = errorOf("[memory]\r\n\r\nstall_seconds = 'x'\r\n");
    expect(err.problems[0]?.line).toBe(3);
  });

  it("reports every problem at once, in file order, one per line", () => {
    const err = errorOf([
      "[state]",
      "dir = 7",
      "[memory]",
      "bufer_max_bytes = 1",
      "buffer_max_events = 'many'",
      "[agent_bus]",
      "max_message_bytes = 0",
      "[nope]",
    ]);
    expect(err.message.split("\n")).toEqual([
      "config/dev.toml:2: state.dir: expected a string, got 7",
      "config/dev.toml:4: memory.bufer_max_bytes: unknown key (did you mean buffer_max_bytes?)",
      'config/dev.toml:5: memory.buffer_max_events: expected a positive integer, got "many"',
      "config/dev.toml:7: agent_bus.max_message_bytes: expected a positive integer, got 0",
      "config/dev.toml:8: nope: unknown section (known: memory, agent_bus, policy, redaction, quarantine, state, github, sync, sessions, sources, worker)",
    ]);
    expect(err.problems).toHaveLength(5);
  });

  it("finds the line of a bad value wherever it sits (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("", "# comment", "buffer_max_bytes = 40_000_000"), {
          maxLength: 6,
        }),
        fc.array(fc.constantFrom("", "# comment", "promote_decisions = false"), { maxLength: 6 }),
        fc.constantFrom("'x'", "-3", "0", "2.5", "true", "[]"),
        (before, after, value) => {
          const unique = (ls: string[]) =>
            ls.filter((l, i) => !l.includes("=") || ls.indexOf(l) === i);
          const lines = [
            "[memory]",
            ...unique(before),
            `stall_seconds = ${value}`,
            ...unique(after),
          ];
          const problems = problemsOf(lines);
          expect(problems).toHaveLength(1);
          expect(problems[0]?.line).toBe(lines.indexOf(`stall_seconds = ${value}`) + 1);
        },
      ),
      { numRuns: 60 },
    );
  });
});
