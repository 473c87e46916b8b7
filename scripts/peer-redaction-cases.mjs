#!/usr/bin/env node
/**
 * Extracts the test cases of gitleaks and secretlint into engram's test data. Only facts come
 * in: the literal true and false positives of gitleaks' rule generators (with the sample
 * templates they are expanded in and, where a secret is built from a regex, that regex) and
 * secretlint's snapshot inputs with what they found. No peer code is copied or run.
 *
 *   node scripts/peer-redaction-cases.mjs GITLEAKS_GIT_DIR SECRETLINT_GIT_DIR
 *
 * Writes test/fixtures/peers/{gitleaks,secretlint}-cases.json and prints what it skipped.
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";

const [gitleaksDir, secretlintDir] = process.argv.slice(2);
if (!gitleaksDir || !secretlintDir) {
  console.error("usage: peer-redaction-cases.mjs GITLEAKS_GIT_DIR SECRETLINT_GIT_DIR");
  process.exit(2);
}
const git = (dir, ...args) =>
  execFileSync("git", ["--git-dir", dir, ...args], { encoding: "utf8", maxBuffer: 1 << 28 });
const show = (dir, path) => git(dir, "show", `HEAD:${path}`);
const head = (dir) => git(dir, "rev-parse", "HEAD").trim();

// ---- gitleaks: a tiny evaluator for the Go expressions that build test cases ----------------

function tokenize(src) {
  const tokens = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === "\n") {
      tokens.push({ t: "nl" });
      i++;
    } else if (/\s/.test(c)) i++;
    else if (src.startsWith("//", i)) {
      while (i < src.length && src[i] !== "\n") i++;
    } else if (src.startsWith("/*", i)) {
      i = src.indexOf("*/", i) + 2;
    } else if (c === "`") {
      const j = src.indexOf("`", i + 1);
      tokens.push({ t: "str", v: src.slice(i + 1, j) });
      i = j + 1;
    } else if (c === '"') {
      let j = i + 1;
      while (src[j] !== '"') j += src[j] === "\\" ? 2 : 1;
      tokens.push({
        t: "str",
        v: JSON.parse(src.slice(i, j + 1).replace(/\\x([0-9a-f]{2})/gi, "\\u00$1")),
      });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < src.length && /[A-Za-z0-9_.]/.test(src[j])) j++;
      tokens.push({ t: "id", v: src.slice(i, j) });
      i = j;
    } else if (src.startsWith(":=", i) || src.startsWith("...", i)) {
      const v = src.startsWith(":=", i) ? ":=" : "...";
      tokens.push({ t: "op", v });
      i += v.length;
    } else {
      tokens.push({ t: "op", v: c });
      i++;
    }
  }
  return tokens;
}

/** Named regex helpers of gitleaks' generator utilities (facts: what each one stands for). */
const HELPERS = {
  "utils.Numeric": (n) => `[0-9]{${n}}`,
  "utils.Hex": (n) => `[a-f0-9]{${n}}`,
  "utils.AlphaNumeric": (n) => `[a-z0-9]{${n}}`,
  "utils.AlphaNumericExtendedShort": (n) => `[a-z0-9_-]{${n}}`,
  "utils.AlphaNumericExtended": (n) => `[a-z0-9=_\\-]{${n}}`,
  "utils.AlphaNumericExtendedLong": (n) => `[a-z0-9\\/=_\\+\\-]{${n}}`,
  "utils.Hex8_4_4_4_12": () => "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
};

class Unsupported extends Error {}

