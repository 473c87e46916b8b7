/**
 * Issue 27: the misses and over-redactions found by running gitleaks' and secretlint's cases,
 * one test each, and the property that a redaction never takes a character outside the
 * secret's match.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { expand, GITLEAKS } from "../support/peer-cases.js";
import { Rng } from "../support/random.js";
import { ALNUM, DIGITS, fake, LOWER, redactor, SCALE } from "./redact-fixtures.js";

const HEX = "0123456789abcdef";
const MARKER = /^\[REDACTED:[a-z0-9-]+\]$/;

/** The text with the secret replaced by a marker, the rest unchanged. */
function expectRedacted(text: string, secret: string): void {
  const out = redactor.redact(text).text;
  const at = text.indexOf(secret);
  expect(out.startsWith(text.slice(0, at)), out).toBe(true);
  expect(out.endsWith(text.slice(at + secret.length)), out).toBe(true);
  expect(out.slice(at, out.length - (text.length - at - secret.length))).toMatch(MARKER);
}

function expectKept(text: string): void {
  expect(redactor.redact(text).text).toBe(text);
}

describe("provider formats the ported rules missed", () => {
  it.each([
    ["tailscale", "tskey-" + "api-" + fake(ALNUM, 12, 1) + "-" + fake(ALNUM, 24, 2)],
    ["vercel", "vc" + "p_" + fake(ALNUM, 40, 5)],
    // Every prefix the pattern takes has a keyword: `vcc_` had none, so it was never looked for.
    ["vercel, every prefix", "vc" + "c_" + fake(ALNUM, 40, 5)],
    ["cloudflare", "cf" + "ut_" + fake(ALNUM, 40, 6) + fake(HEX, 8, 7)],
    ["shopify mixed case", "shp" + "at_" + fake(ALNUM, 32, 8)],
    ["databricks upper hex", "da" + "pi" + fake("0123456789ABCDEF", 32, 9)],
    ["dynatrace mixed case", "dt0c01." + fake(ALNUM, 24, 10) + "." + fake(ALNUM, 64, 11)],
    ["new relic mixed case", "NR" + "AK-" + fake(ALNUM, 27, 12)],
    [
      "github installation token with a JWT",
      "gh" +
        "s_12345_ey" +
        "JhbGciOiJSUzI1NiJ9.ey" +
        "J" +
        fake(ALNUM, 30, 13) +
        "." +
        fake(ALNUM, 43, 14),
    ],
    [
      "microsoft teams webhook",
      "https://acme.webhook.office.com/webhookb2/" +
        [
          fake(HEX, 8, 15),
          fake(HEX, 4, 16),
          fake(HEX, 4, 17),
          fake(HEX, 4, 18),
          fake(HEX, 12, 19),
        ].join("-") +
        "@" +
        [
          fake(HEX, 8, 20),
          fake(HEX, 4, 21),
          fake(HEX, 4, 22),
          fake(HEX, 4, 23),
          fake(HEX, 12, 24),
        ].join("-") +
        "/IncomingWebhook/" +
        fake(HEX, 32, 25) +
        "/" +
        [
          fake(HEX, 8, 26),
          fake(HEX, 4, 27),
          fake(HEX, 4, 28),
          fake(HEX, 4, 29),
          fake(HEX, 12, 30),
        ].join("-"),
    ],
  ])("%s", (_name, secret) => {
    expectRedacted(`deploy with ${secret} then`, secret);
  });
});

describe("gitleaks' wider forms of six ported rules", () => {
  const B64 = ALNUM + "+/";
  it.each([
    [
      "a JWT with an empty signature",
      "ey" + "J" + fake(ALNUM, 20, 70) + ".ey" + "J" + fake(ALNUM, 20, 71) + ".",
    ],
    ["a Fly.io macaroon (fm1a_)", "fm1" + "a_" + fake(B64, 120, 72)],
    ["a Fly.io macaroon (fm2_)", "fm" + "2_" + fake(B64, 120, 73)],
    ["a SendGrid key of 69 characters", "SG." + fake(ALNUM, 22, 74) + "." + fake(ALNUM, 43, 75)],
  ])("%s", (_name, secret) => {
    expectRedacted(`value ${secret} here`, secret);
  });

  it("a Telegram token with :A and an Atlassian token behind its name", () => {
    const telegram = `${fake(DIGITS, 9, 76)}:A${fake(LOWER + DIGITS, 34, 77)}`;
    expectRedacted(`telegram_bot = ${telegram}`, telegram);
    const jira = fake(LOWER + DIGITS, 20, 78) + fake(HEX, 4, 79);
    expectRedacted(`jira: ${jira}`, jira);
  });
});

