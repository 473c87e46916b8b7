/**
 * Rules that need context: a key word before the value, a URL's user information, an HTTP
 * header, a `curl` option, a PEM block, a connection string. These follow gitleaks'
 * `generic-api-key`, `curl-auth-user`, `curl-auth-header`, `private-key` and secretlint's
 * `basicauth` and `privatekey`, with precision rules of our own: a value is redacted when it
 * looks like a credential, not whenever it follows a key word (see `harmless.ts`).
 */
import { looksLikePassword, looksLikeToken } from "./harmless.js";
import type { SecretRule } from "./types.js";

/**
 * A type between a name and its value: Go's `var x string = `, Kotlin's `val x: String = `.
 * It follows the blanks after the name (one run, taken once): two runs of blanks side by side
 * split a long run of blanks every way, which made a key word before 128 KB of them take 13 s.
 */
const TYPE = `(?:(?::[ \\t]*)?(?:string|String|str|&str|\\[\\]byte)(?![A-Za-z0-9_])[ \\t]*)?`;
/**
 * Assignment operators: `=`, `:`, `:=`, make's `::=`, `:::=`, `?=` and `+=`, PHP's `.=` and
 * `??=`, `=>`, and a comma after a call's quoted first argument (`setProperty("X_TOKEN", "...")`;
 * not after any quote, or `"token_uri":"...","auth_x509_url"` would read as an assignment).
 */
// A look-behind comes after the character it guards: checked first, it would scan back from
// every position and make a line of repeated key words quadratic.
const OPERATOR = `(?::{1,3}=|=>|\\?\\??=|\\.=|\\+=|[:=]|,(?<=\\(["'][\\w.-]{1,64}["'][ \\t]{0,4},))`;
/** Between a key and its value: an operator, or the end of an XML start tag (`<apiToken>value`, not `<user:password>`). */
const SEP = `(?:(?:\\\\?["'])?[ \\t]*${TYPE}${OPERATOR}[ \\t]*|>(?<=<[\\w.-]{1,64}>)[ \\t]*(?:\\r?\\n[ \\t]*)?)`;

/**
 * The value after a key: a quoted value runs to its closing quote (a password with spaces
 * goes whole); a bare one to whitespace or punctuation. Each alternative is one capture
 * group that ends the match (the closing quote is a look-ahead).
 */
const VALUE = [
  // JSON escaped inside a string: \"value\"
  `\\\\"((?:[^"\\\\\\r\\n]|\\\\[^"\\r\\n])+)(?=\\\\")`,
  `"((?:[^"\\\\\\r\\n]|\\\\.)+)(?=")`,
  `'((?:[^'\\\\\\r\\n]|\\\\.)+)(?=')`,
  // Go's raw strings and shell command substitution: `value`
  // (one word: `etcdctl get /key` in backticks is a command, not a value).
  "`([^`\\\\\\s]+)(?=`)",
  // Braces are allowed after the first character, so that `${DB_PASSWORD}` is one value (a placeholder).
  `([^\\s"'\`,;&[\\]{}()\\\\=<>][^\\s"'\`,;&[\\]()\\\\<>]*)`,
].join("|");

/**
 * Key words of a password. The key must END with one (optionally followed by a digit or
 * two): `DB_PASSWORD`, `client_secret` are keys; `PASSWORD_MIN_LENGTH`, `secret_santa` are not.
 */
export const PASSWORD_KEYS = "pass(?:word|wd|phrase)|[_.-]pass|pwd|secret|credentials?";
/** Key words of a token or key. Same rule: `api_key_header` and `token_ttl` are not keys. */
export const TOKEN_KEYS =
  "token|secret[_-]?key[_-]?base|api[_-]?key|access[_-]?key|private[_-]?key|auth[_-]?key|session[_-]?key|signing[_-]?key|encryption[_-]?key|master[_-]?key|secret[_-]?key|client[_-]?key";

const PEM_HEAD = "-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const PEM_TAIL = "-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----";
/** Characters of a PEM body (base64, header lines such as `Proc-Type: 4,ENCRYPTED`), raw or JSON-escaped newlines. */
// A dash run of five is a boundary (the END line, or the next block), never body: a text of
// repeated headers then costs linear time, not quadratic.
const PEM_BODY = "(?:[A-Za-z0-9+/=\\s:,.]|-(?!----)|\\\\[nrt])";

