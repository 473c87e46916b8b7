/**
 * Realistic FAKE credentials, generated from a seed at run time: none is real, and this file
 * holds no literal that a scanner would flag (prefixes are assembled from pieces).
 */

import { Rng } from "./random.js";

export { Rng };

const UP = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LO = "abcdefghijklmnopqrstuvwxyz";
const DI = "0123456789";
const AN = UP + LO + DI;
const HEX = "0123456789abcdef";
const B64 = `${AN}+/`;
const URLSAFE = `${AN}_-`;

/** `a` + `b`: keeps prefixes out of this file as whole literals. */
const j = (...parts: string[]) => parts.join("");

export interface FakeSecret {
  /** The kind, usually the rule id that must catch it. */
  kind: string;
  /** How it appears in a note. */
  text: string;
  /** The part that must never be written anywhere. */
  secret: string;
}

type Maker = (r: Rng) => { text: string; secret: string };

/** A value with at least one digit, upper and lower letter (so every kind has a credential's shape). */
function mixed(r: Rng, alphabet: string, n: number): string {
  return `${r.chars(UP, 1)}${r.chars(LO, 1)}${r.chars(DI, 1)}${r.chars(alphabet, n - 3)}`;
}

const bare =
  (make: (r: Rng) => string, around = (s: string) => `use ${s} here`): Maker =>
  (r) => {
    const secret = make(r);
    return { text: around(secret), secret };
  };

