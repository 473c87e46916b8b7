#!/usr/bin/env node
/**
 * Generates src/core/ingest/rules/gitleaks-default.ts from gitleaks' published default
 * configuration (config/gitleaks.toml, MIT): every rule's id, regex, keywords, entropy floor,
 * secret group and allowlists, as data. The regexes are translated from Go's RE2 syntax to
 * JavaScript here, once, so that the runtime compiles plain sources:
 *
 * - `(?i)` and `(?i:...)` become spelled-out cases (`[Aa]`), `(?-i:...)` a plain group, so
 *   no rule needs the `i` flag and case-sensitive parts stay case-sensitive;
 * - `\z` and `\A` become `$` and `^`, `[[:alnum:]]`-style classes their ranges,
 *   `(?P<name>` a plain group (names label parts, the match is the secret), `(?s)` the `s` flag.
 *
 * A rule that cannot be translated, or that needs a file path, is listed in
 * `GITLEAKS_SKIPPED` with the reason.
 *
 *   node scripts/gitleaks-rules.mjs PATH/TO/gitleaks.toml COMMIT
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parse } from "smol-toml";

const [tomlPath, commit = "unknown"] = process.argv.slice(2);
if (!tomlPath) {
  console.error("usage: gitleaks-rules.mjs PATH/TO/gitleaks.toml [COMMIT]");
  process.exit(2);
}
const config = parse(readFileSync(tomlPath, "utf8"));

const POSIX = {
  alnum: "A-Za-z0-9",
  alpha: "A-Za-z",
  digit: "0-9",
  xdigit: "0-9A-Fa-f",
  upper: "A-Z",
  lower: "a-z",
  space: "\\s",
  word: "\\w",
  punct: "!-\\/:-@\\[-`{-~",
};

const isLetter = (c) => /[A-Za-z]/.test(c);
const other = (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/** A character class body with both cases of its letters added. */
function foldClass(body) {
  let extra = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (body[i + 1] === "-" && i + 2 < body.length && body[i + 2] !== "\\") {
      const to = body[i + 2];
      if (/[a-z]/.test(c) && /[a-z]/.test(to)) extra += `${c.toUpperCase()}-${to.toUpperCase()}`;
      else if (/[A-Z]/.test(c) && /[A-Z]/.test(to))
        extra += `${c.toLowerCase()}-${to.toLowerCase()}`;
      i += 2;
      continue;
    }
    if (isLetter(c)) extra += other(c);
  }
  // In front, so that a trailing `-` of the body stays a literal.
  return body.startsWith("^") ? `^${extra}${body.slice(1)}` : extra + body;
}

/** A final `(?:...|$)` group, the context after a token, as a look-ahead. */
function trailingLookahead(source) {
  if (!source.endsWith("|$)")) return source;
  const starts = [];
  let last = -1;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
    } else if (c === "(") starts.push(i);
    else if (c === ")") last = starts.pop();
  }
  if (!source.startsWith("(?:", last)) return source;
  return `${source.slice(0, last)}(?=${source.slice(last + 3)}`;
}

/** Whether the group opening at `at` is followed by a quantifier. */
function repeatedGroup(source, at) {
  let depth = 0;
  for (let i = at; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      i++;
      while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
    } else if (c === "(") depth++;
    else if (c === ")" && --depth === 0) return /^[*+?{]/.test(source.slice(i + 1));
  }
  return false;
}

