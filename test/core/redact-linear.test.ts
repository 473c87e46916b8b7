/**
 * Every scan is linear in its input (issue 40): on every built-in rule and every pattern a
 * repository adds. No test here depends on the machine's speed: each time is compared with a
 * baseline measured in the same test, the redaction of prose of the same length, with bounds
 * that linear work meets many times over and quadratic work misses by orders of magnitude;
 * a scan over that bound is then judged by how its time grows with the text.
 */
import { describe, expect, it } from "vitest";
import { enableLinearRegExp } from "../../src/config/regexp-engine.js";
import { quarantineExcerpt } from "../../src/core/ingest/normalize.js";
import { createRedactor, type Redactor } from "../../src/core/ingest/redact.js";
import { buildRuleSet, findSpans } from "../../src/core/ingest/redact-scan.js";
import { plainRules } from "../../src/core/ingest/rules/built-in.js";

// A repository's patterns need V8's linear engine, which loading a config turns on.
enableLinearRegExp();

/** The least of a few timings of `fn`, in milliseconds: a pause of the machine is not the scan. */
function timeOf(fn: () => void, runs = 3): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    fn();
    best = Math.min(best, performance.now() - start);
  }
  return best;
}

const PROSE =
  "the deploy failed because the cache was cold, so we retried with a fresh budget of 300 ms. ";

function prose(chars: number): string {
  return PROSE.repeat(Math.ceil(chars / PROSE.length)).slice(0, chars);
}

/** What the redactor of `text` costs beside that of prose as long (at least 1 ms of it). */
function costRatio(redactor: Redactor, text: string): number {
  const baseline = Math.max(
    1,
    timeOf(() => redactor.redact(prose(text.length))),
  );
  // Retried only when over: a linear scan is under at once.
  const spent = timeOf(() => redactor.redact(text), 1);
  if (spent <= 50 * baseline) return spent / baseline;
  // Over: timed again beside a fresh baseline, since a loaded machine slows both alike.
  const again = timeOf(() => redactor.redact(text), 2);
  const local = Math.max(
    1,
    timeOf(() => redactor.redact(prose(text.length))),
  );
  return Math.min(spent / baseline, again / local);
}

const MIB = 1 << 20;

describe("the built-in rules scan in linear time", () => {
  const redactor = createRedactor();

  // The shapes of the issue: a key word, then a long run of blanks, and lines of key words.
  it.each([
    ["password= then blanks", `password=${" ".repeat(MIB)}`],
    ["password then blanks", `password${" ".repeat(MIB)}x`],
    ["passphrase then blanks", `passphrase ${" ".repeat(MIB)}`],
    ["passphrase then tabs", `passphrase:${"\t".repeat(MIB)}`],
    ["api_key then blanks", `api_key ${" ".repeat(MIB)}`],
    ["token then blanks", `token${" ".repeat(MIB)}=`],
    ["secret then blanks", `client_secret ${" ".repeat(MIB)}: x`],
    ["Authorization then blanks", `Authorization${" ".repeat(MIB)}`],
    ["repeated generic key words", "okta sumo twitter private_ai ".repeat(MIB / 29)],
    ["repeated key words with values", "okta=aaaa ".repeat(MIB / 10)],
    ["repeated curl", 'curl"'.repeat(MIB / 5)],
    ["repeated passphrase", "passphrase: a ".repeat(MIB / 14)],
  ])(
    "%s (1 MiB) costs what prose does",
    (_name, text) => {
      expect(costRatio(redactor, text)).toBeLessThan(50);
    },
    120_000,
  );

  it("each rule, on its key words followed by long runs, costs what prose does", () => {
    const n = 64 * 1024;
    const baseline = Math.max(
      1,
      timeOf(() => redactor.redact(prose(n))),
    );
    const fillers = [" ", "\t", "a", "0", "=", ":", "-", ".", "/", '"', "\\n", "a ", "=a", "aA0"];
    const slow: string[] = [];
    for (const rule of plainRules()) {
      const set = buildRuleSet([rule]);
      for (const keyword of rule.keywords.slice(0, 2)) {
        for (const filler of fillers) {
          const run = filler.repeat(Math.ceil(n / filler.length));
          for (const text of [
            keyword + run,
            `${keyword}=${run}`,
            (keyword + filler).repeat(Math.ceil(n / (keyword.length + filler.length))),
          ]) {
            let spent = timeOf(() => findSpans(text, set), 1);
            let base = baseline;
            if (spent > 100 * base) {
              // Timed again beside a fresh baseline: a loaded machine slows both alike.
              spent = Math.min(
                spent,
                timeOf(() => findSpans(text, set)),
              );
              base = Math.max(
                base,
                timeOf(() => redactor.redact(prose(n))),
              );
            }
            if (spent > 100 * base) {
              // A line that is all matches (a key word repeated) costs more than prose and is
              // still linear: growth tells them apart. Four times the text costs about four
              // times as much when linear, sixteen when quadratic.
              const grown = timeOf(() => findSpans(text.repeat(4), set)) / Math.max(spent, 0.5);
              if (spent > 2_000 || grown > 10)
                slow.push(
                  `${rule.id} on ${JSON.stringify(text.slice(0, 24))}…: ${spent.toFixed(0)} ms, ` +
                    `x${grown.toFixed(1)} on four times the text`,
                );
            }
          }
        }
      }
    }
    expect(slow, `prose of ${n} characters: ${baseline.toFixed(1)} ms`).toEqual([]);
  }, 300_000);
});