export const FAKE_KINDS: Record<string, Maker> = {
  "github-pat": bare((r) => j("gh", "p_", mixed(r, AN, 36))),
  "github-oauth": bare((r) => j("gh", "o_", mixed(r, AN, 36))),
  "github-app-token": bare((r) => j("gh", "s_", mixed(r, AN, 36))),
  "github-refresh-token": bare((r) => j("gh", "r_", mixed(r, AN, 36))),
  "github-fine-grained-pat": bare((r) =>
    j("github", "_pat_", mixed(r, AN, 22), "_", r.chars(AN, 59)),
  ),
  "gitlab-pat": bare((r) => j("gl", "pat-", mixed(r, AN, 20))),
  "gitlab-deploy-token": bare((r) => j("gl", "dt-", mixed(r, AN, 20))),
  "gitlab-runner-authentication-token": bare((r) => j("gl", "rt-", mixed(r, AN, 20))),
  "npm-access-token": bare((r) => j("np", "m_", mixed(r, AN, 36))),
  "pypi-upload-token": bare((r) => j("py", "pi-AgEIcHlwaS5vcmc", r.chars(URLSAFE, 60))),
  "rubygems-api-token": bare((r) => j("ruby", "gems_", r.chars(HEX, 48))),
  "aws-access-token": bare((r) => j("AK", "IA", r.chars(`${UP}234567`, 16))),
  "aws-sts-token": bare((r) => j("AS", "IA", r.chars(`${UP}234567`, 16))),
  "aws-secret-access-key": (r) => {
    const secret = mixed(r, B64, 40);
    return { text: `aws_secret_access_key = ${secret}`, secret };
  },
  "gcp-api-key": bare((r) => j("AI", "za", mixed(r, URLSAFE, 35))),
  "azure-storage-account-key": (r) => {
    const secret = j(mixed(r, B64, 86), "==");
    return {
      text: `DefaultEndpointsProtocol=https;AccountName=acme;Account${"Key"}=${secret};EndpointSuffix=core.windows.net`,
      secret,
    };
  },
  "azure-ad-client-secret": bare((r) => j(r.chars(AN, 3), r.chars(DI, 1), "Q~", mixed(r, AN, 34))),
  "digitalocean-pat": bare((r) => j("do", "p_v1_", r.chars(HEX, 64))),
  "digitalocean-access-token": bare((r) => j("do", "o_v1_", r.chars(HEX, 64))),
  "vault-service-token": bare((r) => j("hv", "s.", mixed(r, URLSAFE, 90))),
  "vault-batch-token": bare((r) => j("hv", "b.", mixed(r, URLSAFE, 140))),
  "databricks-api-token": bare((r) => j("da", "pi", r.chars(HEX, 32))),
  "age-secret-key": bare((r) =>
    j("AGE-SECRET", "-KEY-1", r.chars("QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L", 58)),
  ),
  "anthropic-api-key": bare((r) => j("sk-", "ant-api03-", mixed(r, URLSAFE, 93), "AA")),
  "anthropic-admin-api-key": bare((r) => j("sk-", "ant-admin01-", mixed(r, URLSAFE, 93), "AA")),
  "openai-project-key": bare((r) =>
    j("sk-", "proj-", mixed(r, URLSAFE, 74), "T3Blbk", "FJ", r.chars(URLSAFE, 74)),
  ),
  "openai-legacy-key": bare((r) => j("sk-", mixed(r, AN, 20), "T3Blbk", "FJ", r.chars(AN, 20))),
  "huggingface-access-token": bare((r) =>
    j("h", "f_", mixed(r, UP + LO, 34).replace(/[0-9]/g, "q")),
  ),
  "huggingface-organization-api-token": bare((r) =>
    j("api", "_org_", mixed(r, UP + LO, 34).replace(/[0-9]/g, "q")),
  ),
  "groq-api-key": bare((r) => j("gs", "k_", mixed(r, AN, 52))),
  "perplexity-api-key": bare((r) => j("pp", "lx-", mixed(r, AN, 48))),
  "stripe-live-secret": bare((r) => j("sk", "_live_", mixed(r, AN, 24))),
  "stripe-restricted": bare((r) => j("rk", "_live_", mixed(r, AN, 24))),
  "shopify-access-token": bare((r) => j("sh", "pat_", r.chars(HEX, 32))),
  "shopify-shared-secret": bare((r) => j("sh", "pss_", r.chars(HEX, 32))),
  "square-secret": bare((r) => j("sq0", "csp-", mixed(r, URLSAFE, 43))),
  "slack-bot-token": bare((r) =>
    j("xo", "xb-", r.chars(DI, 12), "-", r.chars(DI, 12), "-", mixed(r, AN, 24)),
  ),
  "slack-user-token": bare((r) =>
    j("xo", "xp-", r.chars(DI, 12), "-", r.chars(DI, 12), "-", mixed(r, AN, 32)),
  ),
  "slack-app-token": bare((r) =>
    j("xa", "pp-1-", r.chars(UP + DI, 11), "-", r.chars(DI, 13), "-", r.chars(HEX, 64)),
  ),
  "slack-webhook-url": bare((r) =>
    j(
      "https://hooks.",
      "slack.com/services/T",
      r.chars(UP + DI, 10),
      "/B",
      r.chars(UP + DI, 10),
      "/",
      mixed(r, AN, 24),
    ),
  ),
  "discord-webhook-url": bare((r) =>
    j("https://discord.com/api/", "webhooks/", r.chars(DI, 18), "/", mixed(r, URLSAFE, 68)),
  ),
  "telegram-bot-api-token": bare((r) => j(r.chars(DI, 10), ":A", "A", mixed(r, URLSAFE, 33))),
  "sendgrid-api-token": bare((r) =>
    j("S", "G.", mixed(r, URLSAFE, 22), ".", mixed(r, URLSAFE, 43)),
  ),
  "twilio-api-key": bare((r) => j("S", "K", r.chars(HEX, 32))),
  "mailgun-private-api-token": bare((r) => j("ke", "y-", r.chars(HEX, 32))),
  "linear-api-key": bare((r) => j("lin", "_api_", mixed(r, AN, 40))),
  "atlassian-api-token": bare((r) => j("ATA", "TT3", mixed(r, URLSAFE, 186))),
  "grafana-service-account-token": bare((r) =>
    j("gl", "sa_", mixed(r, AN, 32), "_", r.chars(HEX, 8)),
  ),
  "sentry-user-token": bare((r) => j("sntr", "yu_", r.chars(HEX, 64))),
  "new-relic-user-api-key": bare((r) => j("NR", "AK-", r.chars(UP + DI, 27))),
  "postman-api-token": bare((r) => j("PM", "AK-", r.chars(HEX, 24), "-", r.chars(HEX, 34))),
  "doppler-api-token": bare((r) => j("dp", ".pt.", mixed(r, AN, 43))),
  jwt: bare((r) =>
    j("ey", "JhbGciOiJIUzI1NiJ9.", "ey", "J", mixed(r, URLSAFE, 40), ".", mixed(r, URLSAFE, 43)),
  ),
  "private-key": (r) => {
    const body = [0, 1, 2, 3].map(() => r.chars(B64, 64)).join("\n");
    const secret = body.split("\n")[1] as string;
    return {
      text: j("-----BEGIN RSA PRIV", "ATE KEY-----\n", body, "\n-----END RSA PRIV", "ATE KEY-----"),
      secret,
    };
  },
  "openssh-private-key": (r) => {
    const body = [0, 1, 2].map(() => r.chars(B64, 70)).join("\n");
    const secret = body.split("\n")[2] as string;
    return {
      text: j(
        "-----BEGIN OPENSSH PRIV",
        "ATE KEY-----\n",
        body,
        "\n-----END OPENSSH PRIV",
        "ATE KEY-----",
      ),
      secret,
    };
  },
  "url-credentials": (r) => {
    const secret = mixed(r, AN, 16);
    return { text: `DATABASE_URL=postgres://app:${secret}@db.internal:5432/main`, secret };
  },
  "https-basic-auth": (r) => {
    const secret = mixed(r, AN, 14);
    return { text: `git clone https://deploy:${secret}@git.example.com/org/repo.git`, secret };
  },
  "curl-auth-user": (r) => {
    const secret = mixed(r, AN, 14);
    return { text: `curl -u admin:${secret} https://api.example.com/v1/items`, secret };
  },
  "auth-header-bearer": (r) => {
    const secret = mixed(r, URLSAFE, 32);
    return { text: `Authorization: Bearer ${secret}`, secret };
  },
  "auth-header-basic": (r) => {
    const secret = Buffer.from(`admin:${mixed(r, AN, 12)}`).toString("base64");
    return { text: `authorization: Basic ${secret}`, secret };
  },
  "password-assignment": (r) => {
    const secret = mixed(r, AN, 14);
    return { text: `DB_PASSWORD=${secret}`, secret };
  },
  "password-json": (r) => {
    const secret = mixed(r, AN, 12);
    return { text: `{"password": "${secret}", "user": "app"}`, secret };
  },
  passphrase: (r) => {
    const words = [0, 1, 2, 3].map(() => r.chars(LO, 7));
    return { text: `passphrase=${words.join(" ")}`, secret: words.join(" ") };
  },
  "generic-api-key": (r) => {
    const secret = mixed(r, AN, 32);
    return { text: `api_key: ${secret}`, secret };
  },
  "client-secret": (r) => {
    const secret = mixed(r, AN, 40);
    return { text: `client_secret = "${secret}"`, secret };
  },
  "base64-github-pat": (r) => {
    const inner = j("gh", "p_", mixed(r, AN, 36));
    const secret = Buffer.from(`x-access-token:${inner}`).toString("base64");
    return { text: `auth: ${secret}`, secret };
  },
  "base64-aws-key": (r) => {
    const inner = j("AK", "IA", r.chars(`${UP}234567`, 16));
    const secret = Buffer.from(inner).toString("base64");
    return { text: `AWS key (base64) ${secret}`, secret };
  },
};

