import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { enableLinearRegExp } from "../../src/config/regexp-engine.js";
import { createRedactor, RedactionPatternError } from "../../src/core/ingest/redact.js";
import {
  ANTHROPIC,
  AWS_ID,
  AWS_SECRET,
  AWS_STS_ID,
  DIGITS,
  GH,
  GH_PAT,
  JWT,
  LOWER,
  NPM,
  OPENAI_DIGITS,
  OPENAI_LEGACY,
  OPENAI_PROJ,
  PEM_BODY,
  PEM_HEAD,
  pem,
  redactor,
  SCALE,
  SLACK_BOT,
  SLACK_HOOK,
  SLACK_USER,
} from "./redact-fixtures.js";

// A repository's patterns need V8's linear engine, which loading a config turns on.
enableLinearRegExp();

describe("built-in rules", () => {
  const cases: { rule: string; text: string; secret: string; kept?: string }[] = [
    { rule: "github-pat", text: `export GITHUB_TOKEN=${GH("p")}`, secret: GH("p") },
    { rule: "github-oauth", text: `oauth ${GH("o", 2)} done`, secret: GH("o", 2) },
    { rule: "github-app-token", text: `app ${GH("u", 3)} / ${GH("s", 4)}`, secret: GH("s", 4) },
    { rule: "github-refresh-token", text: `refresh=${GH("r", 5)}`, secret: GH("r", 5) },
    { rule: "github-fine-grained-pat", text: `pat ${GH_PAT}`, secret: GH_PAT },
    { rule: "npm-access-token", text: `//registry.npmjs.org/:_authToken ${NPM}`, secret: NPM },
    { rule: "aws-access-token", text: `key id ${AWS_ID} in us-east-1`, secret: AWS_ID },
    { rule: "aws-access-token", text: `sts ${AWS_STS_ID}`, secret: AWS_STS_ID },
    {
      rule: "generic-api-key",
      text: `aws_secret_access_key = ${AWS_SECRET}`,
      secret: AWS_SECRET,
      kept: "aws_secret_access_key = ",
    },
    {
      rule: "generic-api-key",
      text: `{"AWS_SECRET_ACCESS_KEY": "${AWS_SECRET}"}`,
      secret: AWS_SECRET,
      kept: '"AWS_SECRET_ACCESS_KEY": "',
    },
    { rule: "slack-bot-token", text: `bot ${SLACK_BOT} ok`, secret: SLACK_BOT },
    { rule: "slack-user-token", text: `user ${SLACK_USER}`, secret: SLACK_USER },
    { rule: "slack-webhook-url", text: `POST ${SLACK_HOOK} failed`, secret: SLACK_HOOK },
    { rule: "openai-api-key", text: `OPENAI ${OPENAI_PROJ}`, secret: OPENAI_PROJ },
    { rule: "openai-api-key", text: `legacy ${OPENAI_LEGACY}`, secret: OPENAI_LEGACY },
    { rule: "openai-api-key", text: `digits ${OPENAI_DIGITS}`, secret: OPENAI_DIGITS },
    { rule: "anthropic-api-key", text: `using ${ANTHROPIC} now`, secret: ANTHROPIC },
    { rule: "private-key", text: `key:\n${pem("RSA ")}\nend`, secret: PEM_BODY },
    { rule: "private-key", text: pem("OPENSSH "), secret: PEM_BODY },
    { rule: "private-key", text: pem(""), secret: PEM_BODY },
    { rule: "private-key", text: pem("EC "), secret: PEM_BODY },
    { rule: "jwt", text: `cookie session=; jwt ${JWT}`, secret: JWT },
    {
      rule: "password-assignment",
      text: "password=hunter2 next",
      secret: "hunter2",
      kept: "password=",
    },
    {
      rule: "password-assignment",
      text: "db passwd: s3cr3t!",
      secret: "s3cr3t!",
      kept: "passwd: ",
    },
    { rule: "password-assignment", text: "secret=abc123xyz", secret: "abc123xyz", kept: "secret=" },
    {
      rule: "generic-api-key",
      text: "?token=tok_98765&page=2",
      secret: "tok_98765",
      kept: "token=",
    },
    { rule: "generic-api-key", text: "api_key=Zx81kk2q9", secret: "Zx81kk2q9", kept: "api_key=" },
    { rule: "generic-api-key", text: "apikey: 0a9b8c7d", secret: "0a9b8c7d", kept: "apikey: " },
    { rule: "password-assignment", text: "DB_PASSWORD='hunter two'", secret: "hunter two" },
    {
      rule: "password-assignment",
      text: '{"password": "p@ss w0rd", "user": "bob"}',
      secret: "p@ss w0rd",
    },
    {
      rule: "generic-api-key",
      text: '{\\"token\\":\\"abc123def\\",\\"u\\":1}',
      secret: "abc123def",
    },
    {
      rule: "auth-header",
      text: "Authorization: Bearer abc.DEF-123_xyz",
      secret: "abc.DEF-123_xyz",
      kept: "Authorization: Bearer ",
    },
    {
      rule: "auth-header",
      text: "authorization: Basic dXNlcjpwYXNzd29yZA==",
      secret: "dXNlcjpwYXNz",
    },
    { rule: "auth-header", text: "curl -H 'Bearer 9f8e7d6c5b4a'", secret: "9f8e7d6c5b4a" },
    {
      rule: "url-credentials",
      text: "git clone https://bob:" + "s3cretpass@git.example.com/r.git",
      secret: "s3cretpass",
      kept: "https://",
    },
    {
      rule: "url-credentials",
      text: "DATABASE_URL=postgres://app:" + "pa55word@db:5432/app",
      secret: "pa55word",
    },
  ];

  it.each(cases)("$rule: $text", ({ rule, text, secret, kept }) => {
    const result = redactor.redact(text);
    expect(result.text).not.toContain(secret);
    expect(result.text).toContain(`[REDACTED:${rule}]`);
    expect(result.count).toBeGreaterThanOrEqual(1);
    if (kept !== undefined) expect(result.text).toContain(kept + `[REDACTED:${rule}]`);
  });

  it("lists the rule ids, gitleaks' formats first, the context rules after", () => {
    expect(redactor.ruleNames).toContain("github-pat");
    expect(redactor.ruleNames).toContain("private-key");
    expect(redactor.ruleNames.indexOf("github-pat")).toBeLessThan(
      redactor.ruleNames.indexOf("generic-api-key"),
    );
    expect(new Set(redactor.ruleNames).size).toBe(redactor.ruleNames.length);
    for (const c of cases) expect(redactor.ruleNames).toContain(c.rule);
  });

  it("redacts a private key written with escaped newlines inside JSON", () => {
    const json = JSON.stringify({ key: pem("RSA ") });
    const { text, count } = redactor.redact(json);
    expect(text).toBe('{"key":"[REDACTED:private-key]"}');
    expect(count).toBe(1);
  });

  it("redacts a private key without its END line up to the end of the text", () => {
    const { text } = redactor.redact(`log: ${PEM_HEAD}\n${PEM_BODY}`);
    expect(text).toBe("log: [REDACTED:private-key]");
  });

  it("leaves a PEM block assigned to a key to the private-key rule", () => {
    const { text } = redactor.redact(`private_key: ${pem("RSA ")} tail`);
    expect(text).toBe("private_key: [REDACTED:private-key] tail");
  });

  it("keeps the key name and quotes of assignments", () => {
    expect(redactor.redact('{"password":"x y","token":"t0k3n-abc123"}').text).toBe(
      '{"password":"[REDACTED:password-assignment]","token":"[REDACTED:generic-api-key]"}',
    );
    expect(redactor.redact("PASSWORD=abc, user=bob").text).toBe(
      "PASSWORD=[REDACTED:password-assignment], user=bob",
    );
  });

  it("labels a known token by its own rule, also inside an assignment or a URL", () => {
    expect(redactor.redact(`GITHUB_TOKEN=${GH("p")} x`).text).toBe(
      "GITHUB_TOKEN=[REDACTED:github-pat] x",
    );
    // The whole user information goes, named after the token in it.
    expect(redactor.redact(`https://${GH("p")}:x-oauth-basic@github.com/o/r`).text).toBe(
      "https://[REDACTED:github-pat]@github.com/o/r",
    );
    expect(redactor.redact(`a password=xyz b ${NPM} c`).text).toBe(
      "a password=[REDACTED:password-assignment] b [REDACTED:npm-access-token] c",
    );
  });

  it("counts each secret once", () => {
    const text = `${GH("p")} and ${NPM} and password=abc and ${JWT}`;
    expect(redactor.redact(text).count).toBe(4);
  });

  it("returns the same string when there is nothing to redact", () => {
    const text = "nothing to see here";
    const result = redactor.redact(text);
    expect(result).toEqual({ text, count: 0 });
  });
});

