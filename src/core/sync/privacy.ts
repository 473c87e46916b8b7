import type { Privacy } from "../../schema/common.js";

/** What the privacy tag and the approval allow for one item. */
export type PrivacyGate =
  | { allowed: true; encrypt: boolean }
  | { allowed: false; reason: "private" | "awaiting_approval" | "rejected" };

export type Approval = "none" | "approved" | "rejected";

/**
 * Private never leaves; public may; sensitive only after explicit approval, and then only
 * encrypted. A rejected sensitive item never leaves either.
 */
export function privacyGate(privacy: Privacy, approval: Approval): PrivacyGate {
  if (privacy === "public") return { allowed: true, encrypt: false };
  if (privacy === "private") return { allowed: false, reason: "private" };
  if (approval === "approved") return { allowed: true, encrypt: true };
  return { allowed: false, reason: approval === "rejected" ? "rejected" : "awaiting_approval" };
}

/**
 * A sanitized preview of a sensitive item for `sync pending`: its shape, never its words.
 * Shows lengths only: a word becomes as many stars as it has letters (at most 8).
 */
export function sanitizedPreview(text: string): { chars: number; words: number; shape: string } {
  const words = text.split(/\s+/).filter((w) => w.length > 0);
  const shape = words
    .slice(0, 12)
    .map((w) => "*".repeat(Math.min(w.length, 8)))
    .join(" ");
  return { chars: text.length, words: words.length, shape };
}
