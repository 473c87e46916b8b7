import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { enableLinearRegExp } from "../../src/config/regexp-engine.js";
import { createRedactor, redactValue } from "../../src/core/ingest/redact.js";
import {
  ALNUM,
  DIGITS,
  GH,
  NPM,
  PEM_HEAD,
  PEM_TAIL,
  pem,
  redactor,
  SCALE,
  UPPER,
} from "./redact-fixtures.js";

// A repository's patterns need V8's linear engine, which loading a config turns on.
enableLinearRegExp();

interface Planted {
  text: string;
  secret: string;
}
/**
 * Placeholders by design (docs/redaction.md, `rules/harmless.ts`), which fast-check's bias
 * towards the first character finds: `AAAAAAAAAA`, `000000`, `xXxXxX`, `****`, and an elision
 * (`abc...xyz`; found by a CI run: `Bearer AAAAAAAAA3AAAAAA...0`).
 */
const PLACEHOLDER = /(.)\1{9,}|([01#.])\2{5,}|[xX]{6,}|\*{4,}|\.\.\./;
const chars = (alphabet: string, minLength: number, maxLength = minLength) =>
  fc
    .string({ unit: fc.constantFrom(...alphabet), minLength, maxLength })
    .filter((s) => !PLACEHOLDER.test(s));
const plain = (arb: fc.Arbitrary<string>): fc.Arbitrary<Planted> =>
  arb.map((text) => ({ text, secret: text }));
const VALUE = `${ALNUM}!#%*+-_./~@`;

const plantedArb: fc.Arbitrary<Planted> = fc.oneof(
  plain(
    fc
      .tuple(fc.constantFrom("p", "o", "u", "s", "r"), chars(ALNUM, 36, 40))
      .map(([k, b]) => "gh" + k + "_" + b),
  ),
  plain(
    fc.tuple(chars(ALNUM, 22), chars(ALNUM, 59)).map(([a, b]) => "github" + "_pat_" + a + "_" + b),
  ),
  plain(chars(ALNUM, 36).map((b) => "np" + "m_" + b)),
  plain(
    fc.tuple(fc.constantFrom("AK", "AS"), chars(UPPER + DIGITS, 16)).map(([p, b]) => p + "IA" + b),
  ),
  fc
    .tuple(
      fc.constantFrom("aws_secret_access_key", "AWS_SECRET_ACCESS_KEY", "aws_secret_key"),
      fc.constantFrom("=", " = ", ": "),
      fc.constantFrom("", '"'),
      chars(ALNUM + "/+", 40),
    )
    .map(([k, sep, q, v]) => ({ text: k + sep + q + v + q, secret: v })),
  plain(
    fc
      .tuple(
        fc.constantFrom("b", "p", "a", "r", "s", "o"),
        chars(DIGITS, 10, 13),
        chars(ALNUM, 24, 32),
      )
      .map(([k, d, b]) => "xo" + "x" + k + "-" + d + "-" + b),
  ),
  plain(chars(ALNUM, 24, 40).map((b) => "https://hooks.sl" + "ack.com/services/T01/B02/" + b)),
  // Anthropic keys: 93 characters and `AA` (a shortened key in documentation is kept).
  plain(chars(ALNUM + "_-", 93).map((b) => "sk-" + "ant-api03-" + b + "AA")),
  plain(chars(ALNUM + "_-", 20, 90).map((b) => "sk-" + "proj-" + b)),
  plain(chars(ALNUM, 30, 46).map((b) => "sk-" + "aZ" + b)),
  plain(chars(ALNUM, 48).map((b) => "sk-" + b)),
  fc
    .tuple(
      fc.constantFrom("RSA ", "EC ", "OPENSSH ", ""),
      // A key's body: full lines of 64, then a shorter last one (64 in all at least, as gitleaks asks).
      fc
        .tuple(
          fc.array(chars(ALNUM + "+/", 64), { minLength: 1, maxLength: 3 }),
          chars(ALNUM + "+/", 16, 64),
        )
        .map(([full, last]) => [...full, last]),
    )
    .map(([kind, lines]) => ({ text: pem(kind, lines.join("\n")), secret: lines.join("\n") })),
  plain(
    fc
      .tuple(chars(ALNUM, 10, 40), chars(ALNUM, 10, 60), chars(ALNUM + "_-", 0, 43))
      .map(([h, p, s]) => "ey" + "J" + h + ".ey" + "J" + p + "." + s),
  ),
  fc
    .tuple(
      fc.constantFrom(
        "password",
        "passwd",
        "DB_PASSWORD",
        "secret",
        "client_secret",
        "token",
        "api_key",
        "apikey",
        "API-KEY",
      ),
      fc.constantFrom("=", ": ", " = ", ":=", '": '),
      fc.constantFrom("", '"', "'"),
      // A digit at the end: a plain Capitalized word is, by design, not taken for a secret.
      fc
        .tuple(chars(ALNUM, 1), chars(VALUE, 10, 29), chars(DIGITS, 1))
        .map(([a, b, d]) => a + b + d),
    )
    .map(([k, sep, q, v]) => ({ text: k + sep + q + v + q, secret: v })),
  fc
    .tuple(
      fc.constantFrom("Authorization: Bearer ", "Authorization: token ", "Bearer "),
      // A digit at the end, as for passwords: a Header-Name or UPPER_CASE word (found by CI:
      // `AAAAAAAAAAAAAAAA-AAA`) is, by design, not taken for a credential.
      chars(ALNUM + "-._~+/", 19, 39),
      chars(DIGITS, 1),
    )
    .map(([prefix, v, d]) => ({ text: prefix + v + d, secret: v + d })),
  fc
    .tuple(
      fc.constantFrom("https", "postgres", "redis", "mongodb+srv"),
      chars(ALNUM, 3, 10),
      chars(ALNUM + "!$%*-_.~", 12, 24),
    )
    .map(([scheme, user, pass]) => ({
      // A password that starts with `$` reads as a variable (`$DB_PASS`), which is kept.
      text: `${scheme}://${user}:p${pass}@host.example.com/db`,
      secret: pass,
    })),
);

/** Windows of the secret that survived, ignoring any that the surrounding text held anyway. */
function leakedWindows(output: string, secret: string, noise: string): string[] {
  const size = Math.min(12, secret.length);
  const leaked: string[] = [];
  for (let i = 0; i + size <= secret.length; i++) {
    const window = secret.slice(i, i + size);
    if (output.includes(window) && !noise.includes(window)) leaked.push(window);
  }
  return leaked;
}

const separator = fc.constantFrom(" ", "\n", "\t", "  ");

describe("properties", () => {
  it("removes a planted secret wherever it is inserted", () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 80 }),
        fc.string({ maxLength: 80 }),
        separator,
        separator,
        plantedArb,
        (before, after, left, right, planted) => {
          const input = before + left + planted.text + right + after;
          const result = redactor.redact(input);
          expect(result.text).not.toContain(planted.secret);
          expect(leakedWindows(result.text, planted.secret, before + after)).toEqual([]);
          expect(result.count).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 400 * SCALE },
    );
  });

  const fragments = [
    "password",
    "token",
    "=",
    ": ",
    '"',
    "'",
    '\\"',
    "Bearer ",
    "Authorization: ",
    "https://",
    "://",
    "user:",
    "@",
    PEM_HEAD,
    PEM_TAIL,
    "\n",
    " ",
    "[REDACTED:jwt]",
    "ey" + "J",
    ".",
    "sk-",
    "AK" + "IA",
    "xo" + "xb-",
    "ACME-12345678",
    "[",
    "]",
    "[REDACTED:",
    "\\",
    "Basic ",
    "aws_secret_access_key",
    "hooks.sl" + "ack.com/services/",
    "github" + "_pat_",
  ];
  const messyText = fc
    .array(
      fc.oneof(
        fc.constantFrom(...fragments),
        fc.string({ maxLength: 8 }),
        plantedArb.map((p) => p.text),
      ),
      { maxLength: 12 },
    )
    .map((parts) => parts.join(""));

  it("is idempotent", () => {
    const withCustom = createRedactor(["ACME-[0-9]{8}"]);
    fc.assert(
      fc.property(messyText, (text) => {
        for (const r of [redactor, withCustom]) {
          const once = r.redact(text);
          const twice = r.redact(once.text);
          expect(twice.text).toBe(once.text);
          expect(twice.count).toBe(0);
        }
      }),
      { numRuns: 400 * SCALE },
    );
  });

  it("is idempotent where a redacted copy gives a glued neighbour its boundary (a counterexample fast-check found)", () => {
    // The header's value is `Authorization: `: its copy, the first header's name, is redacted
    // too, and only then does the key glued before it end at a word boundary.
    const text = `${"AKIA"}AAAAAAAADB88C6P9Authorization: Authorization: `;
    const once = redactor.redact(text);
    expect(once.text).toBe(
      "[REDACTED:aws-access-token][REDACTED:auth-header] [REDACTED:auth-header] ",
    );
    expect(redactor.redact(once.text)).toEqual({ text: once.text, count: 0 });
  });

  it("redactValue keeps the shape and removes planted secrets", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), plantedArb, (json, planted) => {
        const input = { data: json, nested: { list: [json, `log ${planted.text} end`] } };
        const result = redactValue(input, redactor);
        expect(JSON.stringify(result.value)).not.toContain(
          JSON.stringify(planted.secret).slice(1, -1),
        );
        expect(result.count).toBeGreaterThanOrEqual(1);
        expect(shape(result.value)).toEqual(shape(input));
      }),
      { numRuns: 150 * SCALE },
    );
  });
});