describe("no false positives", () => {
  const clean = [
    "Refactored the buffer to use a ring of 4096 slots; all 128 tests pass.",
    "The password policy requires rotation every 90 days, and secrets live in the vault.",
    "We rotate tokens weekly; bearer authentication is handled by the gateway.",
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixes the tokenizer",
    "run 123e4567-e89b-12d3-a456-426614174000 finished",
    "/home/dev/project/src/core/redact.ts and C:\\Users\\dev\\token-store\\index.ts",
    "hash sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "engram e_0123456789abcdef0123456789abcdef promoted to lt",
    "created_at 2026-01-02T03:04:05.000Z, batch 20260102-030405Z",
    "see https://github.com/org/repo/pull/512 and ssh://git@github.com/org/repo.git",
    "clone git@github.com:org/repo.git, mail dev@example.com",
    'usage {"max_tokens": 4096, "prompt_tokens": 812, "secretary": "Ann"}',
    "task-0123456789abcdef0123456789abcdef is queued; sk-learn is a library",
    "the AKIA prefix marks an AWS key id; xoxb marks a Slack bot token",
    "npm_config_cache=/tmp/npm-cache",
    "if (token == null || token.length === 0) return;",
    "[REDACTED:github-pat] stays as it is",
  ];
  it.each(clean)("%s", (text) => {
    expect(redactor.redact(text)).toEqual({ text, count: 0 });
  });

  it("leaves text without trigger characters unchanged", () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom(...`${LOWER}${DIGITS} ./`) }), (text) => {
        expect(redactor.redact(text)).toEqual({ text, count: 0 });
      }),
      { numRuns: 200 * SCALE },
    );
  });
});

