/**
 * The test cases of gitleaks and secretlint (test/fixtures/peers/, extracted by
 * scripts/peer-redaction-cases.mjs), expanded into texts. Where gitleaks builds a secret from
 * a regex, a seeded sampler of our own writes one string the regex matches (repetitions take
 * at most one more than their minimum, as gitleaks' generator does).
 */
import { readFileSync } from "node:fs";
import { Rng } from "./random.js";

type Part = string | { re: string };
type Item = string | Part[] | { samples: string; secret: Part[] };

interface GitleaksFile {
  commit: string;
  templates: Record<string, string>;
  rules: { id: string; tps: Item[]; fps: Item[] }[];
  skipped: { id: string; problems: string[] }[];
}

export interface SecretlintCase {
  rule: string;
  name: string;
  text: string;
  secrets: string[];
  /** Where each secret is (start, end) in `text`: the occurrence secretlint reports. */
  at: [number, number][];
  finding: boolean;
}

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/peers/${name}`, import.meta.url), "utf8"));

export const GITLEAKS: GitleaksFile = fixture("gitleaks-cases.json");
export const SECRETLINT: { commit: string; cases: SecretlintCase[] } =
  fixture("secretlint-cases.json");

const ANY =
  " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~";
const CLASSES: Record<string, string> = {
  d: "0123456789",
  w: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_",
  s: " ",
};

/** One string matching a (Go/RE2 syntax) regex source, drawn with `rng`. */
export function sample(source: string, rng: Rng): string {
  let i = 0;
  const cls = (): string => {
    // at "[": returns the characters of the class
    i++;
    const negate = source[i] === "^";
    if (negate) i++;
    let chars = "";
    let first = true;
    while (i < source.length && (source[i] !== "]" || first)) {
      first = false;
      let c = source[i] as string;
      if (c === "\\") {
        i++;
        const e = source[i] as string;
        if (e in CLASSES) {
          chars += CLASSES[e];
          i++;
          continue;
        }
        c = e === "x" ? String.fromCharCode(Number.parseInt(source.slice(i + 1, i + 3), 16)) : e;
        if (e === "x") i += 2;
      } else if (source.startsWith("[:", i)) {
        const end = source.indexOf(":]", i);
        const name = source.slice(i + 2, end);
        chars +=
          name === "alnum" ? CLASSES.w?.replace("_", "") : name === "digit" ? "0123456789" : "";
        i = end + 2;
        continue;
      }
      i++;
      if (source[i] === "-" && source[i + 1] !== "]" && i + 1 < source.length) {
        let to = source[i + 1] as string;
        i += 2;
        if (to === "\\") {
          to = source[i] as string;
          if (to === "x") {
            to = String.fromCharCode(Number.parseInt(source.slice(i + 1, i + 3), 16));
            i += 3;
          } else i++;
        }
        for (let k = c.charCodeAt(0); k <= to.charCodeAt(0); k++) chars += String.fromCharCode(k);
      } else chars += c;
    }
    i++;
    if (negate) return [...ANY].filter((ch) => !chars.includes(ch)).join("");
    return chars;
  };
  const repeat = (): [number, number] => {
    const c = source[i];
    const simple: Record<string, [number, number]> = { "*": [0, 1], "+": [1, 2], "?": [0, 1] };
    if (c !== undefined && c in simple) {
      i++;
      return simple[c] as [number, number];
    }
    if (c === "{") {
      const end = source.indexOf("}", i);
      const [a, b] = source.slice(i + 1, end).split(",");
      i = end + 1;
      const min = Number(a);
      return [min, b === undefined ? min : b === "" ? min + 1 : Math.min(Number(b), min + 1)];
    }
    return [1, 1];
  };
  const alternation = (): string => {
    const branches: (() => string)[][] = [[]];
    while (i < source.length && source[i] !== ")") {
      const c = source[i] as string;
      if (c === "|") {
        i++;
        branches.push([]);
        continue;
      }
      let atom: () => string;
      if (c === "(") {
        i++;
        if (source[i] === "?") {
          const flags = /^\?([a-zA-Z-]*)(:|\))/.exec(source.slice(i));
          if (source.startsWith("?P<", i) || source.startsWith("?<", i)) {
            i = source.indexOf(">", i) + 1;
          } else if (flags) {
            i += flags[0].length;
            if (flags[2] === ")") continue;
          }
        }
        const start = i;
        let depth = 0;
        // Find the group's end, then sample its inside each time it repeats.
        for (; i < source.length; i++) {
          if (source[i] === "\\") i++;
          else if (source[i] === "[") {
            i++;
            if (source[i] === "]") i++;
            while (source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
          } else if (source[i] === "(") depth++;
          else if (source[i] === ")") {
            if (depth === 0) break;
            depth--;
          }
        }
        const inner = source.slice(start, i);
        i++;
        atom = () => sample(inner, rng);
      } else if (c === "[") {
        const chars = cls();
        atom = () => chars[rng.int(0, chars.length - 1)] ?? "";
      } else if (c === "\\") {
        const e = source[i + 1] as string;
        i += 2;
        if (e in CLASSES) {
          const chars = CLASSES[e] as string;
          atom = () => chars[rng.int(0, chars.length - 1)] ?? "";
        } else if (e === "b" || e === "A" || e === "z") continue;
        else if (e === "x") {
          const ch = String.fromCharCode(Number.parseInt(source.slice(i, i + 2), 16));
          i += 2;
          atom = () => ch;
        } else atom = () => e;
      } else if (c === "^" || c === "$") {
        i++;
        continue;
      } else if (c === ".") {
        i++;
        atom = () => "a";
      } else {
        i++;
        atom = () => c;
      }
      const [min, max] = repeat();
      if (source[i] === "?") i++; // lazy
      const n = rng.int(min, max);
      branches[branches.length - 1]?.push(() => {
        let out = "";
        for (let k = 0; k < n; k++) out += atom();
        return out;
      });
    }
    const branch = branches[rng.int(0, branches.length - 1)] ?? [];
    return branch.map((f) => f()).join("");
  };
  return alternation();
}

function render(parts: readonly Part[], rng: Rng): string {
  return parts.map((p) => (typeof p === "string" ? p : sample(p.re, rng))).join("");
}

/** Every text an item stands for: a literal, a generated secret, or a secret in each sample template. */
export function expand(item: Item, rng: Rng): string[] {
  if (typeof item === "string") return [item];
  if (Array.isArray(item)) return [render(item, rng)];
  const secret = render(item.secret, rng);
  return Object.values(GITLEAKS.templates).map((t) =>
    t
      .replaceAll("{i}", item.samples)
      .replaceAll("{I}", item.samples.toUpperCase())
      .replaceAll("{s}", secret),
  );
}

export interface GitleaksCase {
  rule: string;
  text: string;
}

/** gitleaks' true and false positives as texts, the same for every run (seeded). */
export function gitleaksCases(): { tps: GitleaksCase[]; fps: GitleaksCase[] } {
  const rng = new Rng(27);
  const tps: GitleaksCase[] = [];
  const fps: GitleaksCase[] = [];
  for (const rule of GITLEAKS.rules) {
    for (const item of rule.tps)
      for (const text of expand(item, rng)) tps.push({ rule: rule.id, text });
    for (const item of rule.fps)
      for (const text of expand(item, rng)) fps.push({ rule: rule.id, text });
  }
  return { tps, fps };
}