/** A value: a list of parts (string | {re}) for one text, or {list: [...]} for many. */
function evaluate(tokens, env) {
  let pos = 0;
  const peek = () => tokens[pos];
  const next = () => tokens[pos++];
  const skipNl = () => {
    while (peek()?.t === "nl") pos++;
  };
  const expect = (v) => {
    skipNl();
    const tok = next();
    if (tok?.v !== v) throw new Unsupported(`expected ${v}`);
  };
  const concat = (a, b) => {
    if (a.list || b.list) throw new Unsupported("concatenating lists");
    return [...a, ...b];
  };
  const args = () => {
    const out = [];
    expect("(");
    skipNl();
    while (peek()?.v !== ")") {
      out.push(expr());
      skipNl();
      if (peek()?.v === "...") {
        next();
        out[out.length - 1] = { spread: out[out.length - 1] };
      }
      skipNl();
      if (peek()?.v === ",") next();
      skipNl();
    }
    next();
    return out;
  };
  const text = (value) => {
    if (value.list) throw new Unsupported("a list where a string was wanted");
    if (value.some((p) => typeof p !== "string"))
      throw new Unsupported("a generated string used as a regex");
    return value.join("");
  };
  const primary = () => {
    skipNl();
    const tok = next();
    if (tok === undefined) throw new Unsupported("end of input");
    if (tok.t === "str") return [tok.v];
    if (tok.v === "[") {
      expect("]");
      if (next()?.v !== "string") throw new Unsupported("a slice of something else");
      expect("{");
      const items = [];
      skipNl();
      while (peek()?.v !== "}") {
        items.push(expr());
        skipNl();
        if (peek()?.v === ",") next();
        skipNl();
      }
      next();
      return { list: items };
    }
    if (tok.t !== "id") throw new Unsupported(`token ${tok.v}`);
    if (tok.v in HELPERS) return [HELPERS[tok.v](...args().map(text))];
    if (tok.v === "secrets.NewSecret") {
      const [re] = args();
      return [{ re: text(re) }];
    }
    if (tok.v === "utils.GenerateSampleSecrets") {
      const [id, secret] = args();
      return { list: [{ samples: text(id), secret }] };
    }
    if (tok.v === "utils.GenerateSampleSecret") {
      const [id, secret] = args();
      return [`${text(id)}_api_token = "`, ...secret, '"'];
    }
    if (tok.v === "append") {
      const [first, ...rest] = args();
      const items = [...first.list];
      for (const r of rest) items.push(...(r.spread ? r.spread.list : [r]));
      return { list: items };
    }
    if (tok.v === "fmt.Sprintf") {
      const [format, ...values] = args();
      const pieces = text(format).split(/%[sdv]/);
      if (pieces.length !== values.length + 1) throw new Unsupported("a format with other verbs");
      return pieces.flatMap((piece, k) => (k < values.length ? [piece, ...values[k]] : [piece]));
    }
    if (tok.v === "strings.Repeat") {
      const [s, n] = args();
      return [text(s).repeat(Number(text([n[0]]) || 0))];
    }
    if (env.has(tok.v) && peek()?.v !== "(") return env.get(tok.v);
    throw new Unsupported(`call or name ${tok.v}`);
  };
  const expr = () => {
    let value = primary();
    while (true) {
      const save = pos;
      skipNl();
      if (peek()?.v === "+") {
        next();
        value = concat(value, primary());
      } else {
        pos = save;
        return value;
      }
    }
  };
  const value = expr();
  return { value, rest: pos };
}

/** Splits a function into statements (newlines at the body's bracket depth, not after + or ,). */
function statements(tokens) {
  const out = [];
  let current = [];
  let depth = 0;
  for (const tok of tokens) {
    if (tok.t === "op" && "([{".includes(tok.v)) depth++;
    if (tok.t === "op" && ")]}".includes(tok.v)) depth--;
    const last = current[current.length - 1];
    if (tok.t === "nl" && depth <= 1 && !(last?.v === "+" || last?.v === ",")) {
      if (current.length > 0) out.push(current);
      current = [];
    } else current.push(tok);
  }
  if (current.length > 0) out.push(current);
  return out;
}

function extractGitleaks(dir) {
  const files = git(dir, "ls-tree", "--name-only", "HEAD", "cmd/generate/config/rules/")
    .split("\n")
    .filter((f) => f.endsWith(".go") && !f.endsWith("_test.go"));
  const rules = [];
  const skipped = [];
  for (const file of files) {
    const src = show(dir, file);
    const funcs = src.split(/\nfunc /).slice(1);
    for (const fn of funcs) {
      const ids = [...fn.matchAll(/RuleID:\s*"([^"]+)"/g)].map((m) => m[1]);
      if (ids.length === 0) continue;
      const id = ids[0];
      const env = new Map();
      let tps;
      let fps;
      const problems = [];
      for (const st of statements(tokenize(fn))) {
        const [a, b] = st;
        if (a?.t === "id" && (b?.v === ":=" || b?.v === "=") && st.length > 2) {
          try {
            env.set(a.v, evaluate(st.slice(2), env).value);
          } catch (e) {
            if (!(e instanceof Unsupported)) throw e;
            if (/^(tps|fps|tp|fp|true|false)/i.test(a.v)) problems.push(`${a.v}: ${e.message}`);
          }
        }
        const v = st.findIndex((t) => t.v === "utils.Validate");
        if (v >= 0) {
          // return utils.Validate(r, tps, fps)
          const names = st
            .slice(v)
            .filter((t) => t.t === "id")
            .map((t) => t.v);
          tps = env.get(names[2]);
          fps = env.get(names[3]);
        }
      }
      const items = (value) =>
        (value?.list ?? []).map((item) =>
          Array.isArray(item) && item.every((p) => typeof p === "string") ? item.join("") : item,
        );
      rules.push({ id, file, tps: items(tps), fps: items(fps) });
      if (problems.length > 0) skipped.push({ id, file, problems });
    }
  }
  const templates = parseTemplates(show(dir, "cmd/generate/config/utils/generate.go"));
  return { rules, skipped, templates };
}

