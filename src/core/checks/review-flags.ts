import type { Engram } from "../../schema/engram.js";
import type { KnowledgeItem, KnowledgeKind } from "../proposal/knowledge.js";

/**
 * What a flag warns of: an instruction to agents, a secret left in the text, a sealed note, a
 * decision that contradicts current memory (see contradictions.ts), a decision stated below
 * the confidence floor.
 */
export type ReviewFlagKind = "instruction" | "secret" | "sealed" | "contradiction" | "confidence";

/** Why, as a stable code a tool can act on. */
export type ReviewFlagReason =
  | "pipe-to-shell"
  | "bypass-review"
  | "agent-instruction"
  | "dangerous-command"
  | "url-in-convention"
  | "secret-prefix"
  | "high-entropy"
  | "beside-redaction"
  | "sealed"
  | "contradicts-memory"
  | "low-confidence";

/** One item a reviewer should look at before merging, and why. */
export interface ReviewFlag {
  kind: ReviewFlagKind;
  reason: ReviewFlagReason;
  /** The reason in words, for the pull-request body and the guard. */
  why: string;
  engram_id: string;
  /** The item's id (`director reject ID`); absent for a flag on the engram as a whole. */
  item_id?: string;
  /** The item's kind, or `engram` for a flag on the engram as a whole (sealed fields). */
  item_kind: KnowledgeKind | "engram";
  /** The item's text, cut to `TEXT_CHARS`. */
  text: string;
  /** For a contradiction: the decision on main it contradicts (`e_…#d<n>`, as recall names it). */
  contradicts?: { id: string; text: string };
}

const TEXT_CHARS = 200;

interface Rule {
  kind: ReviewFlagKind;
  reason: ReviewFlagReason;
  test: (text: string, item: KnowledgeItem) => string | undefined;
}

const PIPE_TO_SHELL =
  /\b(?:curl|wget|iwr|invoke-webrequest)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\b(?:curl|wget)\b[^|\n]{0,300}\|\s*(?:sudo\s+)?(?:python3?|node|perl|ruby|iex|invoke-expression)\b/i;
const BYPASS_REVIEW: readonly [RegExp, string][] = [
  [
    /\bpush(?:es|ing)?\s+(?:\S+\s+){0,2}(?:straight|directly|right)\s+(?:in)?to\s+(?:main|master|the default branch|production)\b/i,
    "pushing straight to the default branch",
  ],
  [
    /\bwithout\s+(?:a\s+|any\s+)?(?:pull[- ]request|PR|review|code review|approval)s?\b/i,
    "working without a pull request or review",
  ],
  [
    /\b(?:skip|skipping|bypass|bypassing|disable|disabling|avoid)\s+(?:the\s+)?(?:code\s+)?(?:review|reviews|branch protection|guard|hooks?|CI|checks)\b/i,
    "skipping review, hooks or checks",
  ],
  [/--no-verify\b/, "--no-verify skips the commit hooks"],
  [
    /\bforce[- ]push|\bpush\s+(?:--force\b|-f\b)|--force-with-lease\b/i,
    "force-pushing rewrites shared history",
  ],
  [
    /\b(?:merge|approve)\s+(?:your|its|their)\s+own\s+(?:pull[- ]requests?|PRs?)\b/i,
    "approving one's own changes",
  ],
];
const AGENT_ADDRESS =
  /^\s*(?:(?:all\s+|ai\s+|coding\s+)?agents?|assistants?|claude|copilot|llms?)\s*[:,]|\bignore\s+(?:all\s+)?(?:previous|prior|above)\s+instructions\b|\b(?:every|each|all)\s+(?:ai\s+|coding\s+)?agents?\s+(?:must|should|shall)\b/i;
const DANGEROUS =
  /\brm\s+-[a-z]*r[a-z]*f|\brm\s+-[a-z]*f[a-z]*r|\bsudo\s+(?:-\S+\s+)*(?:rm|chmod|chown|curl|wget|sh|bash|dd|tee|mv|cp|apt(?:-get)?|yum|dnf|pip3?|npm|mkfs\S*)\b|\bchmod\s+(?:\+x|7[0-7][0-7])\b|\bbase64\s+(?:-d|--decode)\b|\/dev\/tcp\/|\bnc\s+-e\b|\beval\s*[("$`]/i;
const URL = /\bhttps?:\/\/[^\s)>\]]+/i;

