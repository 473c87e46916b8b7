import type { Link } from "../../schema/common.js";
import type { NoteKind } from "../../schema/envelope.js";
import { ENVELOPE_SCHEMA_VERSION } from "../../schema/envelope.js";
import { truncateChars } from "../model/text.js";
import { type AreasOf, areaOf, topFolders } from "./areas.js";
import {
  type CommitClass,
  type CommitText,
  classifyCommit,
  isConventionalType,
} from "./classify.js";
import { hasContent, plainWords } from "./content.js";
import type { CommitChanges } from "./evidence.js";
import { changeKindName, EARLIER_TOPIC, GIT_SENDER_ID, noiseKindName } from "./kinds.js";
import { proposalText } from "./proposals.js";
import { linkPullRequests } from "./pull-requests.js";
import {
  type DecisionRoute,
  decisionRoutes,
  EARLIER_AFTER_YEARS,
  HISTORY_MIN_CONFIDENCE,
  YEAR_SECONDS,
} from "./standing.js";
import { supersessions } from "./supersede.js";

export { type AreasOf, areaOf, topFolders } from "./areas.js";
export { GIT_SENDER_ID } from "./kinds.js";

/** One commit, as read from git, with the files it changed against its first parent. */
export interface GitCommitInfo {
  sha: string;
  message: string;
  /** Committer time, seconds since 1970. */
  committedAt: number;
  /** Changed paths (repository-relative); every file for a root commit. */
  files: readonly string[];
  /** Number of parents (a merge has more than one); 1 when unknown. */
  parents?: number;
  /** `Name <email>` of the author (bots are told by it). */
  author?: string;
  /** Full shas of the parents, first parent first (links branch commits to their merge). */
  parentShas?: readonly string[];
  /** The changed paths with git's status letter (and line counts where read): evidence. */
  changes?: CommitChanges;
}

/** An agent-bus envelope built from history (the fields `normalizeEnvelope` checks). */
export interface GitEnvelope {
  schema_version: typeof ENVELOPE_SCHEMA_VERSION;
  message_type: "memory_event.v1" | "memory_note.v1";
  sent_at: string;
  sender: { role: "operator"; id: string };
  seq: number;
  event_id: string;
  payload: Record<string, unknown>;
}

/** Trailer keys (case-insensitive) that become notes, and their note kind. */
export const TRAILER_KINDS: Readonly<Record<string, NoteKind>> = {
  decision: "decision",
  lesson: "lesson",
  convention: "convention",
  incident: "incident",
  fact: "fact",
  question: "question",
};

// The envelope schema's limits: 32 links, 32 topics (of 64 chars: areas.ts), 8000 chars of text.
const MAX_LINKS = 32;
const MAX_TOPICS = 32;
const MAX_REF_CHARS = 512;
const MAX_TEXT_CHARS = 8000;
const BODY_CHARS = 400;

export interface Trailer {
  key: string;
  value: string;
}

export interface ParsedMessage {
  subject: string;
  /** The body without its trailer block. */
  body: string;
  trailers: Trailer[];
}

const TRAILER_LINE = /^([A-Za-z0-9][A-Za-z0-9-]*)[ \t]*:[ \t]*(.*)$/;

/**
 * Splits a commit message as git reads it: the subject is the first paragraph, the trailers
 * are the last paragraph when every line of it is `Key: value` (or a continuation line
 * starting with white space).
 */
export function parseCommitMessage(message: string): ParsedMessage {
  const paragraphs = message
    .replace(/\r\n?/g, "\n")
    .split(/\n[ \t]*\n/)
    .map((p) => p.replace(/^\n+|\n+$/g, ""))
    .filter((p) => p.trim().length > 0);
  const subject = collapse(paragraphs[0] ?? "");
  const rest = paragraphs.slice(1);
  const trailers = rest.length > 0 ? parseTrailerBlock(rest[rest.length - 1] as string) : undefined;
  const bodyParts = trailers ? rest.slice(0, -1) : rest;
  return { subject, body: bodyParts.join("\n\n"), trailers: trailers ?? [] };
}

