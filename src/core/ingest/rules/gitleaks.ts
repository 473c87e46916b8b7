/**
 * Provider token formats, ported from the default rules of gitleaks 8.x
 * (`config/gitleaks.toml`, MIT licence, https://github.com/gitleaks/gitleaks), with their
 * ids and keywords. Rewritten for JavaScript regular expressions: inline `(?i)` becomes the
 * `i` flag or spelled-out classes, and the trailing `(?:[\x60'"\s;]|\\[nr]|$)` becomes a
 * look-ahead, so that the secret ends the match. Where a provider issues longer tokens than
 * the gitleaks pattern allows, the length is a range. The rules that need context (key
 * words, URLs, headers, PEM blocks) live in `context.ts`.
 *
 * To add a provider: add an entry here with its gitleaks id (or a new id of the same style),
 * its lower-case keywords, a fake token in `test/support/fake-secrets.ts`, and a row in
 * `docs/redaction.md`.
 */
import type { SecretRule } from "./types.js";

/** The end of a token: not followed by another token character. */
const END = "(?![A-Za-z0-9_-])";
/** The start of a token that has no distinctive prefix of its own. */
const START = "(?<![A-Za-z0-9_-])";

export const GITLEAKS_RULES: readonly SecretRule[] = [
  // --- source hosting -------------------------------------------------------------------
  // secretlint's recommended rules that gitleaks lacks (formats from its rule docs).
  {
    id: "tailscale-key",
    keywords: ["tskey-"],
    pattern: "tskey-[a-z]{2,16}-[A-Za-z0-9]{8,64}-[A-Za-z0-9]{16,128}",
  },
  {
    id: "vercel-token",
    keywords: ["vcp_", "vci_", "vcc_", "vca_", "vcr_", "vck_"],
    pattern: "vc[pickar]_[A-Za-z0-9_-]{24,255}",
  },
  {
    id: "cloudflare-token",
    keywords: ["cfat_", "cfut_", "cfk_"],
    pattern: "cf(?:at|ut|k)_[A-Za-z0-9]{40}[a-f0-9]{8}",
  },
  { id: "github-pat", keywords: ["ghp_"], pattern: "ghp_[0-9A-Za-z]{36,255}" },
  { id: "github-oauth", keywords: ["gho_"], pattern: "gho_[0-9A-Za-z]{36,255}" },
  {
    id: "github-app-token",
    keywords: ["ghu_", "ghs_"],
    // The newer installation token: `ghs_<id>_<JWT>`.
    pattern:
      "gh[us]_(?:[0-9A-Za-z]{36,255}|[0-9]{1,20}_eyJ[A-Za-z0-9_-]+\\.eyJ[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)",
  },
  { id: "github-refresh-token", keywords: ["ghr_"], pattern: "ghr_[0-9A-Za-z]{36,255}" },
  {
    id: "github-fine-grained-pat",
    keywords: ["github_pat_"],
    pattern: "github_pat_[0-9A-Za-z_]{22,255}",
  },
  { id: "gitlab-pat", keywords: ["glpat-"], pattern: "glpat-[0-9A-Za-z_.-]{20,255}" },
  { id: "gitlab-ptt", keywords: ["glptt-"], pattern: "glptt-[0-9a-f]{40}" },
  {
    id: "gitlab-rrt",
    keywords: ["gr1348941"],
    pattern: "GR1348941[0-9A-Za-z_-]{20,64}",
    entropy: 3,
  },
  { id: "gitlab-deploy-token", keywords: ["gldt-"], pattern: "gldt-[0-9A-Za-z_-]{20,64}" },
  {
    id: "gitlab-runner-authentication-token",
    keywords: ["glrt-"],
    pattern: "glrt-[0-9A-Za-z_.-]{20,255}",
  },
  { id: "gitlab-feed-token", keywords: ["glft-"], pattern: "glft-[0-9A-Za-z_-]{20,64}" },
  { id: "gitlab-scim-token", keywords: ["glsoat-"], pattern: "glsoat-[0-9A-Za-z_-]{20,64}" },
  { id: "gitlab-cicd-job-token", keywords: ["glcbt-"], pattern: "glcbt-[0-9A-Za-z_-]{20,255}" },
  { id: "gitlab-oauth-app-secret", keywords: ["gloas-"], pattern: "gloas-[0-9A-Za-z_-]{64}" },
  {
    id: "bitbucket-app-password",
    keywords: ["atbb"],
    pattern: `${START}ATBB[0-9A-Za-z_=.-]{28,64}${END}`,
  },
  // --- package registries ---------------------------------------------------------------
  { id: "npm-access-token", keywords: ["npm_"], pattern: "npm_[A-Za-z0-9]{36,255}" },
  {
    id: "pypi-upload-token",
    keywords: ["pypi-ageichlwas5vcmc"],
    pattern: "pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,1000}",
  },
  { id: "rubygems-api-token", keywords: ["rubygems_"], pattern: "rubygems_[a-f0-9]{48}" },
  { id: "clojars-api-token", keywords: ["clojars_"], pattern: "CLOJARS_[a-zA-Z0-9]{60}" },
  {
    id: "nuget-api-key",
    keywords: ["oy2"],
    pattern: `${START}oy2[a-z0-9]{43}${END}`,
    entropy: 3.5,
  },
  // --- cloud providers ------------------------------------------------------------------
  {
    id: "aws-access-token",
    keywords: [
      "akia",
      "asia",
      "abia",
      "acca",
      "a3t",
      "agpa",
      "aida",
      "aroa",
      "aipa",
      "anpa",
      "anva",
    ],
    pattern: `${START}(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA)[A-Z0-9]{16}${END}`,
    // gitleaks asks for 3 bits per character; 2.5 also takes keys with repeated characters.
    entropy: 2.5,
    // AWS documents AKIAIOSFODNN7EXAMPLE; gitleaks and secretlint both allow it.
    allow: ["EXAMPLE$"],
  },
  { id: "gcp-api-key", keywords: ["aiza"], pattern: "AIza[0-9A-Za-z_-]{35}", entropy: 3 },
  {
    id: "azure-ad-client-secret",
    keywords: ["q~"],
    lookback: 4,
    // `~` and `.` are token characters too: `...Q~<34>~yk0` is longer than a secret.
    pattern: `${START}[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])`,
    entropy: 3,
  },
  {
    id: "digitalocean-pat",
    keywords: ["dop_v1_"],
    pattern: "dop_v1_[a-f0-9]{64}",
  },
  {
    id: "digitalocean-access-token",
    keywords: ["doo_v1_"],
    pattern: "doo_v1_[a-f0-9]{64}",
  },
  {
    id: "digitalocean-refresh-token",
    keywords: ["dor_v1_"],
    pattern: "dor_v1_[a-f0-9]{64}",
  },
  { id: "alibaba-access-key-id", keywords: ["ltai"], pattern: `${START}LTAI[a-zA-Z0-9]{20}${END}` },
  { id: "heroku-api-key-v2", keywords: ["hrku-"], pattern: "HRKU-AA[0-9a-zA-Z_-]{58}" },
  { id: "flyio-access-token", keywords: ["fo1_"], pattern: "fo1_[A-Za-z0-9_-]{43}" },
  {
    id: "doppler-api-token",
    keywords: ["dp.pt."],
    pattern: "dp\\.pt\\.[A-Za-z0-9]{43}",
  },
  {
    id: "pulumi-api-token",
    keywords: ["pul-"],
    pattern: `${START}pul-[a-f0-9]{40}${END}`,
  },
  {
    id: "hashicorp-tf-api-token",
    keywords: ["atlasv1"],
    lookback: 15,
    pattern: "[A-Za-z0-9]{14}\\.atlasv1\\.[A-Za-z0-9_=-]{60,70}",
  },
  { id: "vault-service-token", keywords: ["hvs."], pattern: "hvs\\.[A-Za-z0-9_-]{24,255}" },
  { id: "vault-batch-token", keywords: ["hvb."], pattern: "hvb\\.[A-Za-z0-9_-]{24,300}" },
  {
    id: "databricks-api-token",
    keywords: ["dapi"],
    pattern: `${START}dapi[a-fA-F0-9]{32}(?:-[0-9])?${END}`,
  },
  {
    id: "age-secret-key",
    keywords: ["age-secret-key-1"],
    pattern: "AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
  },
  {
    id: "1password-secret-key",
    keywords: ["a3-"],
    pattern: `${START}A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}${END}`,
    entropy: 3.8,
  },
  {
    id: "1password-service-account-token",
    keywords: ["ops_"],
    pattern: "ops_eyJ[A-Za-z0-9+/]{250,}={0,3}",
  },
  // --- AI providers ---------------------------------------------------------------------
  {
    id: "anthropic-admin-api-key",
    keywords: ["sk-ant-admin01"],
    // Keys end with `AA`, as gitleaks has it (93 characters before it today; a range for
    // tomorrow's): documentation's shortened `sk-ant-api03-abc123...` is kept.
    pattern: "sk-ant-admin01-[A-Za-z0-9_-]{80,200}AA",
  },
  {
    id: "anthropic-api-key",
    keywords: ["sk-ant-"],
    pattern: "sk-ant-(?!admin01-)[a-z0-9]{2,12}-[A-Za-z0-9_-]{80,200}AA",
  },
  {
    id: "openai-api-key",
    keywords: ["sk-"],
    // Project, service-account and admin keys; legacy keys (48 base62 characters, which
    // carry `T3BlbkFJ`); shorter mixed-case `sk-` keys, which keeps ids such as
    // `task-<hex>` out.
    pattern:
      "sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,255}|[A-Za-z0-9]{48,255}|(?=[A-Za-z0-9]*[a-z])(?=[A-Za-z0-9]*[A-Z])[A-Za-z0-9]{32,255})",
  },
  {
    id: "huggingface-access-token",
    keywords: ["hf_"],
    pattern: `${START}hf_[A-Za-z]{34}${END}`,
    // secretlint's rule reports any 34 letters, `hf_xxxx...` too (gitleaks keeps it by its
    // entropy floor): a placeholder redacted loses nothing.
    redactPlaceholders: true,
  },
  {
    id: "huggingface-organization-api-token",
    keywords: ["api_org_"],
    pattern: `${START}api_org_[A-Za-z]{34}${END}`,
    entropy: 3,
  },
  {
    id: "perplexity-api-key",
    keywords: ["pplx-"],
    pattern: `${START}pplx-[A-Za-z0-9]{48}${END}`,
  },
  { id: "groq-api-key", keywords: ["gsk_"], pattern: `${START}gsk_[A-Za-z0-9]{52}${END}` },
  // --- payments and commerce ------------------------------------------------------------
  {
    id: "stripe-access-token",
    keywords: ["sk_test", "sk_live", "sk_prod", "rk_test", "rk_live", "rk_prod"],
    pattern: "[sr]k_(?:test|live|prod)_[A-Za-z0-9]{24,255}",
  },
  { id: "shopify-access-token", keywords: ["shpat_"], pattern: "shpat_[A-Za-z0-9]{32,64}" },
  { id: "shopify-custom-access-token", keywords: ["shpca_"], pattern: "shpca_[A-Za-z0-9]{32,64}" },
  {
    id: "shopify-private-app-access-token",
    keywords: ["shppa_"],
    pattern: "shppa_[A-Za-z0-9]{32,64}",
  },
  { id: "shopify-shared-secret", keywords: ["shpss_"], pattern: "shpss_[A-Za-z0-9]{32,64}" },
  {
    id: "square-access-token",
    keywords: ["sq0atp-", "eaaa"],
    pattern: `${START}(?:EAAA|sq0atp-)[A-Za-z0-9_-]{22,60}${END}`,
    entropy: 3,
  },
  { id: "square-secret", keywords: ["sq0csp-"], pattern: "sq0csp-[A-Za-z0-9_-]{43}" },
  {
    id: "flutterwave-secret-key",
    keywords: ["flwseck_test", "flwseck"],
    pattern: "FLWSECK(?:_TEST)?-[a-h0-9]{32}-X",
  },
  // --- messaging and mail ---------------------------------------------------------------
  {
    id: "slack-bot-token",
    keywords: ["xoxb"],
    // gitleaks wants 10 to 13 digits per part; older and test workspaces issue fewer.
    pattern: "xoxb-[0-9]{1,13}-[A-Za-z0-9-]{10,}",
  },
  {
    id: "slack-user-token",
    keywords: ["xoxp-", "xoxe-"],
    pattern: "xox[pe]-[0-9]{1,13}-[A-Za-z0-9-]{10,}",
  },
  {
    id: "slack-legacy-token",
    keywords: ["xoxo-", "xoxs-", "xoxa-", "xoxr-"],
    pattern: "xox[osar]-[0-9]+-[A-Za-z0-9-]{8,}",
  },
  {
    id: "slack-app-token",
    keywords: ["xapp"],
    pattern: "xapp-[0-9]-[A-Za-z0-9-]{10,}",
  },
  {
    id: "slack-config-access-token",
    keywords: ["xoxe.xox"],
    pattern: "xoxe\\.xox[bp]-[0-9]-[A-Za-z0-9]{100,200}",
  },
  {
    id: "slack-webhook-url",
    keywords: ["hooks.slack.com"],
    // secretlint reports `https://hooks.slack.com/services/TXXXXX/BXXXXX/XXXXXXXXXX` too.
    redactPlaceholders: true,
    // The scheme goes with the rest of the URL.
    lookback: 8,
    pattern:
      "(?:https?://)?hooks\\.slack\\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/+-]{20,}",
  },
  {
    id: "discord-webhook-url",
    keywords: ["discord.com/api/webhooks", "discordapp.com/api/webhooks"],
    lookback: 16,
    pattern:
      "https://(?:ptb\\.|canary\\.)?discord(?:app)?\\.com/api/webhooks/[0-9]+/[A-Za-z0-9_-]{20,}",
  },
  {
    id: "telegram-bot-api-token",
    keywords: [":aa"],
    lookback: 16,
    pattern: `${START}[0-9]{5,16}:AA[A-Za-z0-9_-]{33}${END}`,
  },
  {
    id: "sendgrid-api-token",
    keywords: ["sg."],
    pattern: `${START}SG\\.[A-Za-z0-9_-]{16,32}\\.[A-Za-z0-9_-]{16,64}`,
  },
  {
    id: "sendinblue-api-token",
    keywords: ["xkeysib-"],
    pattern: "xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}",
  },
  {
    id: "mailgun-private-api-token",
    keywords: ["key-"],
    pattern: `${START}key-[a-f0-9]{32}${END}`,
  },
  {
    id: "mailchimp-api-key",
    keywords: ["-us"],
    lookback: 32,
    pattern: `${START}[a-f0-9]{32}-us[0-9]{1,2}${END}`,
  },
  {
    id: "twilio-api-key",
    keywords: ["sk"],
    pattern: `${START}SK[0-9a-fA-F]{32}${END}`,
    entropy: 3,
  },
  {
    id: "postman-api-token",
    keywords: ["pmak-"],
    pattern: "PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
  },
  // --- developer tools ------------------------------------------------------------------
  { id: "linear-api-key", keywords: ["lin_api_"], pattern: "lin_api_[A-Za-z0-9_]{32,128}" },
  {
    id: "atlassian-api-token",
    keywords: ["atatt3"],
    pattern: "ATATT3[A-Za-z0-9_=-]{100,255}",
  },
  { id: "grafana-cloud-api-token", keywords: ["glc_"], pattern: "glc_[A-Za-z0-9+/]{32,400}={0,2}" },
  {
    id: "grafana-service-account-token",
    keywords: ["glsa_"],
    pattern: "glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}",
  },
  { id: "new-relic-user-api-key", keywords: ["nrak"], pattern: "NRAK-[A-Za-z0-9]{27}" },
  { id: "sentry-user-token", keywords: ["sntryu_"], pattern: "sntryu_[a-f0-9]{64}", entropy: 3.5 },
  {
    id: "sentry-org-token",
    keywords: ["sntrys_"],
    pattern: "sntrys_eyJpYXQiO[A-Za-z0-9+/=_-]{80,400}",
  },
  {
    id: "dynatrace-api-token",
    keywords: ["dt0c01"],
    pattern: "dt0c01\\.[A-Za-z0-9]{24}\\.[A-Za-z0-9]{64}",
  },
  { id: "prefect-api-token", keywords: ["pnu_"], pattern: "pnu_[A-Za-z0-9]{36}" },
  { id: "readme-api-token", keywords: ["rdme_"], pattern: "rdme_[a-z0-9]{70}" },
  { id: "scalingo-api-token", keywords: ["tk-us-"], pattern: "tk-us-[A-Za-z0-9_-]{48}" },
  {
    id: "planetscale-api-token",
    keywords: ["pscale_tkn_"],
    pattern: "pscale_tkn_[A-Za-z0-9_.=-]{32,64}",
  },
  {
    id: "planetscale-password",
    keywords: ["pscale_pw_"],
    pattern: "pscale_pw_[A-Za-z0-9_.=-]{32,64}",
  },
  {
    id: "duffel-api-token",
    keywords: ["duffel_"],
    pattern: "duffel_(?:test|live)_[A-Za-z0-9_=-]{43}",
  },
  { id: "easypost-api-token", keywords: ["ezak"], pattern: `${START}EZAK[A-Za-z0-9]{54}${END}` },
  { id: "frameio-api-token", keywords: ["fio-u-"], pattern: "fio-u-[A-Za-z0-9_=-]{64}" },
  { id: "infracost-api-token", keywords: ["ico-"], pattern: `${START}ico-[A-Za-z0-9]{32}${END}` },
  { id: "intra42-client-secret", keywords: ["s-s4t2"], pattern: "s-s4t2(?:ud|af)-[a-f0-9]{64}" },
  { id: "octopus-deploy-api-key", keywords: ["api-"], pattern: `${START}API-[A-Z0-9]{26}${END}` },
  { id: "openshift-user-token", keywords: ["sha256~"], pattern: "sha256~[A-Za-z0-9_-]{43}" },
  {
    id: "shippo-api-token",
    keywords: ["shippo_"],
    pattern: "shippo_(?:live|test)_[a-fA-F0-9]{40}",
  },
  { id: "typeform-api-token", keywords: ["tfp_"], pattern: "tfp_[A-Za-z0-9_.=-]{59}" },
  {
    id: "notion-api-token",
    keywords: ["ntn_"],
    pattern: `${START}ntn_[0-9]{11}[A-Za-z0-9]{35}${END}`,
  },
  {
    id: "jwt",
    keywords: ["eyj"],
    // Starts only where a base64url run starts: otherwise every `eyJ` inside a long run would
    // be tried again (quadratic).
    pattern: `${START}eyJ[A-Za-z0-9_-]{5,}\\.eyJ[A-Za-z0-9_-]{5,}\\.[A-Za-z0-9_-]*`,
  },
];
