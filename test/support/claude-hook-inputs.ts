/**
 * Claude Code's hook payloads, as `@anthropic-ai/claude-agent-sdk` 0.3.332 publishes their
 * types (sdk.d.ts: `BaseHookInput`, `SessionStartHookInput`, `PreCompactHookInput`,
 * `SessionEndHookInput`, `EXIT_REASONS`), copied here field for field (the SDK is not a
 * dependency), and checked against what the real Claude Code 2.1.332 sends (captured from
 * its hooks: the values below). The hook tests send exactly these shapes.
 */

/** `BaseHookInput`: the fields of every hook; the optional ones a session hook may carry. */
export interface BaseHookInput {
  session_id: string;
  transcript_path: string;
  cwd: string;
  prompt_id?: string;
  permission_mode?: string;
  agent_id?: string;
  agent_type?: string;
}

/** `SessionStartHookInput['source']`: fork came after the first four. */
export const SESSION_START_SOURCES = ["startup", "resume", "clear", "compact", "fork"] as const;

export interface SessionStartHookInput extends BaseHookInput {
  hook_event_name: "SessionStart";
  source: (typeof SESSION_START_SOURCES)[number];
  model?: string;
  session_title?: string;
  /** resume and fork: the resumed transcript's age and size, and the cache's state. */
  seconds_since_last_response?: number;
  context_tokens?: number;
  prompt_cache_likely_expired?: boolean;
  estimated_cache_write_usd?: number;
}

export interface PreCompactHookInput extends BaseHookInput {
  hook_event_name: "PreCompact";
  trigger: "manual" | "auto";
  /** `/compact <instructions>`; null without (what Claude Code sends for a bare /compact). */
  custom_instructions: string | null;
}

/** `EXIT_REASONS`: why a session ended (`-p` sessions end with `other`). */
export const EXIT_REASONS = ["clear", "resume", "logout", "prompt_input_exit", "other"] as const;

export interface SessionEndHookInput extends BaseHookInput {
  hook_event_name: "SessionEnd";
  reason: (typeof EXIT_REASONS)[number];
}

/** The base fields as Claude Code fills them for a session in `cwd`. */
export function baseInput(cwd: string, sessionId: string, home: string): BaseHookInput {
  return {
    session_id: sessionId,
    transcript_path: `${home}/.claude/projects/${cwd.replace(/[^A-Za-z0-9]/g, "-")}/${sessionId}.jsonl`,
    cwd,
    permission_mode: "default",
  };
}

/** A SessionStart payload; resume and fork carry the resumed transcript's figures, compact the model. */
export function sessionStartInput(
  base: BaseHookInput,
  source: SessionStartHookInput["source"],
): SessionStartHookInput {
  const input: SessionStartHookInput = { ...base, hook_event_name: "SessionStart", source };
  if (source === "resume" || source === "fork") {
    Object.assign(input, {
      seconds_since_last_response: 123,
      context_tokens: 15,
      prompt_cache_likely_expired: false,
      estimated_cache_write_usd: 0.0001,
    });
  }
  if (source === "compact") input.model = "claude-opus-5-5";
  return input;
}
