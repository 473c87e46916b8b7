import type { Link } from "../../schema/common.js";

const LINK_TYPES: ReadonlySet<string> = new Set<Link["type"]>([
  "issue",
  "pr",
  "file",
  "spec",
  "commit",
  "url",
]);

/**
 * A link as a payload may give it: a string, or `{type, ref}` of a known type. Payloads whose
 * schema has no links pass them unchecked, so anything else is left out, never trusted.
 */
export function isLinkInput(raw: unknown): raw is string | Link {
  if (typeof raw === "string") return true;
  if (typeof raw !== "object" || raw === null) return false;
  const { type, ref } = raw as { type?: unknown; ref?: unknown };
  return typeof type === "string" && LINK_TYPES.has(type) && typeof ref === "string";
}

/**
 * Classifies a bare link string from a worker: `12`, `#12` and `issue 12` are issues, `PR#7`/`pr:7`
 * pull requests, 7-40 hex digits a commit, `spec:...` a spec, a URL a url, anything else a file.
 */
export function classifyLink(input: string | Link): Link {
  if (typeof input !== "string") return { type: input.type, ref: input.ref.trim() };
  const text = input.trim();
  let m = /^(?:pr|pull)\s*[#:/ -]?\s*(\d+)$/i.exec(text);
  if (m) return { type: "pr", ref: `#${m[1]}` };
  m = /^(?:issue\s*[#:/ -]?\s*|#)?(\d+)$/i.exec(text);
  if (m) return { type: "issue", ref: `#${m[1]}` };
  if (/^[0-9a-f]{7,40}$/.test(text)) return { type: "commit", ref: text };
  m = /^spec:(.+)$/i.exec(text);
  if (m) return { type: "spec", ref: (m[1] as string).trim() };
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text)) return { type: "url", ref: text };
  return { type: "file", ref: text };
}

/** Issue references arrive as `12`, `"#12"` or `"ENG-12"`; they are kept as `#12` or as given. */
export function normalizeIssue(issue: string | number | undefined): string | undefined {
  if (issue === undefined) return undefined;
  const text = String(issue).trim();
  if (/^#?\d+$/.test(text)) return `#${text.replace(/^#/, "")}`;
  return text.length > 0 ? text : undefined;
}

export function linkKey(link: Link): string {
  return `${link.type}\u0000${link.ref}`;
}