describe("assignment syntaxes the context rules missed", () => {
  const secret = fake(LOWER + DIGITS, 20, 40) + "Zq9";
  it.each([
    ["XML element", `<apiToken>${secret}</apiToken>`],
    ["XML element, multi-line", `<apiToken>\n    ${secret}\n</apiToken>`],
    ["Go typed var", `var apiToken string = "${secret}"`],
    ["Go backticks", `apiToken := \`${secret}\``],
    ["Kotlin typed val", `val apiToken: String = "${secret}"`],
    ["PHP concat", `$apiToken .= "${secret}"`],
    ["PHP null coalesce", `$apiToken ??= "${secret}"`],
    ["Java setProperty", `System.setProperty("API_TOKEN", "${secret}")`],
    ["make ::=", `API_TOKEN ::= "${secret}"`],
    ["make :::=", `API_TOKEN :::= "${secret}"`],
    ["make ?=", `API_TOKEN ?= "${secret}"`],
    ["make +=", `DB_PASSWORD += ${secret}`],
  ])("%s", (_name, text) => {
    expectRedacted(text, secret);
  });

  it("a comma after any quote is not an assignment", () => {
    expectKept('{"token_uri":"https://oauth2.example.com/token","auth_x509_url":"https://x"}');
  });
});

describe("wrapped and escaped credentials", () => {
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  const jwt =
    "ey" +
    "JhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.ey" +
    "J" +
    fake(ALNUM, 40, 50) +
    "." +
    fake(ALNUM, 43, 51);

  it.each([
    ["a JWT", jwt],
    ["an env file", `token=${fake(ALNUM, 30, 52)}\n`],
    ["a Grafana token", "gl" + "sa_" + fake(ALNUM, 32, 53) + "_" + fake(HEX, 8, 54)],
    ["a DigitalOcean token", "dop" + "_v1_" + fake(HEX, 64, 55)],
  ])("base64 of %s", (_name, plain) => {
    const wrapped = b64(plain);
    expectRedacted(`data:\n  auth: ${wrapped}\n`, wrapped);
  });

  it("a service account JSON loses its private key, raw, escaped twice or parsed", () => {
    const head = "-----BEGIN PRIV" + "ATE KEY-----";
    const tail = "-----END PRIV" + "ATE KEY-----";
    const body = [0, 1, 2].map((i) => fake(ALNUM + "+/", 64, 60 + i)).join("\\n");
    const json = `{"type": "service_account", "private_key": "${head}\\n${body}\\n${tail}\\n", "client_email": "x@p.iam.gserviceaccount.com"}`;
    for (const text of [json, JSON.stringify(json)]) {
      const out = redactor.redact(text).text;
      expect(out).not.toContain(body.slice(0, 40));
      expect(out).toContain("service_account");
      expect(out).toContain("x@p.iam.gserviceaccount.com");
    }
  });
});

describe("curl credentials", () => {
  it("redacts a real user:password", () => {
    const password = fake(ALNUM, 14, 41);
    expectRedacted(`curl -u admin:${password} https://api.example.com`, `admin:${password}`);
    expectRedacted(`curl --user "deploy:${password}" https://x`, `deploy:${password}`);
  });

  it.each([
    "curl -i -u 'test:test'",
    "curl -u <user:password> https://test.com/endpoint",
    "curl --user neo4j:[PASSWORD] http://[IP]:7474/db/data/",
    "curl -u username:token",
    'curl --user "xxx:yyy"',
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a GitHub Actions expression
    'curl -XGET -i -u "${{ env.ELK_ID }}:${{ env.ELK_PASS }}"',
    'curl -X POST --user "$(cat ./login.txt):$(cat ./password.txt)"',
  ])("keeps the example %s", (text) => {
    expectKept(text);
  });
});

