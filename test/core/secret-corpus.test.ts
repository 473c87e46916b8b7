import { describe, expect, it } from "vitest";
import { builtInRuleIds, createRedactor, redactValue } from "../../src/core/ingest/redact.js";
import { FAKE_KINDS, fakeSecrets, LOOK_ALIKES } from "../support/fake-secrets.js";

const redactor = createRedactor();

describe("the fake credential corpus", () => {
  it("has at least 55 kinds", () => {
    expect(Object.keys(FAKE_KINDS).length).toBeGreaterThanOrEqual(55);
  });

  for (const seed of [1, 2, 3]) {
    it(`removes every planted value, seed ${seed}`, () => {
      for (const fake of fakeSecrets(seed)) {
        const out = redactor.redact(fake.text);
        expect(out.text, fake.kind).not.toContain(fake.secret);
        expect(out.count, fake.kind).toBeGreaterThan(0);
        // Idempotent: the marker is never a secret again.
        expect(redactor.redact(out.text)).toEqual({ text: out.text, count: 0 });
      }
    });
  }

  it("names each provider token after its rule", () => {
    for (const fake of fakeSecrets(7)) {
      if (!builtInRuleIds().includes(fake.kind)) continue;
      expect(redactor.redact(fake.text).text, fake.kind).toContain(`[REDACTED:${fake.kind}]`);
    }
  });

  it("finds every kind inside JSON strings, prose and structured values", () => {
    for (const fake of fakeSecrets(11)) {
      const prose = `Lesson: the deploy failed until we set ${fake.text}; keep it out of logs.`;
      expect(redactor.redact(prose).text, fake.kind).not.toContain(fake.secret);
      const value = redactValue({ note: fake.text, list: [fake.text] }, redactor);
      expect(JSON.stringify(value.value), fake.kind).not.toContain(fake.secret);
    }
  });
});

describe("harmless look-alikes", () => {
  it("has at least 40 probes", () => {
    expect(LOOK_ALIKES.length).toBeGreaterThanOrEqual(40);
  });

  for (const probe of LOOK_ALIKES) {
    it(`keeps ${JSON.stringify(probe)}`, () => {
      expect(redactor.redact(probe)).toEqual({ text: probe, count: 0 });
    });
  }

  it("keeps look-alikes as JSON values under their own keys", () => {
    const value = { password: "required", token: null, token_ttl: 3600, api_key: "<your-api-key>" };
    expect(redactValue(value, redactor)).toEqual({ value, count: 0 });
  });
});

describe("precision of the context rules", () => {
  it("redacts a pass phrase whole, not its first word", () => {
    const out = redactor.redact("passphrase=correct horse battery staple");
    expect(out.text).toBe("passphrase=[REDACTED:passphrase]");
  });

  it("keeps prose after a private-key header and redacts a real block whole", () => {
    const head = "-----BEGIN RSA PRIV" + "ATE KEY-----";
    const prose = `the file starts with ${head}, then the base64 body; keep this sentence`;
    expect(redactor.redact(prose).text).toBe(prose);
    const body = "MIIEow" + "A".repeat(58) + "\n" + "b".repeat(64);
    const block = `${head}\n${body}\n-----END RSA PRIV` + "ATE KEY-----";
    expect(redactor.redact(`key:\n${block}\nafter`).text).toBe(
      "key:\n[REDACTED:private-key]\nafter",
    );
  });

  it("drops the whole user information of a URL, so the marker has no user:password shape", () => {
    const out = redactor.redact("postgres://u:Pw3xZ9kq@h/db");
    expect(out.text).toBe("postgres://[REDACTED:url-credentials]@h/db");
  });
});