describe("user patterns", () => {
  it("redacts every match as custom-<index>", () => {
    const r = createRedactor(["ACME-[0-9]{8}", "internal\\.example\\.com"]);
    expect(r.ruleNames.slice(-2)).toEqual(["custom-0", "custom-1"]);
    const text = "ids ACME-12345678, ACME-87654321 on internal.example.com";
    const first = r.redact(text);
    expect(first.text).toBe("ids [REDACTED:custom-0], [REDACTED:custom-0] on [REDACTED:custom-1]");
    expect(first.count).toBe(3);
    // The shared global regex must not carry state from one call to the next.
    expect(r.redact(text)).toEqual(first);
  });

  it("does not eat into tokens already in the text", () => {
    const r = createRedactor(["[A-Z]{8}"]);
    const { text } = r.redact(`${GH("p")} ABCDEFGH`);
    expect(text).toBe("[REDACTED:github-pat] [REDACTED:custom-0]");
    expect(r.redact(text)).toEqual({ text, count: 0 });
  });

  it("names the index and source of a pattern that does not compile", () => {
    let caught: unknown;
    try {
      createRedactor(["ok-[0-9]+", "(unclosed"]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(RedactionPatternError);
    expect(caught).toBeInstanceOf(Error);
    const error = caught as RedactionPatternError;
    expect(error.index).toBe(1);
    expect(error.pattern).toBe("(unclosed");
    expect(error.message).toContain("redaction.patterns[1]");
    expect(error.message).toContain("(unclosed");
  });

  it.each(["a*", "(?:)", "x?", "\\b", "(?=a)"])(
    "rejects %s, which matches the empty string",
    (p) => {
      expect(() => createRedactor([p])).toThrow(/empty string/);
    },
  );

  it.each(["a(?=b)", "(?<=x)y", "(a)\\1", "(?<n>a)\\k<n>"])(
    "rejects %s, which only a backtracking engine runs",
    (p) => {
      expect(() => createRedactor([p])).toThrow(/cannot run in linear time/);
    },
  );

  it.each(["(a+)+", "(\\w*x)+", "((ab)+c)+", "(?:[a-z]+-){2,}"])(
    "runs nested unbounded repetition %s in linear time",
    (p) => {
      expect(() => createRedactor([p])).not.toThrow();
    },
  );

  it.each(["(\\d+\\.){3}\\d+", "(ab)+", "x{2,}", "[(+)]+", "\\(a+\\)+"])("accepts %s", (p) => {
    expect(() => createRedactor([p])).not.toThrow();
  });
});

// Property tests: a secret generator yields the text to insert and the part that must vanish.