describe("over-redaction", () => {
  it("a provider prefix inside a word is not a token", () => {
    expectKept(`id task_test_${fake(LOWER + DIGITS, 30, 31)} done`);
    expectKept(`see https://indieweb.org/images/3/35/2018-250-xo` + `xo-indieweb-1.jpg`);
    const tailscale = "tskey-" + "auth-" + fake(ALNUM, 12, 3) + "-" + fake(ALNUM, 24, 4);
    // A digit or `_` is a boundary, as secretlint has it.
    expectRedacted(`MY_${tailscale}`, tailscale);
  });

  it("keeps the documented example key, also behind a key word", () => {
    expectKept("AKIAIOSFODNN7EXAMPLE");
    expectKept("aws_access_key: AKIAIOSFODNN7EXAMPLE");
    expectKept("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY");
  });

  it("keeps placeholders, bare and behind a key word", () => {
    expectKept("gh" + "p_" + "x".repeat(36));
    expectKept("GITHUB_TOKEN=gh" + "p_" + "x".repeat(36));
    expectKept('api_key = "fo1_' + "x".repeat(43) + '"');
    expectKept("--token=sha256~XXXXXXXXXX_PUT_YOUR_TOKEN_HERE_XXXXXXXXXXXX");
  });

  it("keeps a PEM block whose body is a placeholder", () => {
    const head = "-----BEGIN PRIV" + "ATE KEY-----";
    const tail = "-----END PRIV" + "ATE KEY-----";
    expectKept(`${head}\nYWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXo=\n${tail}`);
  });

  it("keeps a shortened key of documentation, a command in backticks, a constructor call", () => {
    expectKept("sk-" + "ant-api03-abc123xyz-456de-klMnopqrstuvwx-3456yza789bcde-1234fghijklmnopAA");
    expectKept("-e SUMO_ACCESS_KEY=`etcdctl get /sumologic_secret`");
    expectKept("credentials: new AWS.SharedIniFileCredentials({ profile: 'dev' })");
    expectKept('apiKey: "AIza' + "a".repeat(35) + '"');
  });

  it("still redacts a real token of the same shapes", () => {
    const token = "gh" + "p_" + fake(ALNUM, 36, 33);
    expectRedacted(`GITHUB_TOKEN=${token}`, token);
    const stripe = "sk" + "_live_" + fake(ALNUM, 24, 34);
    expectRedacted(`key ${stripe} ok`, stripe);
    const anthropic = "sk-" + "ant-api03-" + fake(ALNUM + "_-", 93, 35) + "AA";
    expectRedacted(`key ${anthropic} ok`, anthropic);
  });
});

describe("where gitleaks and secretlint part ways", () => {
  it("redacts the placeholders secretlint reports, a webhook URL with its scheme", () => {
    const hf = "hf" + "_" + "x".repeat(34);
    expectRedacted(`hf_token = '${hf}'`, hf);
    const webhook = "https://hooks.sl" + "ack.com/services/TXXXXX/BXXXXX/XXXXXXXXXX";
    expectRedacted(`post to ${webhook} now`, webhook);
    // A word around it is still no token.
    expectKept(`(id)hf_${"required".repeat(5)}Metadata;`);
  });

  it("keeps the URL examples secretlint keeps", () => {
    expectKept('"mysql://dbuser:secret@mysql.server.com:3306/database"');
    expectKept("jdbc:mysql://admin:pass@localhost:3306/mydb");
    expectKept("mongodb+srv://root:root@cluster.mongodb.net/db");
    expectKept("https://user:abc@api.com/v1 and https://testuser:xxxx@demo.com");
    expectKept("https://$" + "{username}:$" + "{password}@api.example.com/v1");
    expectKept("https://{{user}}:{{pass}}@config.example.com https://{USER}:{PASS}@t.example.com");
    expectKept("https://YOUR_USERNAME:YOUR_PASSWORD@api.service.com");
    expectKept("https://bob:bob@git.example.com");
  });

  it("still redacts URL credentials that are not examples", () => {
    // secretlint's basicauth reports `user:pass` of a web URL; only database URLs use it as an example.
    expectRedacted("This URL: https://user:pass@example.com includes credential.", "user:pass");
    const password = fake(ALNUM, 16, 41);
    expectRedacted(`postgres://app:${password}@db.internal/main`, `app:${password}`);
    expectRedacted(`mongodb+srv://svc:${password}@cluster.mongodb.net`, `svc:${password}`);
    // A `$` inside a password is no template.
    expectRedacted(`https://deploy:p$${password}@git.example.com`, `deploy:p$${password}`);
  });

  it("a token ends where its characters end, and low-entropy look-alikes are kept", () => {
    const azure = "Ab1" + "8Q~" + fake(ALNUM, 34, 42);
    expectRedacted(`client ${azure} ok`, azure);
    expectKept(`Identity="USK@u2vn,4~q8${azure.slice(4)}~yk0,AQACAAE"`);
    expectKept("GR1348941" + "123".repeat(7));
    expectKept("sntry" + "u_" + "a".repeat(64));
    const sentry = "sntry" + "u_" + fake(HEX, 64, 43);
    expectRedacted(`token ${sentry} ok`, sentry);
  });
});

