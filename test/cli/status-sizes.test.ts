/** `director status` prints sizes for people (binary units); `--json` keeps the byte counts. */
import { afterAll, describe, expect, it } from "vitest";
import { humanBudget, humanBytes } from "../../src/cli/sizes.js";
import { describeResult, director, jsonOf } from "../support/bins.js";
import { TempDirs } from "../support/repo.js";

const dirs = new TempDirs();
afterAll(() => dirs.cleanup());

describe("humanBytes", () => {
  it("bytes under a KiB, one decimal above, none when it is .0", () => {
    expect(humanBytes(0)).toBe("0 B");
    expect(humanBytes(1023)).toBe("1023 B");
    expect(humanBytes(1024)).toBe("1 KiB");
    expect(humanBytes(3809)).toBe("3.7 KiB");
    expect(humanBytes(1_258_291)).toBe("1.2 MiB");
    expect(humanBytes(33_554_432)).toBe("32 MiB");
    expect(humanBytes(5 * 1024 ** 3)).toBe("5 GiB");
    // What would print as 1024.0 of a unit is the next unit.
    expect(humanBytes(1024 * 1024 - 1)).toBe("1 MiB");
    expect(humanBudget(3833, 1_048_576)).toBe("3.7 KiB/1 MiB");
  });
});

describe("director status", () => {
  it("prints budgets in KiB and MiB; --json the bytes", async () => {
    const repo = dirs.repo("engram-status-sizes-");
    // The defaults: buffer_max_bytes 32 MiB, st_max_total_bytes 4 MiB, memory_md_max_bytes 16 KiB.
    const init = await director(["init"], { cwd: repo.dir });
    expect(init.code, describeResult(init)).toBe(0);
    const text = await director(["status"], { cwd: repo.dir });
    expect(text.code, describeResult(text)).toBe(0);
    expect(text.stdout).toMatch(/^buffer: {2}0\/\d+ events, 0 B\/32 MiB$/m);
    expect(text.stdout).toMatch(/^st: {6}0\/\d+ files, 0 B\/4 MiB$/m);
    expect(text.stdout).toMatch(/^focus: {3}\d+\/\d+ items, [\d.]+ (B|KiB)\/16 KiB/m);
    expect(text.stdout).not.toMatch(/\d bytes/);
    const json = await director(["status", "--json"], { cwd: repo.dir });
    expect(json.code, describeResult(json)).toBe(0);
    const s = jsonOf<{ buffer: { max_bytes: number }; focus: { bytes: number } }>(json);
    expect(s.buffer.max_bytes).toBe(33_554_432);
    expect(Number.isInteger(s.focus.bytes)).toBe(true);
  });
});