/** Go RE2 source to a JavaScript source with the same meaning, without the `i` flag. */
export function translate(source) {
  let flags = "";
  let out = "";
  // Case-insensitivity of each open group; the top of the stack is the current one.
  const stack = [false];
  let i = 0;
  const ci = () => stack[stack.length - 1];
  while (i < source.length) {
    const c = source[i];
    if (c === "\\") {
      const e = source[i + 1];
      if (e === "z") out += "$";
      else if (e === "A") out += "^";
      else if (e === "Q" || e === "C" || e === "p" || e === "P")
        throw new Error(`\\${e} is not supported`);
      else if (e === "x" && source[i + 2] === "{") throw new Error("\\x{...} is not supported");
      else out += c + e;
      i += 2;
      continue;
    }
    if (c === "[") {
      // A class: copy to its end, translating POSIX classes, folding case when needed.
      let j = i + 1;
      let body = "";
      if (source[j] === "^") {
        body += "^";
        j++;
      }
      if (source[j] === "]") {
        body += "\\]";
        j++;
      }
      while (j < source.length && source[j] !== "]") {
        if (source[j] === "\\") {
          body += source.slice(j, j + 2);
          j += 2;
        } else if (source.startsWith("[:", j)) {
          const end = source.indexOf(":]", j);
          const name = source.slice(j + 2, end);
          if (!(name in POSIX)) throw new Error(`[:${name}:] is not supported`);
          body += POSIX[name];
          j = end + 2;
        } else if (source[j] === "[") {
          body += "\\[";
          j++;
        } else {
          body += source[j];
          j++;
        }
      }
      out += `[${ci() ? foldClass(body) : body}]`;
      i = j + 1;
      continue;
    }
    if (c === "(") {
      const flag = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?(:|\))/.exec(source.slice(i));
      if (
        flag &&
        source[i + 1] === "?" &&
        source[i + 2] !== "P" &&
        source[i + 2] !== "<" &&
        source[i + 2] !== ":" &&
        source[i + 2] !== "=" &&
        source[i + 2] !== "!"
      ) {
        const [whole, on = "", off = "", end] = flag;
        if (/[^ism]/.test(on + off)) throw new Error(`flags ${on}-${off} are not supported`);
        if (on.includes("s")) flags += flags.includes("s") ? "" : "s";
        if (on.includes("m")) flags += flags.includes("m") ? "" : "m";
        const mode = on.includes("i") ? true : off.includes("i") ? false : ci();
        if (end === ")") stack[stack.length - 1] = mode;
        else {
          stack.push(mode);
          out += "(?:";
        }
        i += whole.length;
        continue;
      }
      if (source.startsWith("(?P<", i)) {
        // Named groups label parts of a token (jwt-base64's `alg`, `kid`...): the secret is
        // the whole match, so they do not capture.
        out += "(?:";
        i = source.indexOf(">", i) + 1;
      } else if (source.startsWith("(?:", i)) {
        out += "(?:";
        i += 3;
      } else if (source.startsWith("(?=", i) || source.startsWith("(?!", i)) {
        throw new Error("look-around is not RE2");
      } else {
        // A repeated group (`([a-z0-9]{4}-){3}`) is structure, not a secret: gitleaks would
        // take it as the secret group, and a redaction would take four characters of a URL.
        out += repeatedGroup(source, i) ? "(?:" : "(";
        i++;
      }
      stack.push(ci());
      continue;
    }
    if (c === ")") {
      stack.pop();
      out += ")";
      i++;
      continue;
    }
    if (c === "{" && !/^\{\d+(,\d*)?\}/.test(source.slice(i))) {
      out += "\\{";
      i++;
      continue;
    }
    if (c === "}" && !/\{\d+(,\d*)?$/.test(out)) {
      out += "\\}";
      i++;
      continue;
    }
    out += ci() && isLetter(c) ? `[${c}${other(c)}]` : c;
    i++;
  }
  // The trailing context (`(?:[\x60'"\s;]|\\[nr]|$)`) becomes a look-ahead: the character
  // after a token is not part of the match, so a redaction never takes it.
  out = trailingLookahead(out);
  new RegExp(out, `gd${flags}`);
  return { pattern: out, flags };
}

/** How many capture groups a JavaScript source opens. */
function groupCount(source) {
  return new RegExp(`${source}|`).exec("").length - 1;
}

