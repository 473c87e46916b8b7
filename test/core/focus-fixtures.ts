import { expect } from "vitest";
import {
  catalogEntryFor,
  engramPath,
  sealCatalog,
  sealEngram,
  serializeEngram,
} from "../../src/core/model/engram.js";
import { renderFocus } from "../../src/core/rendering/focus.js";
import { countFocusItems } from "../../src/core/rendering/focus-header.js";
import type { Catalog, Engram, EngramBody } from "../../src/schema/engram.js";
import { engramBody } from "./engine-fixtures.js";

export type Signals = EngramBody["signals"];

export interface Spec {
  scope?: "st" | "lt";
  version?: string;
  facts?: string[];
  decisions?: { title: string; rationale: string; confidence?: number }[];
  topics?: string[];
  privacy?: "public" | "private" | "sensitive";
  signals?: Partial<Signals>;
  errors?: { error_type: string; count: number; retryable: boolean | null; sample: string }[];
  sealed?: EngramBody["sealed"];
  tentative?: string[];
  /** `provenance.senders` (default: the fixture body's). */
  senders?: string[];
}

export function engram(spec: Spec): Engram {
  const base = engramBody({ version: spec.version ?? "20250101-000000Z" });
  const body: EngramBody = {
    ...base,
    scope: spec.scope ?? "st",
    topics: spec.topics ?? [],
    facts: spec.facts ?? [],
    decisions: spec.decisions ?? [],
    privacy: spec.privacy ?? "private",
    signals: { ...base.signals, ...spec.signals },
  };
  if (spec.errors) {
    body.telemetry = {
      workers: [],
      errors: spec.errors.map((e) => ({ ...e, workers: ["w1"] })),
    };
  }
  if (spec.sealed) body.sealed = spec.sealed;
  if (spec.tentative) body.tentative = spec.tentative;
  if (spec.senders) body.provenance = { ...body.provenance, senders: spec.senders };
  return sealEngram(body);
}

export function catalogOf(engrams: readonly Engram[], version = 7): Catalog {
  return sealCatalog(
    version,
    "2025-01-01T00:00:00.000Z",
    engrams.map((e) => catalogEntryFor(e, Buffer.byteLength(serializeEngram(e)))),
  );
}

export function mapOf(engrams: readonly Engram[]): Map<string, Engram> {
  return new Map(engrams.map((e) => [e.engram_id, e]));
}

export function render(engrams: readonly Engram[], maxBytes = 16_384, maxItems = 60) {
  return renderFocus({ catalog: catalogOf(engrams), engrams: mapOf(engrams), maxBytes, maxItems });
}

export function link(e: Engram): string {
  return `([${e.engram_id.slice(0, 10)}](${engramPath(e.scope, e.version, e.engram_id)}))`;
}

export function itemLines(text: string): string[] {
  return text.split("\n").filter((line) => line.startsWith("- "));
}

/** Bullet lines of knowledge sections, and of telemetry ones (Open problems, Now). */
export function linesBySort(text: string): { knowledge: string[]; telemetry: string[] } {
  const out = { knowledge: [] as string[], telemetry: [] as string[] };
  let telemetry = false;
  for (const line of text.split("\n")) {
    if (line.startsWith("## ")) telemetry = line === "## Open problems" || line === "## Now";
    else if (line.startsWith("- ")) (telemetry ? out.telemetry : out.knowledge).push(line);
  }
  return out;
}

export function checkShape(
  view: ReturnType<typeof renderFocus>,
  maxBytes: number,
  maxItems: number,
): void {
  expect(view.bytes).toBe(Buffer.byteLength(view.text, "utf8"));
  expect(view.bytes).toBeLessThanOrEqual(maxBytes);
  expect(view.items).toBe(countFocusItems(view.text));
  expect(view.items).toBeLessThanOrEqual(maxItems);
  if (view.text !== "") expect(view.text.endsWith("\n")).toBe(true);
  for (const line of view.text.split("\n")) expect(line).not.toMatch(/[ \t]$/);
}

export const lt = engram({
  scope: "lt",
  version: "20250102-000000Z",
  facts: ["Run the integration suite with --runInBand"],
  decisions: [{ title: "Use pnpm", rationale: "Workspaces and a strict lockfile" }],
});
export const stOld = engram({
  version: "20250103-000000Z",
  facts: ["The staging deploy takes 12 minutes"],
  decisions: [{ title: "Pin Node 20", rationale: "CI images lag behind" }],
  errors: [
    { error_type: "TimeoutError", count: 3, retryable: true, sample: "fetch timed out after 30s" },
  ],
});
export const stNew = engram({
  version: "20250105-000000Z",
  facts: ["Cache keys include the lockfile hash"],
  errors: [{ error_type: "SyntaxError", count: 1, retryable: false, sample: "Unexpected token }" }],
});