function parseTrailerBlock(paragraph: string): Trailer[] | undefined {
  const trailers: Trailer[] = [];
  for (const line of paragraph.split("\n")) {
    const last = trailers[trailers.length - 1];
    if (/^[ \t]/.test(line) && last) {
      last.value = `${last.value} ${line.trim()}`.trim();
      continue;
    }
    const m = TRAILER_LINE.exec(line);
    // `fix: the parser` is a pull request's title in a merge's body, not a trailer.
    if (!m || isConventionalType(m[1] as string)) return undefined;
    trailers.push({ key: m[1] as string, value: (m[2] as string).trim() });
  }
  return trailers;
}

/** One note per known trailer; a `Rationale:` joins the Decision before it. */
export function trailerNotes(
  trailers: readonly Trailer[],
): { kind: NoteKind; text: string; rationale?: string }[] {
  const notes: { kind: NoteKind; text: string; rationale?: string }[] = [];
  let decision: { kind: NoteKind; text: string; rationale?: string } | undefined;
  for (const { key, value } of trailers) {
    const k = key.toLowerCase();
    if (value === "") continue;
    if (k === "rationale") {
      if (decision) {
        decision.rationale = decision.rationale ? `${decision.rationale} ${value}` : value;
      }
      continue;
    }
    const kind = TRAILER_KINDS[k];
    if (kind === undefined) continue;
    const note = { kind, text: value };
    notes.push(note);
    decision = kind === "decision" ? note : undefined;
  }
  return notes;
}

/**
 * A commit's message read as the import reads it: subject, body, trailer notes, and the
 * classifier's verdict (a `BREAKING CHANGE:` footer is seen with the body; a `Decision:`
 * trailer is the decision). The corpus tests classify exactly this way.
 */
export function classifyMessage(
  commit: Pick<GitCommitInfo, "message" | "parents" | "author"> &
    Partial<Pick<GitCommitInfo, "files" | "changes">>,
) {
  const { text, ...read } = readMessage(commit);
  return read;
}

/**
 * A commit's message read by the rules alone: what `classifyMessage` gives, with the text the
 * classifier was given (`text`), for the learned scorer's features and its training.
 */
export function readMessage(
  commit: Pick<GitCommitInfo, "message" | "parents" | "author"> &
    Partial<Pick<GitCommitInfo, "files" | "changes">>,
) {
  const { subject, body, trailers } = parseCommitMessage(commit.message);
  const notes = trailerNotes(trailers);
  const breaking = trailers.filter((t) => /^BREAKING[ -]CHANGE$/i.test(t.key));
  // A merged pull request's title may read as a trailer (`Breaking: fix the parser`): a
  // merge's body is read whole.
  const merge = (commit.parents ?? 1) > 1 || /^Merge pull request\b/i.test(subject);
  const text: CommitText = {
    subject,
    body: merge
      ? messageAfterSubject(commit.message)
      : [body, ...breaking.map((t) => `BREAKING CHANGE: ${t.value}`)].join("\n\n"),
    ...(commit.parents !== undefined ? { parents: commit.parents } : {}),
    ...(commit.author !== undefined ? { author: commit.author } : {}),
    decisionTrailer: notes.some((n) => n.kind === "decision"),
    ...changesOf(commit),
  };
  return { subject, body, cls: classifyCommit(text), notes, text };
}

/** What the commit changed, for the classifier: its own record, or its paths without status. */
function changesOf(commit: Partial<Pick<GitCommitInfo, "files" | "changes">>): {
  changes?: CommitChanges;
} {
  if (commit.changes !== undefined) return { changes: commit.changes };
  if (commit.files === undefined || commit.files.length === 0) return {};
  return { changes: { paths: commit.files.map((path) => ({ status: "M", path })) } };
}