/** Keys and array lengths, with every leaf collapsed to its type. */
function shape(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(shape);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, shape(v)]));
  }
  return typeof value;
}

describe("redactValue", () => {
  it("redacts strings at any depth, keeps keys and other values, and does not mutate", () => {
    const input = {
      kind: "memory_event.v1",
      count: 3,
      ok: true,
      none: null,
      payload: {
        notes: [`pushed with ${GH("p")}`, "all good", 42],
        env: { password: "hunter2", GITHUB_TOKEN: "", api_key: 12345 },
        headers: { Authorization: "Bearer abcdef123456" },
      },
    };
    const copy = structuredClone(input);
    const { value, count } = redactValue(input, redactor);
    expect(input).toEqual(copy);
    expect(value).toEqual({
      kind: "memory_event.v1",
      count: 3,
      ok: true,
      none: null,
      payload: {
        notes: ["pushed with [REDACTED:github-pat]", "all good", 42],
        env: { password: "[REDACTED:password-assignment]", GITHUB_TOKEN: "", api_key: 12345 },
        headers: { Authorization: "[REDACTED:generic-api-key]" },
      },
    });
    expect(count).toBe(3);
  });

  it("redacts whole values under secret keys, arrays included, naming known tokens", () => {
    const { value, count } = redactValue(
      { GITHUB_TOKEN: GH("p"), secret: ["a1b2", "c3d4"], tokens: 5, secretary: "Ann" },
      redactor,
    );
    expect(value).toEqual({
      GITHUB_TOKEN: "[REDACTED:github-pat]",
      secret: ["[REDACTED:password-assignment]", "[REDACTED:password-assignment]"],
      tokens: 5,
      secretary: "Ann",
    });
    expect(count).toBe(3);
  });

  it("keeps a __proto__ key as a plain key", () => {
    const input = JSON.parse('{"__proto__": {"token": "abc123def"}}') as unknown;
    const { value } = redactValue(input, redactor);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value as object)).toEqual(["__proto__"]);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"token":"[REDACTED:generic-api-key]"}}');
  });

  it("is idempotent on objects", () => {
    const once = redactValue({ a: [`x ${NPM}`, { secret: "s" }] }, redactor);
    const twice = redactValue(once.value, redactor);
    expect(twice).toEqual({ value: once.value, count: 0 });
  });
});

describe("speed", () => {
  it("stays linear on pathological input", () => {
    const inputs = [
      ("ey" + "J").repeat(30_000),
      ("ey" + "Jabcdefgh.").repeat(10_000),
      "Bearer ".repeat(20_000),
      `password="${"a".repeat(100_000)}`,
      "://a:".repeat(20_000),
      PEM_HEAD.repeat(3_000),
      "sk-".repeat(30_000),
      "Authorization: ".repeat(10_000),
      "token_".repeat(20_000),
    ];
    const start = performance.now();
    for (const text of inputs) redactor.redact(text);
    // Quadratic behaviour would take seconds here; linear takes a few tens of milliseconds.
    expect(performance.now() - start).toBeLessThan(1_500);
  });
});

describe("file names are not assignments", () => {
  it("keeps paths with a key word and a line number", () => {
    for (const text of [
      "at run (src/auth/token.ts:42:7)",
      "secret.yaml: 3 entries",
      "see password.md: notes",
    ]) {
      expect(createRedactor().redact(text)).toEqual({ text, count: 0 });
    }
  });
});