describe("a repository's patterns run in linear time", () => {
  it("runs a pattern that backtracks for ever elsewhere, on a sentence and on 1 MiB", () => {
    // Both pass a check for nested unbounded repetition; both backtrack for ever.
    const redactor = createRedactor(["(.*a){12}Q", "\\w*\\w*\\w*x"]);
    const sentence = `${"a".repeat(30)} ${"b".repeat(121)}`;
    expect(redactor.redact(sentence)).toEqual({ text: sentence, count: 0 });
    expect(costRatio(redactor, "a".repeat(128 * 1024))).toBeLessThan(50);
    expect(redactor.redact(`x ${"a".repeat(12)}Q y`).text).toBe("[REDACTED:custom-0] y");
  }, 120_000);

  it("keeps counted repetitions longer than the engine copies", () => {
    const redactor = createRedactor(["acme=[A-Za-z0-9]{32}", "ACME-[0-9]{4,40}?!"]);
    const token = `acme=${"Ab3".repeat(10)}xy`;
    expect(redactor.redact(`a ${token} b`).text).toBe("a [REDACTED:custom-0] b");
    expect(redactor.redact(`acme=${"A".repeat(31)}`).count).toBe(0);
    expect(redactor.redact(`ACME-${"7".repeat(20)}!`).text).toBe("[REDACTED:custom-1]");
    expect(redactor.redact(`ACME-${"7".repeat(41)}!`).count).toBe(0);
  });

  it.each(["a(?=b)", "(?<!x)secret-[0-9]+", "(\\w+)-\\1"])(
    "refuses %s, which needs a backtracking engine",
    (pattern) => {
      expect(() => createRedactor([pattern])).toThrow(/cannot run in linear time/);
    },
  );
});

describe("a rejected line is cut before it is scanned", () => {
  it("redacts only the head of a 4 MiB line for its quarantine excerpt", () => {
    const seen: number[] = [];
    const inner = createRedactor();
    const counting: Redactor = {
      ruleNames: inner.ruleNames,
      redact: (text) => {
        seen.push(text.length);
        return inner.redact(text);
      },
    };
    const line = `{"password": "hunter2", "pad": "${"k9Q ".repeat(MIB)}`;
    const excerpt = quarantineExcerpt(line, counting);
    expect(excerpt.text).toMatch(/^\{"password": "\[REDACTED:password-assignment\]", "pad": "k9Q /);
    expect(Math.max(...seen)).toBeLessThanOrEqual(300 + 16_384);
  });
});
