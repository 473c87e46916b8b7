import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, parseConfigText } from "../../src/config/load.js";
import { renderDefaultConfig } from "../../src/config/render.js";
import { ConfigError, type ConfigProblem } from "../../src/errors.js";
import { Config, defaultConfig } from "../../src/schema/config.js";

const FILE = "config/dev.toml";

/** The ConfigError that parsing `lines` throws. */
function errorOf(lines: string[] | string): ConfigError {
  const text = Array.isArray(lines) ? `${lines.join("\n")}\n` : lines;
  try {
    parseConfigText(text, FILE);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

function problemsOf(lines: string[] | string): ConfigProblem[] {
  return [...errorOf(lines).problems];
}

/** Every dotted key of the schema, from a parsed default config. */
function allKeys(): string[] {
  const out: string[] = [];
  const walk = (v: unknown, at: string[]): void => {
    if (typeof v === "object" && v !== null && !Array.isArray(v)) {
      for (const [k, child] of Object.entries(v)) walk(child, [...at, k]);
    } else out.push(at.join("."));
  };
  walk(defaultConfig(), []);
  return out;
}

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
    const problems = problemsOf([
      "[state]",
      'dir = """',
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
      "config/dev.toml:8: nope: unknown section (known: memory, agent_bus, policy, redaction, state, github, sync, sessions)",
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

describe("parseConfigText: cross-field rules", () => {
  it("accepts the defaults, which satisfy every rule", () => {
    expect(() => parseConfigText(renderDefaultConfig(), FILE)).not.toThrow();
  });

  it("buffer_keep_recent_events < buffer_max_events, reported at the key that is set", () => {
    expect(problemsOf(["[memory]", "", "buffer_max_events = 200"])).toEqual([
      {
        key: "memory.buffer_max_events",
        line: 3,
        message: expect.stringMatching(
          /^memory\.buffer_keep_recent_events \(200\) must be less than memory\.buffer_max_events \(200\): /,
        ),
      },
    ]);
    const both = problemsOf([
      "[memory]",
      "buffer_keep_recent_events = 10",
      "buffer_max_events = 5",
    ]);
    expect(both.map((p) => [p.line, p.key])).toEqual([[2, "memory.buffer_keep_recent_events"]]);
  });

  it("buffer_low_water_ratio < buffer_high_water_ratio", () => {
    expect(problemsOf(["[memory]", "buffer_low_water_ratio = 0.8"])).toEqual([
      {
        key: "memory.buffer_low_water_ratio",
        line: 2,
        message: expect.stringContaining(
          "memory.buffer_low_water_ratio (0.8) must be less than memory.buffer_high_water_ratio (0.8)",
        ),
      },
    ]);
  });

  it("the newest window must fit in the byte budget below the low-water mark", () => {
    const err = errorOf(["[agent_bus]", "max_message_bytes = 1_000_000"]);
    expect(err.problems).toHaveLength(1);
    expect(err.problems[0]).toMatchObject({ key: "agent_bus.max_message_bytes", line: 2 });
    expect(err.message).toContain(
      "(200 * 1000000 = 200000000) must be at most memory.buffer_max_bytes * memory.buffer_low_water_ratio (33554432 * 0.5 = 16777216)",
    );
    expect(err.message).toContain("invariant 3");
    expect(err.message).toContain("invariant 4");
    // Exactly at the limit is fine: 256 * 65536 = 16 MiB = 32 MiB * 0.5.
    expect(() =>
      parseConfigText("[memory]\nbuffer_keep_recent_events = 256\n", FILE),
    ).not.toThrow();
    expect(problemsOf(["[memory]", "buffer_keep_recent_events = 257"])[0]?.key).toBe(
      "memory.buffer_keep_recent_events",
    );
  });

  it("the NATS duplicate window is at most the stream's max age", () => {
    expect(problemsOf(["[agent_bus.nats]", "max_age_seconds = 60"])).toEqual([
      {
        key: "agent_bus.nats.max_age_seconds",
        line: 2,
        message: expect.stringContaining(
          "agent_bus.nats.duplicate_window_seconds (120) must be at most agent_bus.nats.max_age_seconds (60)",
        ),
      },
    ]);
    expect(() =>
      parseConfigText(
        "[agent_bus.nats]\nmax_age_seconds = 1\nduplicate_window_seconds = 1\n",
        FILE,
      ),
    ).not.toThrow();
  });

  it("engram_max_bytes fits in each tier", () => {
    const problems = problemsOf(["[memory]", "engram_max_bytes = 5_000_000"]);
    expect(problems.map((p) => [p.line, p.key, p.message.split(":")[0]])).toEqual([
      [
        2,
        "memory.engram_max_bytes",
        "memory.engram_max_bytes (5000000) must be at most memory.st_max_total_bytes (4194304)",
      ],
    ]);
    const both = problemsOf(["[memory]", "engram_max_bytes = 9_000_000"]);
    expect(both).toHaveLength(2);
    expect(both[1]?.message).toContain("memory.lt_max_total_bytes (8388608)");
  });

  it("memory_md_max_bytes >= 1024", () => {
    expect(problemsOf(["[memory]", "memory_md_max_bytes = 1023"])).toEqual([
      {
        key: "memory.memory_md_max_bytes",
        line: 2,
        message: expect.stringMatching(
          /^memory\.memory_md_max_bytes \(1023\) must be at least 1024: /,
        ),
      },
    ]);
    expect(() => parseConfigText("[memory]\nmemory_md_max_bytes = 1024\n", FILE)).not.toThrow();
  });

  it("each redaction pattern compiles, named by its index", () => {
    const problems = problemsOf([
      "[redaction]",
      "patterns = ['ghp_[A-Za-z0-9]+', '(', 'x{2,1}', 'a?', '(a+)+b']",
    ]);
    expect(problems.map((p) => [p.line, p.key])).toEqual([
      [2, "redaction.patterns[1]"],
      [2, "redaction.patterns[2]"],
      [2, "redaction.patterns[3]"],
      [2, "redaction.patterns[4]"],
    ]);
    expect(problems[0]?.message).toMatch(/^"\(": does not compile: Invalid regular expression: /);
    expect(problems[2]?.message).toBe('"a?": matches the empty string');
    expect(problems[3]?.message).toMatch(/^"\(a\+\)\+b": nests unbounded repetition/);
  });

  it("collects every broken rule, together with schema problems", () => {
    const problems = problemsOf([
      "[memory]",
      "buffer_low_water_ratio = 0.9",
      "memory_md_max_bytes = 100",
      "stall_seconds = 'x'",
      "engram_max_bytes = 5_000_000",
      "[redaction]",
      "patterns = ['[']",
    ]);
    expect(problems.map((p) => [p.line, p.key])).toEqual([
      [2, "memory.buffer_low_water_ratio"],
      [3, "memory.memory_md_max_bytes"],
      [4, "memory.stall_seconds"],
      [5, "memory.engram_max_bytes"],
      [7, "redaction.patterns[0]"],
    ]);
  });

  it("skips a rule whose key already has a problem instead of judging a default", () => {
    // buffer_max_events is wrong: the rule keep < max must not fire against its default.
    const problems = problemsOf([
      "[memory]",
      "buffer_max_bytes = 20_000_000_000_000",
      "buffer_keep_recent_events = 150000",
      "buffer_max_events = 'x'",
    ]);
    expect(problems.map((p) => p.key)).toEqual(["memory.buffer_max_events"]);
  });
});

describe("renderDefaultConfig", () => {
  it("parses back to exactly the defaults", () => {
    expect(parseConfigText(renderDefaultConfig(), FILE)).toEqual(defaultConfig());
  });

  it("is deterministic and ends with one newline", () => {
    const text = renderDefaultConfig();
    expect(renderDefaultConfig()).toBe(text);
    expect(text.endsWith("\n")).toBe(true);
    expect(text.endsWith("\n\n")).toBe(false);
  });

  it("writes every key once, with a comment above it", () => {
    const lines = renderDefaultConfig().split("\n");
    let table = "";
    const seen: string[] = [];
    lines.forEach((line, i) => {
      const header = /^\[(.+)\]$/.exec(line);
      if (header) {
        table = header[1]!;
        expect(lines[i - 1], `comment above [${table}]`).toMatch(/^# /);
      }
      const key = /^(\w+) = /.exec(line);
      if (key) {
        seen.push(`${table}.${key[1]}`);
        expect(lines[i - 1], `comment above ${table}.${key[1]}`).toMatch(/^# /);
      }
      expect(line.length).toBeLessThanOrEqual(100);
    });
    expect(seen).toEqual(allKeys());
  });

  it("carries each .describe() text", () => {
    const text = renderDefaultConfig().replace(/\n# /g, " ");
    const memory = Config.shape.memory.unwrap();
    for (const [key, field] of Object.entries(memory.shape)) {
      expect(text, key).toContain(field.description);
    }
  });
});

describe("loadConfig", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "engram-config-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("gives the defaults when the default file is missing", async () => {
    const repo = path.join(dir, "empty");
    await mkdir(repo);
    expect(await loadConfig(repo)).toEqual({
      config: defaultConfig(),
      path: path.join(repo, "config", "dev.toml"),
      exists: false,
    });
  });

  it("reads config/dev.toml and names it relative to the repository in errors", async () => {
    const repo = path.join(dir, "repo");
    await mkdir(path.join(repo, "config"), { recursive: true });
    await writeFile(path.join(repo, "config", "dev.toml"), "[memory]\nstall_seconds = 60\n");
    const loaded = await loadConfig(repo);
    expect(loaded.exists).toBe(true);
    expect(loaded.config.memory.stall_seconds).toBe(60);

    await writeFile(path.join(repo, "config", "dev.toml"), "[memory]\nstall_seconds = 0\n");
    const shown = path.join("config", "dev.toml");
    await expect(loadConfig(repo)).rejects.toMatchObject({
      message: `${shown}:2: memory.stall_seconds: expected a positive integer, got 0`,
      file: shown,
    });
  });

  it("rejects a missing explicit --config file", async () => {
    const missing = path.join(dir, "nope.toml");
    const err = await loadConfig(dir, missing).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toBe(`${missing}: config file not found`);
    expect((err as ConfigError).file).toBe(missing);
  });

  it("reads an explicit file, even when the default one exists", async () => {
    const other = path.join(dir, "other.toml");
    await writeFile(other, "[agent_bus]\nheartbeat_interval_seconds = 5\n");
    const loaded = await loadConfig(path.join(dir, "repo"), other);
    expect(loaded).toMatchObject({ path: other, exists: true });
    expect(loaded.config.agent_bus.heartbeat_interval_seconds).toBe(5);
    expect(loaded.config.memory.stall_seconds).toBe(600);
  });

  it("reports a folder given as --config as unreadable", async () => {
    await expect(loadConfig(dir, dir)).rejects.toBeInstanceOf(ConfigError);
  });
});

describe("docs/configuration.md", () => {
  it("documents every key", async () => {
    const doc = await readFile(new URL("../../docs/configuration.md", import.meta.url), "utf8");
    for (const key of allKeys()) {
      const name = key.split(".").pop()!;
      expect(doc, key).toContain(`\`${name}\``);
    }
    for (const section of [
      "[memory]",
      "[agent_bus]",
      "[policy.sync_main]",
      "[redaction]",
      "[state]",
      "[github]",
    ]) {
      expect(doc).toContain(section);
    }
  });
});
