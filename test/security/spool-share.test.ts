/**
 * Issue 40: "every budget has a disk bound, and one sender cannot take more than its share".
 * Every worker of a repository writes to one spool; a send that would take its sender past
 * `[agent_bus] sender_share` of `[memory] buffer_max_bytes` is refused, counted by sender,
 * and reported by `director status` and the next drain, while other senders still get in.
 * Through the built bins, with two senders on a real repository.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { spoolHoldings } from "../../src/state/spool-share.js";
import { dir, expectExit, initRepo, useCliHarness, wrk } from "../cli/cli-harness.js";
import type { TempRepo } from "../support/repo.js";

useCliHarness();

const emit = (repo: TempRepo, worker: string, text: string) =>
  wrk(repo, ["emit", "--worker", worker, "--kind", "fact", "--text", text, "--json"]);

const spoolFilesOf = (repo: TempRepo, worker: string): number =>
  readdirSync(join(repo.dir, ".engram", "spool"), { withFileTypes: true })
    .filter((e) => e.isFile() && e.name.endsWith(`.${worker}.ndjson`))
    .map((e) => e.name).length;

describe("one sender's share of the spool", () => {
  it("a flooding sender is refused at its share, counted by sender; another still gets in, and the drain reports it", async () => {
    // A share of 3355 bytes of the default 32 MiB: a few notes.
    const repo = await initRepo("[agent_bus]\nsender_share = 0.0001\n");
    let accepted = 0;
    let refused: Awaited<ReturnType<typeof emit>> | undefined;
    for (let i = 0; i < 20 && refused === undefined; i++) {
      const r = await emit(repo, "flood", `flood note number ${i} ${"padding ".repeat(30)}`);
      if (r.code === 0) accepted++;
      else refused = r;
    }
    expect(accepted).toBeGreaterThan(0);
    expect(refused, "the flooding sender was never refused").toBeDefined();
    expectExit(refused as NonNullable<typeof refused>, 3);
    expect(refused?.stderr).toContain('sender "flood" holds');
    expect(refused?.stderr).toContain(
      "(3355 bytes: agent_bus.sender_share 0.0001 of memory.buffer_max_bytes 33554432)",
    );
    expect(refused?.stderr).toContain("nothing was written");
    expect(spoolFilesOf(repo, "flood")).toBe(accepted);
    // A second refusal is counted too; the other sender still gets in.
    expectExit(await emit(repo, "flood", `one more ${"padding ".repeat(30)}`), 3);
    expectExit(await emit(repo, "quiet", "the quiet sender's note"), 0);

    const status = await dir(repo, ["status", "--json"]);
    expectExit(status, 0);
    const spool = (JSON.parse(status.stdout) as { spool: { files: number; refused: unknown } })
      .spool;
    expect(spool.files).toBe(accepted + 1);
    expect(spool.refused).toEqual({
      flood: { sends: 2, lines: 2, bytes: expect.any(Number) },
    });

    const run = await dir(repo, ["run", "--json"]);
    expectExit(run, 0);
    expect(run.stderr).toContain('spool: sender "flood" was refused 2 send(s)');
    const drained = (JSON.parse(run.stdout) as { drained: { accepted: number; refused?: unknown } })
      .drained;
    expect(drained.accepted).toBe(accepted + 1);
    expect(drained.refused).toEqual({ flood: { sends: 2, lines: 2, bytes: expect.any(Number) } });
    // Reported once; drained, the sender has its share again.
    const again = await dir(repo, ["run", "--json"]);
    expect((JSON.parse(again.stdout) as { drained: { refused?: unknown } }).drained.refused).toBe(
      undefined,
    );
    expectExit(await emit(repo, "flood", "after the drain"), 0);
  });

  it("a sender's holding is read from the spool's names (no stat of each waiting file); older names are looked at", async () => {
    const repo = await initRepo();
    expectExit(await emit(repo, "stranded", "a note no Director drained yet"), 0);
    const spool = join(repo.dir, ".engram", "spool");
    const [name] = readdirSync(spool).filter((n) => n.endsWith(".stranded.ndjson"));
    const size = statSync(join(spool, name as string)).size;
    // The name says the file's size.
    expect(name).toMatch(new RegExp(`^\\d+-\\d+-[0-9a-f]+-${size}\\.stranded\\.ndjson$`));
    expect(spoolHoldings(spool).get("stranded")).toBe(size);
    // A name's size is what counts (the file is not looked at): 1,000 bytes more than it holds.
    const text = readFileSync(join(spool, name as string), "utf8");
    writeFileSync(join(spool, `000000000000001-1-abc-${size + 1000}.stranded.ndjson`), text);
    // A name written before sizes were added: the file itself is measured.
    writeFileSync(join(spool, "000000000000002-1-abd.stranded.ndjson"), text);
    expect(spoolHoldings(spool, "stranded").get("stranded")).toBe(size + (size + 1000) + size);
  });
});