/**
 * A PEM body holds base64; prose after a header does not. A block with its END line needs a
 * run of 16 base64 characters and 64 in all, a truncated one (no END line) a whole line's worth.
 */
function isPemBlock(block: string): boolean {
  if (!/-----END/.test(block)) return /[A-Za-z0-9+/]{40,}/.test(block);
  // A whole block needs 64 base64 characters, as gitleaks asks: the smallest real key is
  // longer, and `YWJj...eXo=` (the alphabet, in base64) is a placeholder.
  const body = block.replace(/^-----BEGIN[^\n\\]*?-----|-----END[\s\S]*$/g, "");
  return /[A-Za-z0-9+/]{16,}/.test(body) && (body.match(/[A-Za-z0-9+/]/g)?.length ?? 0) >= 64;
}

/** Words that stand for a password in examples: `curl -u user:pass`, `--user username:password`. */
const EXAMPLE_PASSWORDS = new Set(["pass", "password", "passwd", "pwd", "token", "secret", "test"]);

/**
 * `user:password` of a curl command line, unless it is an example (`username:password`,
 * `test:test`) or a placeholder (`<user:password>`, `${{ env.ID }}:${{ env.PASS }}`,
 * `$(cat login):$(cat pass)`, `[PASSWORD]`, `xxx:yyy`).
 */