// Prefixes of live secrets: left in a note, the redaction missed them (no rule, or a new form).
const SECRET_PREFIXES: readonly [RegExp, string][] = [
  [/\bwhsec_[A-Za-z0-9+/=]{16,}/, "a Stripe webhook signing secret (whsec_)"],
  [/\b[sr]k_live_[A-Za-z0-9]{16,}/, "a Stripe live secret key (sk_live_ / rk_live_)"],
  [/\b[sr]k_test_[A-Za-z0-9]{16,}/, "a Stripe test secret key (sk_test_ / rk_test_)"],
  [/\bxox[abposr]-[A-Za-z0-9-]{10,}/, "a Slack token (xox…)"],
  [/\bgh[pousr]_[A-Za-z0-9]{30,}/, "a GitHub token (gh…_)"],
  [/\bgithub_pat_[A-Za-z0-9_]{30,}/, "a GitHub fine-grained token"],
  [/\bglpat-[A-Za-z0-9_-]{16,}/, "a GitLab token (glpat-)"],
  [/\b(?:AKIA|ASIA)[A-Z0-9]{16}\b/, "an AWS access key id"],
  [/\bAIza[A-Za-z0-9_-]{30,}/, "a Google API key (AIza)"],
  [/\bsk-(?:ant-|proj-)?[A-Za-z0-9_-]{30,}/, "an API secret key (sk-)"],
  [/\bnpm_[A-Za-z0-9]{30,}/, "an npm token (npm_)"],
  [/\bhf_[A-Za-z0-9]{30,}/, "a Hugging Face token (hf_)"],
  [/-----BEGIN [A-Z ]*PRIVATE KEY-----/, "a private key block"],
];
// `=` only as base64 padding: `key=value` is two runs, the name and the value.
const TOKEN_RUN = /[A-Za-z0-9+/_-]{32,}={0,2}/g;
const NEAR_TOKEN = /[A-Za-z0-9+/_-]{16,}={0,2}/g;
const REDACTED = /\[REDACTED[^\]]*\]/g;
/** Characters either side of a redaction marker that count as beside it. */
const BESIDE_CHARS = 80;
/** Bits per character: random base64 is near 5 to 6; words, paths and hex hashes stay below. */
const MIN_ENTROPY = 4.2;

const RULES: readonly Rule[] = [
  {
    kind: "instruction",
    reason: "pipe-to-shell",
    test: (t) => {
      const m = PIPE_TO_SHELL.exec(t);
      return m && !negated(t.slice(0, m.index))
        ? "pipes a download into a shell: whoever runs it runs a stranger's code"
        : undefined;
    },
  },
  {
    kind: "instruction",
    reason: "bypass-review",
    test: (t) => {
      const hit = BYPASS_REVIEW.find(([re]) => {
        const m = re.exec(t);
        return m !== null && !negated(t.slice(0, m.index));
      });
      return hit ? `tells agents to go around review: ${hit[1]}` : undefined;
    },
  },
  {
    kind: "instruction",
    reason: "agent-instruction",
    test: (t) =>
      AGENT_ADDRESS.test(t)
        ? "is addressed to agents as an order: memory should record what was learned, not command the readers"
        : undefined,
  },
  {
    kind: "instruction",
    reason: "dangerous-command",
    test: (t) => {
      const m = DANGEROUS.exec(t);
      return m && !negated(t.slice(0, m.index))
        ? `holds a command that deletes, escalates or decodes and runs (${m[0].trim()})`
        : undefined;
    },
  },
  {
    kind: "instruction",
    reason: "url-in-convention",
    test: (t, item) => {
      if (item.kind !== "convention") return undefined;
      const m = URL.exec(t);
      return m ? `a convention that points agents at a URL (${m[0].slice(0, 60)})` : undefined;
    },
  },
  {
    kind: "secret",
    reason: "secret-prefix",
    test: (t) => {
      const hit = SECRET_PREFIXES.find(([re]) => re.test(t));
      return hit ? `looks like ${hit[1]} that redaction did not catch` : undefined;
    },
  },
  {
    kind: "secret",
    reason: "beside-redaction",
    test: (t) => {
      for (const m of t.matchAll(REDACTED)) {
        const start = m.index;
        const around = `${t.slice(Math.max(0, start - BESIDE_CHARS), start)} ${t.slice(start + m[0].length, start + m[0].length + BESIDE_CHARS)}`;
        if ([...around.matchAll(NEAR_TOKEN)].some((n) => secretLike(n[0]))) {
          return `a secret-like string right beside ${m[0]}: the key's id was caught, its secret may not be`;
        }
      }
      return undefined;
    },
  },
  {
    kind: "secret",
    reason: "high-entropy",
    test: (t) => {
      const outside = t.replace(REDACTED, " ");
      for (const m of outside.matchAll(TOKEN_RUN)) {
        if (secretLike(m[0]) && shannonEntropy(m[0]) >= MIN_ENTROPY) {
          return `a random-looking string of ${m[0].length} characters (${shannonEntropy(m[0]).toFixed(1)} bits a character), like a key`;
        }
      }
      return undefined;
    },
  },
];

/** "Never push straight to main" states the rule the flag guards: a negation in the clause. */
function negated(before: string): boolean {
  const clause = before.split(/[.;:!?\n]/).at(-1) ?? "";
  return /\b(?:never|not|don't|dont|no|nobody|must not|mustn't)\b/i.test(clause.slice(-60));
}

