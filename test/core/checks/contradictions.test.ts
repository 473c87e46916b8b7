import { describe, expect, it } from "vitest";
import { contradictionFlags, contradicts } from "../../../src/core/checks/contradictions.js";
import { sealEngram } from "../../../src/core/model/engram.js";
import { knowledgeItems } from "../../../src/core/proposal/knowledge.js";
import type { Engram } from "../../../src/schema/engram.js";
import { engram } from "../focus-fixtures.js";

const POSTGRES = "Use Postgres advisory locks for the job queue";
const REDIS = "Use Redis locks for the job queue";

function decisions(titles: string[], topics = ["jobs"], version?: string): Engram {
  return engram({
    decisions: titles.map((title) => ({ title, rationale: `why ${title}` })),
    topics,
    ...(version === undefined ? {} : { version }),
  });
}

function flagsOf(main: Engram[], added: Engram[]) {
  return contradictionFlags(knowledgeItems(added), main, added);
}

describe("contradicts memory", () => {
  it("flags a new value for the same subject, naming the decision on main and what to do", () => {
    const main = decisions([POSTGRES]);
    const added = decisions([REDIS], ["jobs"], "20250102-000000Z");
    const flags = flagsOf([main], [added]);
    expect(flags).toHaveLength(1);
    const flag = flags[0];
    expect(flag?.kind).toBe("contradiction");
    expect(flag?.reason).toBe("contradicts-memory");
    expect(flag?.text).toBe(REDIS);
    expect(flag?.item_id).toMatch(/^l_[0-9a-f]{16}$/);
    expect(flag?.contradicts).toEqual({ id: `${main.engram_id}#d0`, text: POSTGRES });
    expect(flag?.why).toContain(`contradicts ${main.engram_id}#d0 on main`);
    expect(flag?.why).toContain(`worker emit --supersedes ${main.engram_id}#d0`);
    expect(flag?.why).toContain("or reject one");
  });

  it("flags a new number for the same setting, and the same words negated", () => {
    expect(contradicts("Retry failed jobs 3 times", "Retry failed jobs 5 times", false)).toBe(
      "value",
    );
    expect(
      contradicts("Squash pull requests on merge", "Do not squash pull requests on merge", false),
    ).toBe("negation");
  });

  it("does not flag two decisions about different things in one topic", () => {
    const main = decisions([
      POSTGRES,
      "Cap the job queue at 500 jobs",
      "Retry failed jobs with exponential backoff",
    ]);
    const added = decisions(
      [
        "Use exponential backoff for the job queue",
        "Log every job queue retry to Sentry",
        "Use Redis for the session cache",
        "Use Vitest for unit tests",
      ],
      ["jobs"],
      "20250102-000000Z",
    );
    expect(flagsOf([main], [added])).toEqual([]);
    // A value only one side names adds to the decision; it does not contradict it.
    expect(contradicts(POSTGRES, "Use advisory locks for the job queue", true)).toBeUndefined();
    // Most words shared, but no topic in common: not the same subject.
    expect(
      contradicts(
        "Use Redis locks for the nightly job queue",
        "Use Postgres locks for the job queue",
        false,
      ),
    ).toBeUndefined();
    expect(
      contradicts(
        "Use Redis locks for the nightly job queue",
        "Use Postgres locks for the job queue",
        true,
      ),
    ).toBe("value");
  });

  it("does not flag a decision that says what it replaces, or one memory replaced already", () => {
    const main = decisions([POSTGRES]);
    const {
      engram_id: _id,
      hash: _hash,
      ...body
    } = decisions([REDIS], ["jobs"], "20250102-000000Z");
    const replacing = sealEngram({ ...body, replaces: [{ was: POSTGRES, now: REDIS }] });
    expect(flagsOf([main], [replacing])).toEqual([]);
    // Main moved to MySQL already: Postgres is no longer current, MySQL is, and Redis contradicts it.
    const {
      engram_id: _i,
      hash: _h,
      ...later
    } = decisions(["Use MySQL locks for the job queue"], ["jobs"], "20250101-120000Z");
    const moved = sealEngram({
      ...later,
      replaces: [{ was: POSTGRES, now: "Use MySQL locks for the job queue" }],
    });
    const flags = flagsOf([main, moved], [decisions([REDIS], ["jobs"], "20250102-000000Z")]);
    expect(flags.map((f) => f.contradicts?.text)).toEqual(["Use MySQL locks for the job queue"]);
  });

  it("does not flag what memory already holds (a promoted copy of a decision on main)", () => {
    const main = decisions([POSTGRES, REDIS]);
    expect(flagsOf([main], [decisions([REDIS], ["jobs"], "20250102-000000Z")])).toEqual([]);
  });

  it("takes an acronym for what a decision is about, unless it is what the decision chooses", () => {
    // CI and CD, HTTP and DNS responses: two things, not two values of one setting.
    expect(contradicts("Run CI on every push", "Run CD on merge", true)).toBeUndefined();
    expect(
      contradicts("Run CI on every push", "Do not run CD on every push", true),
    ).toBeUndefined();
    expect(
      contradicts(
        "Cache the HTTP responses for 5 minutes",
        "Cache the DNS responses for 5 minutes",
        true,
      ),
    ).toBeUndefined();
    expect(
      contradicts(
        "Run the SAST scan on every pull request",
        "Run the DAST scan on every pull request",
        true,
      ),
    ).toBeUndefined();
    const main = decisions(["Run CI on every push", "Cache the HTTP responses for 5 minutes"]);
    const added = decisions(
      ["Do not run CD on every push", "Cache the DNS responses for 5 minutes"],
      ["jobs"],
      "20250102-000000Z",
    );
    expect(flagsOf([main], [added])).toEqual([]);

    // The same acronym negated, or one chosen over another, still contradicts.
    expect(contradicts("Run CI on every push", "Do not run CI on every push", true)).toBe(
      "negation",
    );
    expect(
      contradicts("Sign session tokens with JWT", "Sign session tokens with PASETO", true),
    ).toBe("value");
    expect(contradicts("Use the AWS SDK for uploads", "Use the GCP SDK for uploads", true)).toBe(
      "value",
    );
    const real = flagsOf(
      [decisions([POSTGRES, "Sign session tokens with JWT"])],
      [decisions([REDIS, "Sign session tokens with PASETO"], ["jobs"], "20250102-000000Z")],
    );
    expect(real.map((f) => f.contradicts?.text)).toEqual([
      POSTGRES,
      "Sign session tokens with JWT",
    ]);
  });
});