/** gitleaks' generated secrets that the redactor takes whole when they stand alone. */
function wholeSecrets(): string[] {
  const rng = new Rng(2727);
  const out: string[] = [];
  for (const rule of GITLEAKS.rules) {
    for (const item of rule.tps) {
      if (typeof item !== "object" || Array.isArray(item) || !("samples" in item)) continue;
      const secret = expand({ samples: "", secret: item.secret }, rng)[0]?.match(/"(.*)"$/)?.[1];
      if (secret === undefined || secret.length < 8) continue;
      if (MARKER.test(redactor.redact(secret).text)) out.push(secret);
    }
  }
  return out;
}

describe("a redaction takes only the secret", () => {
  const secrets = wholeSecrets();
  const WORDS = [
    "the",
    "build",
    "failed",
    "on",
    "main",
    "see",
    "notes",
    "id",
    "42",
    "ok",
    "—",
    "é",
  ];
  const words = fc.array(fc.constantFrom(...WORDS), { maxLength: 6 }).map((w) => w.join(" "));
  const sep = fc.constantFrom(" ", "\n", "\t", ", ", "; ", " (", ") ");
  // What gitleaks accepts after a token: white space, a quote, a semicolon.
  const end = fc.constantFrom(" ", "\n", "\t", "; ", '" ');

  it("has secrets of most generated rules to plant", () => {
    expect(secrets.length).toBeGreaterThan(100);
  });

  it("keeps every character around a planted secret", () => {
    fc.assert(
      fc.property(words, sep, fc.constantFrom(...secrets), end, words, (a, s1, secret, s2, b) => {
        const before = `${a}${s1}`;
        const after = `${s2}${b}`;
        const out = redactor.redact(before + secret + after).text;
        expect(out.startsWith(before), out).toBe(true);
        expect(out.endsWith(after), out).toBe(true);
        expect(out.slice(before.length, out.length - after.length)).toMatch(MARKER);
      }),
      { numRuns: 300 * SCALE, seed: 27 },
    );
  });
});

describe("gitleaks' global allowlist, as it means it", () => {
  // gitleaks spells `^true|false|null$` without a group: any secret ending in `null`,
  // starting with `true` or holding `false` passed (a property run found `sk-...NULL`).
  it("allows a value that is true, false or null, not a secret that merely holds one", () => {
    const key = (tail: string) =>
      `sk-${"Ab3dEfGhIjKlMnOpQrStUvWxYz0123456789abcdef".slice(0, 44)}${tail}`;
    for (const secret of [key("NULL"), key("null"), key("FaLs"), `${key("")}false`]) {
      const out = redactor.redact(`OPENAI_KEY ${secret} here`).text;
      expect(out, secret).not.toContain(secret);
    }
    expect(redactor.redact("api_key = null").text).toBe("api_key = null");
    expect(redactor.redact("password: false").text).toBe("password: false");
  });
});