/** One fake of every kind, from `seed`. */
export function fakeSecrets(seed: number): FakeSecret[] {
  const r = new Rng(seed);
  return Object.entries(FAKE_KINDS).map(([kind, make]) => ({ kind, ...make(r) }));
}

/**
 * Harmless look-alikes: knowledge a note must keep, word for word. Neither secretlint nor
 * gitleaks flags them, and neither may the redactor.
 */
export const LOOK_ALIKES: readonly string[] = [
  "PASSWORD_MIN_LENGTH=12",
  "token_count: 512",
  "secret_santa: true",
  "token_ttl: 3600",
  '{"token": null}',
  "password: required",
  "api_key_header: X-API-Key",
  "access_key: (see docs)",
  j("AKIA", "IOSFODNN7", "EXAMPLE"),
  "the file starts with -----BEGIN RSA PRIVATE KEY----- and ends with the matching END line",
  "max_tokens: 4096",
  "prompt_tokens: 812",
  "tokenizer: cl100k_base",
  "secretary: Ann",
  "password_hash: bcrypt",
  "password_policy: strict",
  "token_endpoint: https://auth.example.com/oauth/token",
  "token_type: bearer",
  "secret_name: prod/db",
  "api_key_env: OPENAI_API_KEY",
  "access_key_id_length: 20",
  '{"password": ""}',
  `password: ${"$"}{DB_PASSWORD}`,
  "token: $GITHUB_TOKEN",
  "api_key: <your-api-key>",
  "secret: {{ vault_secret }}",
  "password: ********",
  "token: GITHUB_TOKEN",
  "password: is stored in the vault",
  "passwords must be rotated every 90 days",
  "We rotate tokens weekly; bearer authentication is handled by the gateway.",
  "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixes the tokenizer",
  "run 123e4567-e89b-12d3-a456-426614174000 finished",
  "hash sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
  "engram e_0123456789abcdef0123456789abcdef promoted to lt",
  "see https://github.com/org/repo/pull/512 and ssh://git@github.com/org/repo.git",
  "clone git@github.com:org/repo.git, mail dev@example.com",
  "src/auth/token.ts:42 handles refresh",
  "npm_config_cache=/tmp/npm-cache",
  "if (token == null || token.length === 0) return;",
  "task-0123456789abcdef0123456789abcdef is queued; sk-learn is a library",
  "the AKIA prefix marks an AWS key id; xoxb marks a Slack bot token",
  "https://user@example.com/path has a user and no password",
  "postgres://localhost:5432/app",
  "curl -u admin https://example.com prompts for the password",
  "keyboard shortcuts: ctrl+k",
  "secret_key_base_length: 64",
  "Authorization: see the gateway docs",
  "private_key_path: ~/.ssh/id_ed25519",
  "credentials: optional",
];