/** The sample templates of `GenerateSampleSecrets`: `{i}` identifier, `{I}` upper case, `{s}` secret. */
function parseTemplates(src) {
  const body = src.slice(src.indexOf("func GenerateSampleSecrets"));
  const map = body.slice(body.indexOf("map[string]string{"), body.indexOf("replacer :="));
  const out = {};
  for (const line of map.split("\n")) {
    const t = line.trim();
    if (t.startsWith("//")) continue;
    const toks = tokenize(t).filter((x) => x.t !== "nl");
    if (toks.length >= 3 && toks[0].t === "str" && toks[1].v === ":" && toks[2].t === "str") {
      out[toks[0].v] = toks[2].v;
    }
  }
  return out;
}

// ---- secretlint: snapshot inputs and what they found -----------------------------------------

function extractSecretlint(dir) {
  const preset = show(dir, "packages/@secretlint/secretlint-rule-preset-recommend/src/index.ts");
  const ruleNames = [...preset.matchAll(/@secretlint\/(secretlint-rule-[a-z0-9-]+)"/g)]
    .map((m) => m[1])
    .filter((r) => r !== "secretlint-rule-filter-comments");
  const root = "packages/@secretlint/secretlint-rule-preset-recommend/test/snapshots";
  const files = git(dir, "ls-tree", "-r", "--name-only", "HEAD", `${root}/`).split("\n");
  const folders = new Map();
  for (const f of files) {
    const m = /^[^/]+\/[^/]+\/[^/]+\/[^/]+\/[^/]+\/([^/]+)\/([^/]+)\/(.+)$/.exec(f);
    if (m && ruleNames.includes(m[1])) {
      const key = `${m[1]}/${m[2]}`;
      folders.set(key, [...(folders.get(key) ?? []), m[3]]);
    }
  }
  const cases = [];
  const skipped = [];
  for (const [key, names] of folders) {
    const [rule, name] = key.split("/");
    if (names.includes(".secretlintrc.json") || names.includes("options.ts")) {
      skipped.push({ rule, name, why: "runs with non-default rule options" });
      continue;
    }
    const out = JSON.parse(show(dir, `${root}/${rule}/${name}/output.json`));
    const text = out.sourceContent;
    if (typeof text !== "string" || out.sourceContentType === "binary") {
      skipped.push({ rule, name, why: "binary input (PKCS#12)" });
      continue;
    }
    const secrets = out.messages.map((m) => findingSecret(m, text));
    // Where each secret sits: from the start of its message's range (the same string may occur
    // elsewhere, glued inside a word, where secretlint reports nothing; the aws rule's range
    // starts at the key name but is as long as the secret).
    const at = out.messages.map((m, i) => {
      const start = text.indexOf(secrets[i], m.range[0]);
      if (start < 0) throw new Error(`${key}: secret ${i} not found after its range start`);
      return [start, start + secrets[i].length];
    });
    cases.push({ rule, name, text, secrets, at, finding: out.messages.length > 0 });
  }
  return { cases, skipped, ruleNames };
}

/** The secret of a finding (it lies inside the message's range): the credential part of a URL, else its data value, else its range. */
function findingSecret(message, text) {
  const values = Object.values(message.data ?? {}).filter(
    (v) => typeof v === "string" && v.length >= 8 && text.includes(v),
  );
  const value = values.sort((a, b) => b.length - a.length)[0] ?? text.slice(...message.range);
  const userinfo = /:\/\/([^/\s@]*:[^\s]*)@[^@]*$/.exec(value);
  if (userinfo) return userinfo[1];
  const key = /"private_key"\s*:\s*"([^"]+)"/.exec(value);
  if (key) return key[1];
  return value;
}

const gl = extractGitleaks(gitleaksDir);
const sl = extractSecretlint(secretlintDir);
writeFileSync(
  "test/fixtures/peers/gitleaks-cases.json",
  `${JSON.stringify({ source: "https://github.com/gitleaks/gitleaks", commit: head(gitleaksDir), licence: "MIT", templates: gl.templates, rules: gl.rules, skipped: gl.skipped }, null, 1)}\n`,
);
writeFileSync(
  "test/fixtures/peers/secretlint-cases.json",
  `${JSON.stringify({ source: "https://github.com/secretlint/secretlint", commit: head(secretlintDir), licence: "MIT", rules: sl.ruleNames, cases: sl.cases, skipped: sl.skipped }, null, 1)}\n`,
);
console.log(`gitleaks: ${gl.rules.length} rules, ${gl.skipped.length} with parts not produced`);
for (const s of gl.skipped) console.log(`  ${s.id}: ${s.problems.join("; ")}`);
console.log(`secretlint: ${sl.cases.length} cases, ${sl.skipped.length} skipped`);
for (const s of sl.skipped) console.log(`  ${s.rule}/${s.name}: ${s.why}`);
