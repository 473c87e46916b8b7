import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { parseConfigText } from "../../src/config/parse.js";
import { renderDefaultConfig } from "../../src/config/render.js";
import { MIN_ENGRAM_BYTES_BOUND, minEngramBytes } from "../../src/core/compaction/min-engram.js";
import { ConfigError } from "../../src/errors.js";
import { Config, defaultConfig } from "../../src/schema/config.js";
import { allKeys, errorOf, FILE, problemsOf } from "./config-fixtures.js";

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
      "patterns = ['ghp_[A-Za-z0-9]+', '(', 'x{2,1}', 'a?', 'a(?=b)']",
    ]);
    expect(problems.map((p) => [p.line, p.key])).toEqual([
      [2, "redaction.patterns[1]"],
      [2, "redaction.patterns[2]"],
      [2, "redaction.patterns[3]"],
      [2, "redaction.patterns[4]"],
    ]);
    expect(problems[0]?.message).toMatch(/^"\(": does not compile: Invalid regular expression: /);
    expect(problems[2]?.message).toBe('"a?": matches the empty string');
    expect(problems[3]?.message).toMatch(/^"a\(\?=b\)": cannot run in linear time/);
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
      // A list of tables is shown as the `[[table.key]]` header to add, never as `key = []`.
      const list = /^# \[\[(.+)\.(\w+)\]\]/.exec(line);
      if (list) seen.push(`${list[1]}.${list[2]}`);
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

describe("the smallest engram's bound", () => {
  it("is above the smallest engram: a config over the bound needs no measuring", () => {
    expect(minEngramBytes()).toBeLessThan(MIN_ENGRAM_BYTES_BOUND);
  });
});