/** A commit as the import reads it, in the light of the history around it. */
export type ClassifiedCommit = ReturnType<typeof classifyMessage> & {
  /** The pull request of the commit: `(#N)` in its subject, or the merge that brought it in. */
  pr?: number;
  /** The commit whose decision this commit's decision supersedes. */
  supersedes?: { sha: string; title: string };
  /** Where its decision goes (`standing.ts`); memory when not given. */
  route?: DecisionRoute;
  /** Older than `EARLIER_AFTER_YEARS` before the newest commit read: its lessons are filed apart. */
  dated?: boolean;
};

/**
 * The commits of a history (oldest first) as the import reads them: each alone, then a
 * decision without a reason of its own takes its pull request's title, as the history's merge
 * commit holds it, when that says more than the subject. The corpus tests read this way.
 */
export function classifyHistory(
  commits: readonly (Pick<GitCommitInfo, "sha" | "message" | "parents" | "author" | "parentShas"> &
    Partial<Pick<GitCommitInfo, "files" | "changes">>)[],
): ClassifiedCommit[] {
  const links = linkPullRequests(commits);
  const read = commits.map((commit) => classifyMessage(commit));
  // A merge's decision without a reason takes the reason its branch gave for the same choice.
  const branchReasons = new Map<number, { title: string; rationale: string }[]>();
  commits.forEach((commit, i) => {
    const pr = links.member.get(commit.sha);
    const decision = read[i]?.cls.decision;
    if (pr === undefined || decision?.rationale === undefined) return;
    const list = branchReasons.get(pr) ?? [];
    list.push({ title: decision.title, rationale: decision.rationale });
    branchReasons.set(pr, list);
  });
  const withReasons = commits.map((commit, i): ClassifiedCommit => {
    const one = read[i] as ReturnType<typeof classifyMessage>;
    const pr = one.cls.pr ?? links.member.get(commit.sha);
    const decision = one.cls.decision;
    const branch = branchReasons.get(one.cls.pr ?? -1) ?? [];
    const fromBranch =
      branch.find((b) => decision !== undefined && sameWords(b.title, decision.title)) ?? branch[0];
    if (decision !== undefined && decision.rationale === undefined && fromBranch !== undefined) {
      return {
        ...one,
        cls: { ...one.cls, decision: { ...decision, rationale: fromBranch.rationale } },
        pr,
      };
    }
    const title = pr === undefined ? undefined : links.titles.get(pr);
    if (
      decision !== undefined &&
      decision.rationale === undefined &&
      title !== undefined &&
      saysMore(title, `${decision.title} ${one.subject}`)
    ) {
      const cls = {
        ...one.cls,
        decision: { ...decision, rationale: `Pull request #${pr}: ${title}` },
      };
      return { ...one, cls, pr };
    }
    return pr === undefined ? one : { ...one, pr };
  });
  return withSupersessions(commits, withReasons);
}

/** Each decision that supersedes an earlier one names it, first thing in its rationale. */
function withSupersessions(
  commits: readonly Pick<GitCommitInfo, "sha">[],
  read: ClassifiedCommit[],
): ClassifiedCommit[] {
  const at: number[] = [];
  const decisions = read.flatMap((r, i) => {
    if (r.cls.decision === undefined) return [];
    at.push(i);
    const sha = (commits[i] as { sha: string }).sha;
    return [{ sha, title: r.cls.decision.title, ...(r.pr !== undefined ? { pr: r.pr } : {}) }];
  });
  const out = [...read];
  for (const [later, earlier] of supersessions(decisions)) {
    const r = out[at[later] as number] as ClassifiedCommit;
    const before = decisions[earlier] as { sha: string; title: string };
    const decision = r.cls.decision as { title: string; rationale?: string };
    const note = `Supersedes "${before.title}" (${before.sha.slice(0, 12)})`;
    out[at[later] as number] = {
      ...r,
      cls: {
        ...r.cls,
        decision: {
          ...decision,
          rationale: decision.rationale ? `${note}. ${decision.rationale}` : note,
        },
      },
      supersedes: { sha: before.sha, title: before.title },
    };
  }
  return out;
}

/** Whether two subjects say the same, conventional prefix and `(#N)` aside. */
function sameWords(a: string, b: string): boolean {
  return plainWords(a) === plainWords(b);
}

