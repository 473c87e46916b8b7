/**
 * Every verbatim copy of a found secret is redacted wherever it stands (issue 39): secretlint's
 * sendgrid case leaves a copy glued inside a word (`som<key>ewhere`), where no rule sees a
 * token of its own.
 */
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/core/ingest/redact.js";
import { FAKE_KINDS, Rng } from "../support/fake-secrets.js";

const redactor = createRedactor();

describe("copies of a found secret", () => {
  it("redacts a copy glued inside a word, after the token was found on its own", () => {
    const { secret } = (FAKE_KINDS["sendgrid-api-token"] as (r: Rng) => { secret: string })(
      new Rng(7),
    );
    const text = `key: ${secret}\nand som${secret}ewhere else`;
    const out = redactor.redact(text);
    expect(out.text).not.toContain(secret);
    expect(out.text).toBe(
      "key: [REDACTED:sendgrid-api-token]\nand som[REDACTED:sendgrid-api-token]ewhere else",
    );
    expect(out.count).toBe(2);
    expect(redactor.redact(out.text)).toEqual({ text: out.text, count: 0 });
  });

  it("redacts a password's copy in prose, and keeps short ones (words)", () => {
    const out = redactor.redact(
      "password=Tr0ub4dor-3x then Tr0ub4dor-3x was typed; pwd=dragon1 dragon1",
    );
    expect(out.text).toBe(
      "password=[REDACTED:password-assignment] then [REDACTED:password-assignment] was typed; pwd=[REDACTED:password-assignment] dragon1",
    );
  });

  it("keeps a glued look-alike of no found secret", () => {
    const text = "task_test_abcdefghijklmnopqrstuvwx stays";
    expect(redactor.redact(text)).toEqual({ text, count: 0 });
  });
});