/** The secret-target regexes and stop words of the allowlists that apply without a file path. */
function allowlists(lists) {
  const allow = [];
  const allowMatch = [];
  const allowLine = [];
  const stopwords = [];
  for (const list of lists ?? []) {
    const hasOther = (list.regexes?.length ?? 0) + (list.stopwords?.length ?? 0) > 0;
    // A path or commit allowlist never applies to a memory note; with AND it never can.
    if (list.condition === "AND" && (list.paths || list.commits)) continue;
    if (!hasOther) continue;
    const target = list.regexTarget ?? "secret";
    for (const re of list.regexes ?? []) {
      const t = translate(re);
      const source = t.flags ? `(?:${t.pattern})` : t.pattern;
      (target === "match" ? allowMatch : target === "line" ? allowLine : allow).push(source);
    }
    for (const w of list.stopwords ?? []) stopwords.push(w.toLowerCase());
  }
  return { allow, allowMatch, allowLine, stopwords };
}

const rules = [];
const skipped = [];
for (const rule of config.rules) {
  if (!rule.regex) {
    skipped.push({ id: rule.id, reason: "matches file paths only" });
    continue;
  }
  const keywords = (rule.keywords ?? []).map((k) => k.toLowerCase());
  if (keywords.length === 0 || keywords.some((k) => k.length < 2)) {
    skipped.push({ id: rule.id, reason: "no keyword of two characters or more to prefilter on" });
    continue;
  }
  try {
    const { pattern, flags } = translate(rule.regex);
    const groups = rule.secretGroup
      ? [rule.secretGroup]
      : Array.from({ length: groupCount(pattern) }, (_, k) => k + 1);
    const lists = allowlists(rule.allowlists);
    rules.push({
      id: rule.id,
      keywords,
      pattern,
      ...(flags ? { flags } : {}),
      ...(groups.length > 0 ? { groups } : {}),
      ...(rule.entropy ? { entropy: rule.entropy } : {}),
      ...(lists.allow.length ? { allow: lists.allow } : {}),
      ...(lists.allowMatch.length ? { allowMatch: lists.allowMatch } : {}),
      ...(lists.allowLine.length ? { allowLine: lists.allowLine } : {}),
      ...(lists.stopwords.length ? { stopwords: lists.stopwords } : {}),
    });
  } catch (e) {
    skipped.push({ id: rule.id, reason: e.message });
  }
}
const global = allowlists([config.allowlist]);

const header = `/**
 * gitleaks' default rules, generated by scripts/gitleaks-rules.mjs from config/gitleaks.toml of
 * https://github.com/gitleaks/gitleaks at ${commit} (MIT licence, Copyright (c) 2019 Zachary
 * Rice). Do not edit: regenerate. The regexes are translated to JavaScript (no \`i\` flag: case
 * is spelled out); a secret group is located by the match's indices.
 */
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: \${ in a regex is a literal
import type { SecretRule } from "./types.js";
`;
const body = [
  header,
  `export const GITLEAKS_COMMIT = ${JSON.stringify(commit)};`,
  "",
  "/** The global allowlist: secrets matching one of these, or holding a stop word, are kept. */",
  "// biome-ignore format: generated data",
  `export const GITLEAKS_GLOBAL_ALLOW: readonly string[] = [\n${global.allow.map((a) => `  ${JSON.stringify(a)},`).join("\n")}\n];`,
  `export const GITLEAKS_GLOBAL_STOPWORDS: readonly string[] = ${JSON.stringify(global.stopwords)};`,
  "",
  "/** Rules not generated, with the reason. */",
  "// biome-ignore format: generated data",
  `export const GITLEAKS_SKIPPED: readonly { id: string; reason: string }[] = [\n${skipped.map((r) => `  ${JSON.stringify(r)},`).join("\n")}\n];`,
  "",
  "// biome-ignore format: generated data, one rule a line",
  `export const GITLEAKS_DEFAULT_RULES: readonly SecretRule[] = [\n${rules.map((r) => `  ${JSON.stringify(r)},`).join("\n")}\n];`,
  "",
].join("\n");
writeFileSync("src/core/ingest/rules/gitleaks-default.ts", body);
console.log(`${rules.length} rules generated, ${skipped.length} skipped`);
for (const s of skipped) console.log(`  ${s.id}: ${s.reason}`);