function isCurlCredential(secret: string): boolean {
  const colon = secret.indexOf(":");
  const unquote = (part: string) => part.replace(/^(["'])(.*)\1$/, "$2");
  const user = unquote(secret.slice(0, colon));
  const password = unquote(secret.slice(colon + 1));
  // A key as the user name, no password.
  if (password === "") return user.length >= 8 && looksLikePassword(user);
  if (password.length < 3) return false;
  if (/^(?:[<[(]|\$[({]|\{\{)/.test(user) || /^(?:[<[(]|\$[({]|\{\{)/.test(password)) return false;
  if (password === user || EXAMPLE_PASSWORDS.has(password.toLowerCase())) return false;
  if (/^(.)\1*$/.test(password)) return false;
  return looksLikePassword(password);
}

/** The schemes of secretlint's database-connection-string rule: `mysql://root:secret@` is an example there. */
const DATABASE_SCHEME = "(?:mongodb(?:\\+srv)?|mysqlx?|postgres(?:ql)?)";

/**
 * Passwords of URLs in documentation, as secretlint's basicauth and database-connection-string
 * rules keep them: `password`, `mypassword`, `YOUR_PASSWORD`, `REPLACE_WITH_PASSWORD`.
 */
const URL_EXAMPLE_PASSWORD = /^(?:my)?pass(?:word|wd)$|^your[_-]|replace|change[_-]?me/i;
/** In a database URL these too (`mysql://root:secret@`, `admin:pass@`); `https://user:pass@` is reported. */
const DATABASE_EXAMPLE_PASSWORDS = new Set([
  "pass",
  "secret",
  "root",
  "admin",
  "user",
  "username",
  "myusername",
]);
/** A user or password that is a template: `${password}`, `{{pass}}`, `{PASS}`, `%PASS%`, `$PASS`, `$(cat pass)`. */
const URL_TEMPLATE =
  /^(?:\$?\{[^{}]{1,50}\}|\{\{[^{}]{1,50}\}\}|%[A-Za-z_]{1,30}%|\$[A-Za-z_][A-Za-z0-9_]*|\$\([^()]{1,50}\))$/;

/**
 * `user:password` of a URL, unless it is an example: shorter than 4 characters, one
 * character repeated, the user name again, a template, or an example word (secretlint's
 * basicauth and database-connection-string rules keep the same).
 */
function isUrlCredential(secret: string, database: boolean): boolean {
  const colon = secret.indexOf(":");
  const user = secret.slice(0, colon);
  const password = secret.slice(colon + 1);
  if (password.length < 4 || /^(.)\1*$/.test(password) || password === user) return false;
  if (URL_TEMPLATE.test(user) || URL_TEMPLATE.test(password)) return false;
  if (URL_EXAMPLE_PASSWORD.test(password)) return false;
  if (database && DATABASE_EXAMPLE_PASSWORDS.has(password.toLowerCase())) return false;
  return looksLikePassword(password) && !/^\d{1,5}$/.test(password);
}

export const CONTEXT_RULES: readonly SecretRule[] = [
  {
    id: "private-key",
    keywords: ["-----begin"],
    // The block to its END line; a truncated block (no END line) to where its body stops.
    // A header alone, as in prose that names it, is kept: the body must hold a base64 line.
    pattern: `${PEM_HEAD}${PEM_BODY}*?(?:${PEM_TAIL}|(?!${PEM_BODY}))`,
    check: (secret) => isPemBlock(secret),
  },
  {
    id: "curl-auth-user",
    keywords: ["curl"],
    // `curl -u user:password` or `--user=user:password`, also on a continued line (`\`); a
    // bare `-u user` prompts, so it stays. `-u "apikey:"` is a key as the user name. The
    // search for `-u` stops at the next `curl`, so that a line of them is scanned once.
    pattern: `\\bcurl\\b(?:(?!curl\\b)[^\\r\\n]|\\\\\\r?\\n){0,400}?[ \\t](?:-u|--user)(?:=|[ \\t]{1,5})(?:"([^"\\r\\n:]*:[^"\\r\\n]*)(?=")|'([^'\\r\\n:]*:[^'\\r\\n]*)(?=')|((?:"[^"\\r\\n]{3,}"|'[^'\\r\\n]{3,}'|[^\\s"':]*):(?:"[^"\\r\\n]{3,}"|'[^'\\r\\n]{3,}'|[^\\s"']{3,})))`,
    groups: [1, 2, 3],
    check: (secret) => isCurlCredential(secret),
  },
  {
    id: "auth-header",
    keywords: ["authorization", "bearer"],
    pattern: [
      // A scheme word (`Bearer`, `Basic`, `Api-Token`...), when present, is kept; a bare
      // scheme word is never the credential.
      `[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]${SEP}(?:[A-Za-z][A-Za-z0-9_-]{0,24}[ \\t]+)?([^\\s"'\`,;\\\\]+)`,
      // A bare `Bearer x` needs a digit or some length, so that prose ("bearer authentication") stays.
      `(?:[Bb]earer|BEARER)[ \\t]+((?:(?=[A-Za-z_.~+/-]*[0-9])[A-Za-z0-9_.~+/-]{8,}|[A-Za-z0-9_.~+/-]{20,})=*)`,
    ].join("|"),
    groups: [1, 2],
    check: (secret) => looksLikeToken(secret),
  },
  {
    id: "azure-storage-account-key",
    keywords: ["accountkey", "sharedaccesskey"],
    pattern: "(?:Account|SharedAccess)Key=([A-Za-z0-9+/]{40,100}={0,2})",
    flags: "i",
    groups: [1],
  },
  {
    id: "url-credentials",
    keywords: ["://"],
    // A database scheme, when there is one, is part of the match: its examples differ.
    lookback: 12,
    // The whole user information goes, so that the marker leaves no `user:password@` shape
    // that a scanner would flag; a URL with a user name and no password is kept.
    pattern: `(?:\\b${DATABASE_SCHEME})?://([^\\s/?#@:"'<>[\\]\\\\]*:[^\\s/?#"'<>[\\]\\\\]+)(?=@)`,
    groups: [1],
    check: (secret, match) => isUrlCredential(secret, !match.startsWith("://")),
  },
  {
    id: "passphrase",
    keywords: ["passphrase"],
    // An unquoted pass phrase is words: it runs to the end of the line. Bounded, and it starts
    // and ends with a non-blank, so that the blanks after it are scanned once, not from each
    // character of it, and a long line of look-alikes is not scanned again from every key word.
    pattern: `passphrase[0-9]{0,2}${SEP}([^\\s"'\`\\\\](?:[^\\r\\n"'\`]{0,254}[^\\s"'\`])?)(?=[ \\t]*(?:[\\r\\n"'\`]|$))`,
    flags: "i",
    groups: [1],
    check: (secret) => looksLikePassword(secret),
  },
  {
    id: "password-assignment",
    keywords: ["pass", "pwd", "secret", "credential"],
    // `DB_PASS=`: the separator before a bare `pass` is part of the match (not `compass=`).
    lookback: 1,
    pattern: `(?:${PASSWORD_KEYS})[0-9]{0,2}${SEP}(?:${VALUE})`,
    flags: "i",
    groups: [1, 2, 3, 4, 5],
    check: (secret) => looksLikePassword(secret),
  },
  {
    id: "generic-api-key",
    keywords: ["token", "key"],
    // `encryption_key`: the keyword `key` is 11 characters into the key word.
    lookback: 16,
    pattern: `(?:${TOKEN_KEYS})[0-9]{0,2}${SEP}(?:${VALUE})`,
    flags: "i",
    groups: [1, 2, 3, 4, 5],
    check: (secret) => looksLikeToken(secret),
  },
  {
    id: "cli-secret-option",
    keywords: ["--pass", "--token", "--secret", "--api-key"],
    // `--password hunter2`, `--token=...`: a command line in a note.
    pattern:
      "--(?:password|passwd|token|secret|api-key|access-token|auth-token)(?:=|[ \\t]+)(?![-\\[])([^\\s\"'`,;]+)",
    flags: "i",
    groups: [1],
    check: (secret) => looksLikePassword(secret),
  },
  {
    id: "stripe-webhook-secret",
    keywords: ["whsec_"],
    // Stripe's webhook signing secret (secretlint and gitleaks have no rule for it).
    pattern: "\\bwhsec_[A-Za-z0-9+/]{32,64}(?![A-Za-z0-9+/])",
  },
  {
    id: "aws-presigned-signature",
    keywords: ["x-amz-signature"],
    // The signature of a pre-signed S3 URL: whoever holds the URL holds the access.
    pattern: "[Xx]-[Aa][Mm][Zz]-[Ss]ignature=([0-9a-fA-F]{64})(?![0-9a-fA-F])",
    groups: [1],
  },
  {
    id: "azure-sas-signature",
    keywords: ["sig="],
    lookback: 1,
    // The `sig` of an Azure shared access signature URL (URL-encoded base64 of an HMAC).
    pattern: "[?&]sig=([A-Za-z0-9%+/]{30,120}={0,2})(?![A-Za-z0-9%+/=])",
    groups: [1],
  },
  {
    id: "cli-password-flag",
    keywords: ["mysql", "mariadb", "docker"],
    // `mysql -uroot -pSECRET` (no space: a bare `-p` prompts), `docker login -p SECRET`. The
    // search for the flag stops at the next command word, so a line of them is scanned once.
    pattern:
      "\\b(?:mysql(?:dump|admin)?|mariadb)\\b(?:(?!mysql|mariadb)[^\\r\\n]){0,200}?[ \\t]-p([^\\s\"'`;|&<>-][^\\s\"'`;|&<>]*)|\\bdocker[ \\t]+login\\b(?:(?!docker)[^\\r\\n]){0,200}?[ \\t](?:-p|--password)(?:=|[ \\t]+)([^\\s\"'`;|&<>-][^\\s\"'`;|&<>]*)",
    groups: [1, 2],
    check: (secret) => looksLikePassword(secret),
  },
  {
    id: "aws-secret-key-pair",
    keywords: ["[redacted:aws-access-token]"],
    // The secret access key beside the key id that gave it away (`AKIA... <40 characters>`),
    // found once the key id is a marker (the redactor scans its output again).
    pattern:
      "\\[REDACTED:aws-access-token\\][\\s,:;|\"'=/]{1,8}([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])",
    groups: [1],
    entropy: 3,
  },
  {
    id: "docker-config-auth",
    keywords: ['"auth"', '\\"auth\\"'],
    lookback: 1,
    // A `.dockerconfigjson` `auth`: base64 of `user:password`, which holds no key word or
    // prefix for the base64 rule to find. Raw or JSON-escaped.
    pattern: '\\\\?"auth\\\\?"[ \\t]*:[ \\t]*\\\\?"([A-Za-z0-9+/]{8,512}={0,2})(?=\\\\?")',
    groups: [1],
    check: (secret) => /^[^:\s]+:\S+$/.test(Buffer.from(secret, "base64").toString("latin1")),
  },
];
