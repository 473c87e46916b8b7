import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { staleBuild } from "../support/dist-fresh.js";

const root = mkdtempSync(join(tmpdir(), "engram-dist-fresh-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function put(path: string, seconds: number): void {
  mkdirSync(join(root, path, ".."), { recursive: true });
  writeFileSync(join(root, path), "");
  utimesSync(join(root, path), seconds, seconds);
}

describe("the integration tests' build check", () => {
  it("names a source newer than its build, or without one, and nothing once built", () => {
    put("src/a.ts", 1000);
    expect(staleBuild(root)).toBe(join("src", "a.ts"));
    put("dist/src/a.js", 2000);
    // Compiled but not bundled: the bins the tests run would be the old ones.
    expect(staleBuild(root)).toBe(`${join("src", "a.ts")} (the bundle)`);
    put("dist/bundle-meta.json", 2000);
    expect(staleBuild(root)).toBeUndefined();
    put("src/a.ts", 3000);
    expect(staleBuild(root)).toBe(join("src", "a.ts"));
    put("dist/src/a.js", 3000);
    expect(staleBuild(root)).toBe(`${join("src", "a.ts")} (the bundle)`);
    put("dist/bundle-meta.json", 3000);
    put("bench/b.ts", 100);
    expect(staleBuild(root)).toBe(join("bench", "b.ts"));
    put("dist/bench/b.js", 100);
    put("src/types.d.ts", 5000);
    expect(staleBuild(root)).toBeUndefined();
  });
});