/** Mixed letters and digits, not only hex (commit and content hashes are hex). */
function secretLike(run: string): boolean {
  if (/^[0-9a-fA-F]+$/.test(run)) return false;
  return /[0-9]/.test(run) && /[a-z]/.test(run) && /[A-Z]/.test(run);
}

/** Bits per character of the string's own character distribution. */
export function shannonEntropy(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  const n = [...text].length;
  let bits = 0;
  for (const k of counts.values()) bits -= (k / n) * Math.log2(k / n);
  return bits;
}

function cut(text: string): string {
  const chars = Array.from(text);
  return chars.length <= TEXT_CHARS ? text : `${chars.slice(0, TEXT_CHARS - 1).join("")}…`;
}

/**
 * The text with every secret-like run hidden: a known prefix keeps only the prefix
 * (`whsec_…`), any other run its first four characters. A flag quotes its item, and a pull
 * request body is mailed to every watcher: a caught secret must not travel further.
 */
export function maskSecrets(text: string): string {
  return text.replace(NEAR_TOKEN, (run) => {
    const prefixed = SECRET_PREFIXES.some(([re]) => re.test(run));
    if (!prefixed && !secretLike(run)) return run;
    const prefix = prefixed ? /^[A-Za-z]{2,10}[_-](?:[a-z]{2,5}_)?/.exec(run)?.[0] : undefined;
    return `${prefix ?? run.slice(0, 4)}…`;
  });
}

/** Whether an item holds secret-like residue (its text is then shown through `maskSecrets`). */
export function holdsSecret(item: KnowledgeItem): boolean {
  return flagItem(item).some((f) => f.kind === "secret");
}

/** The flags of one knowledge item, at most one per reason (one secret flag), in rule order. */
export function flagItem(item: KnowledgeItem): ReviewFlag[] {
  const texts = [item.text, item.rationale ?? ""].filter((t) => t !== "");
  const flags: ReviewFlag[] = [];
  for (const rule of RULES) {
    // One secret is one flag: its prefix, else its place beside a marker, else its entropy.
    if (rule.kind === "secret" && flags.some((f) => f.kind === "secret")) continue;
    const why = texts.map((t) => rule.test(t, item)).find((w) => w !== undefined);
    if (why === undefined) continue;
    flags.push({
      kind: rule.kind,
      reason: rule.reason,
      why,
      engram_id: item.engram_id,
      ...(item.id === undefined ? {} : { item_id: item.id }),
      item_kind: item.kind,
      text: cut(item.text),
    });
  }
  // The item's secret never leaves it: every flag on the item quotes it hidden.
  if (flags.some((f) => f.kind === "secret")) {
    for (const f of flags) f.text = cut(maskSecrets(item.text));
  }
  return flags;
}

/**
 * Decisions stated below `floor` (`[memory] promote_min_confidence`): memory keeps them
 * short-term until they are stated again, and a reviewer should know the sender was unsure.
 */
export function lowConfidenceFlags(items: readonly KnowledgeItem[], floor: number): ReviewFlag[] {
  return items
    .filter((i) => i.kind === "decision" && i.confidence !== undefined && i.confidence < floor)
    .map((i) => ({
      kind: "confidence" as const,
      reason: "low-confidence" as const,
      why: `stated at confidence ${i.confidence}, below promote_min_confidence ${floor}: it stays short-term until it is stated again`,
      engram_id: i.engram_id,
      item_id: i.id,
      item_kind: i.kind,
      text: cut(holdsSecret(i) ? maskSecrets(i.text) : i.text),
    }));
}

/**
 * What a reviewer should look at first in the knowledge a proposal adds: instructions to
 * agents (a download piped to a shell, going around review, orders addressed to agents,
 * URLs in conventions), secret-like residue the redaction missed (known prefixes, random
 * runs, a string beside a redaction marker), and engrams with sealed or sensitive content
 * that the diff cannot show. Pure; in item order, the sealed engrams last.
 */
export function reviewFlags(
  items: readonly KnowledgeItem[],
  engrams: readonly Engram[],
): ReviewFlag[] {
  const flags = items.flatMap(flagItem);
  for (const e of engrams) {
    const sealed =
      (e.sealed?.length ?? 0) +
      (e.episodes ?? []).reduce((n, ep) => n + (ep.sealed?.length ?? 0), 0);
    if (sealed === 0 && e.privacy !== "sensitive") continue;
    flags.push({
      kind: "sealed",
      reason: "sealed",
      why:
        sealed > 0
          ? `holds ${sealed} sealed field${sealed === 1 ? "" : "s"}: encrypted, so the diff cannot show what the team will believe; open it with the seal key before merging`
          : "is marked sensitive: read it in full before merging",
      engram_id: e.engram_id,
      item_kind: "engram",
      text: cut(e.facts[0] ?? e.decisions[0]?.title ?? "(sealed)"),
    });
  }
  return flags;
}