/** Whether a pull request's title names a word (3 letters or more) the commit does not. */
function saysMore(title: string, commit: string): boolean {
  const known = new Set(plainWords(commit).split(" "));
  return plainWords(title)
    .split(" ")
    .some((w) => w.length >= 3 && !known.has(w));
}

/**
 * The envelopes of one commit: a `memory_event.v1` with `event_id` `git:<sha>` whose kind
 * says what the commit is (`commit:<type>` for a change, `noise:<kind>` for a commit only
 * counted), then a `memory_note.v1` per trailer note (`git:<sha>:<n>` from 1) and per note the
 * classifier inferred (`git:<sha>:decision`, `:lesson`, `:convention`). Ids depend only on
 * the commit, so ingesting a range again is deduplicated. Pure.
 */
export function commitEnvelopes(
  commit: GitCommitInfo,
  firstSeq = 0,
  areasOf?: AreasOf,
  read: ClassifiedCommit = classifyMessage(commit),
): GitEnvelope[] {
  const { subject, body, cls, notes } = read;
  const pr = read.pr ?? cls.pr;
  const sentAt = new Date(commit.committedAt * 1000).toISOString();
  const area = areaOf(commit.files, areasOf);
  const topics = [...new Set([area, ...topFolders(commit.files)])].slice(0, MAX_TOPICS);
  const commitLink: Link = { type: "commit", ref: commit.sha };
  const refLinks: Link[] =
    pr === undefined ? [commitLink] : [commitLink, { type: "pr", ref: `#${pr}` }];
  const fileLinks: Link[] = cls.noise
    ? []
    : commit.files
        .filter((f) => f.length <= MAX_REF_CHARS)
        .slice(0, MAX_LINKS - refLinks.length)
        .map((ref) => ({ type: "file", ref }));
  const shortBody = truncateChars(collapse(body.split(/\n[ \t]*\n/)[0] ?? ""), BODY_CHARS);
  const headline = subject === "" ? `commit ${commit.sha.slice(0, 12)}` : subject;
  const text = truncateChars(
    shortBody === "" ? headline : `${headline} — ${shortBody}`,
    MAX_TEXT_CHARS,
  );
  let seq = firstSeq;
  const envelope = (
    type: GitEnvelope["message_type"],
    eventId: string,
    payload: Record<string, unknown>,
  ): GitEnvelope => ({
    schema_version: ENVELOPE_SCHEMA_VERSION,
    message_type: type,
    sent_at: sentAt,
    sender: { role: "operator", id: GIT_SENDER_ID },
    seq: seq++,
    event_id: eventId,
    payload,
  });
  const out = [
    envelope("memory_event.v1", `git:${commit.sha}`, {
      kind: cls.noise ? noiseKindName(cls.noise) : changeKindName(cls.type),
      text,
      topics,
      links: [...refLinks, ...fileLinks],
    }),
  ];
  // A superseding decision links the commit it supersedes.
  const supersededLink: Link[] = read.supersedes
    ? [{ type: "commit", ref: read.supersedes.sha }]
    : [];
  // A note the history moved past (an earlier decision, an old lesson) is filed apart.
  const earlierTopics = [EARLIER_TOPIC, ...topics].slice(0, MAX_TOPICS);
  const note = (
    id: string,
    kind: NoteKind,
    noteText: string,
    rationale?: string,
    extra: { confidence?: number; earlier?: boolean } = {},
  ) =>
    out.push(
      envelope("memory_note.v1", `git:${commit.sha}:${id}`, {
        kind,
        text: truncateChars(noteText, MAX_TEXT_CHARS),
        ...(rationale ? { rationale: truncateChars(rationale, MAX_TEXT_CHARS) } : {}),
        ...(extra.confidence !== undefined ? { confidence: extra.confidence } : {}),
        topics: extra.earlier ? earlierTopics : topics,
        links: id === "decision" || id === "proposal" ? [...refLinks, ...supersededLink] : refLinks,
      }),
    );
  notes.forEach((n, i) => {
    note(String(i + 1), n.kind, n.text, n.rationale);
  });
  for (const [id, kind, noteText, rationale] of inferredNotes(cls, read.route)) {
    if (id === "proposal") {
      // A question is never promoted nor listed in MEMORY.md: `director confirm` decides.
      const confidence = cls.decision?.confidence ?? 1;
      const text = proposalText({
        sha: commit.sha,
        confidence,
        title: noteText,
        ...(rationale ? { rationale } : {}),
      });
      note(id, kind, text, undefined, { confidence });
    } else {
      const earlier = id === "decision" ? read.route === "earlier" : read.dated === true;
      note(id, kind, noteText, rationale, { earlier });
    }
  }
  return out;
}

/** The notes a classified commit stands for, with their id suffixes; none without content. */
function inferredNotes(
  cls: CommitClass,
  route: DecisionRoute = "memory",
): [string, NoteKind, string, string | undefined][] {
  const scoped = (text: string) => (cls.scope ? `${cls.scope}: ${text}` : text);
  const out: [string, NoteKind, string, string | undefined][] = [];
  if (cls.decision && route !== "none") {
    const title = scoped(cls.decision.title);
    if (route === "proposal") out.push(["proposal", "question", title, cls.decision.rationale]);
    else out.push(["decision", "decision", title, cls.decision.rationale]);
  }
  if (cls.lesson && hasContent(cls.lesson)) {
    out.push(["lesson", "lesson", scoped(cls.lesson), undefined]);
  }
  if (cls.convention && hasContent(cls.convention)) {
    out.push(["convention", "convention", scoped(cls.convention), undefined]);
  }
  return out;
}

/** NDJSON of the envelopes of commits given oldest first, numbered from 0. */
export function gitHistoryNdjson(
  commits: readonly GitCommitInfo[],
  areasOf?: AreasOf,
  privacy: "public" | "private" = "private",
  minConfidence: number = HISTORY_MIN_CONFIDENCE,
): {
  text: string;
  events: number;
} {
  const lines: string[] = [];
  const read = routedHistory(commits, classifyHistory(commits), minConfidence);
  for (const [i, commit] of commits.entries()) {
    for (const env of commitEnvelopes(commit, lines.length, areasOf, read[i])) {
      // Private is every note's default: stated only when the user said public.
      if (privacy === "public") env.payload.privacy = "public";
      lines.push(JSON.stringify(env));
    }
  }
  return { text: lines.length === 0 ? "" : `${lines.join("\n")}\n`, events: lines.length };
}

/** Each commit as read, with the route of its decision over the whole history (`standing.ts`). */
export function routedHistory(
  commits: readonly Pick<GitCommitInfo, "sha" | "committedAt">[],
  read: readonly ClassifiedCommit[],
  minConfidence: number,
): ClassifiedCommit[] {
  const routes = decisionRoutes(
    read.map((r, i) => {
      const c = commits[i] as Pick<GitCommitInfo, "sha" | "committedAt">;
      return {
        sha: c.sha,
        committedAt: c.committedAt,
        subject: r.subject,
        ...(r.cls.decision ? { decision: r.cls.decision } : {}),
        ...(r.cls.lesson ? { lesson: r.cls.lesson } : {}),
        ...(r.supersedes ? { supersedes: r.supersedes.sha } : {}),
      };
    }),
    minConfidence,
  );
  const newest = commits.reduce((max, c) => Math.max(max, c.committedAt), 0);
  const cutoff = newest - EARLIER_AFTER_YEARS * YEAR_SECONDS;
  return read.map((r, i) => {
    const route = routes[i];
    const dated = (commits[i] as { committedAt: number }).committedAt < cutoff;
    return { ...r, ...(route !== undefined ? { route } : {}), ...(dated ? { dated } : {}) };
  });
}

/** Everything after a message's first paragraph (the subject), trailers included. */
function messageAfterSubject(message: string): string {
  const text = message.replace(/\r\n?/g, "\n").replace(/^\n+/, "");
  const cut = text.search(/\n[ \t]*\n/);
  return cut === -1 ? "" : text.slice(cut).trim();
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
