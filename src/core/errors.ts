/**
 * The error model. `EngramError` and its subclasses are "already explained to the user":
 * the entry point prints the message and exits with `exitCode`. Anything else is a bug.
 *
 * Every error has a stable `code` (what `--json` prints, documented in docs/cli.md) and its
 * exit status comes from the one table below: no exit number is written anywhere else.
 * It lives in the core because the core throws these errors and imports only itself and
 * the schemas; src/errors.ts re-exports it with the file-system mapping, for everyone else.
 */

/** Exit statuses of every entry point (documented in docs/cli.md). */
export const EXIT = {
  ok: 0,
  /** `director verify`, `director guard`, `worker check` found problems. */
  findings: 1,
  usage: 2,
  state: 3,
  /** An external service (GitHub, NATS, the TCP hub, a git remote) failed or was unreachable. */
  unavailable: 69,
  internal: 70,
} as const;

export type ExitName = keyof typeof EXIT;
export type ExitStatus = (typeof EXIT)[ExitName];

/**
 * The error codes: each one's exit status and what it means (the docs' table is checked
 * against this by a test). Codes are stable: scripts match on them, never on messages.
 */
export const ERROR_CODES = {
  usage: {
    exit: "usage",
    meaning:
      "bad command line: unknown command or option, wrong arguments, a bad option value or note",
  },
  config: {
    exit: "usage",
    meaning: "the config file does not parse or validate, or an explicit --config file is missing",
  },
  bad_input: {
    exit: "usage",
    meaning:
      "an input file (a seed.json, a host's settings file for `worker setup`) does not parse or validate: the path and field say where",
  },
  not_a_repository: {
    exit: "state",
    meaning:
      "not inside a git work tree, or --repo is missing, not a folder or not a git work tree",
  },
  not_initialized: {
    exit: "state",
    meaning: "the repository has no config/dev.toml and no memory/catalog.json: run director init",
  },
  file_not_found: { exit: "state", meaning: "a file the command was given does not exist" },
  permission_denied: { exit: "state", meaning: "the file system refused access (EACCES, EPERM)" },
  no_space: { exit: "state", meaning: "no space left on the device (ENOSPC, EDQUOT)" },
  too_many_open_files: {
    exit: "state",
    meaning: "the process ran out of file descriptors (EMFILE, ENFILE): raise ulimit -n",
  },
  read_only: { exit: "state", meaning: "the file system is read-only (EROFS)" },
  is_a_directory: { exit: "state", meaning: "a folder was given where a file is needed (EISDIR)" },
  not_a_directory: { exit: "state", meaning: "a file stands where a folder is needed (ENOTDIR)" },
  lock_held: { exit: "state", meaning: "another Director holds the lock of the state folder" },
  spool_share: {
    exit: "state",
    meaning:
      "a sender's spool files waiting for a Director hold its share (agent_bus.sender_share of memory.buffer_max_bytes): run director run",
  },
  state: {
    exit: "state",
    meaning: "the memory, the state folder or the work tree is not in a usable shape",
  },
  branch_moved: {
    exit: "state",
    meaning: "a branch moved under the command: another writer got there first",
  },
  github_permission: {
    exit: "state",
    meaning: "GitHub does not let this token or workflow do it: a setting to change",
  },
  github: { exit: "unavailable", meaning: "a GitHub API request failed after its retries" },
  remote: {
    exit: "unavailable",
    meaning: "a git remote could not be reached or refused a push or fetch",
  },
  bus: {
    exit: "unavailable",
    meaning: "the agent bus (NATS JetStream, the TCP hub) could not be reached or failed",
  },
  sync_target: {
    exit: "unavailable",
    meaning: "an external store (Notion, the knowledge-graph server) failed or refused a request",
  },
  internal: {
    exit: "internal",
    meaning: "a bug: the stack is printed on stderr; please report it",
  },
} as const satisfies Record<string, { exit: ExitName; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

type CodesExiting<E extends ExitName> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]["exit"] extends E ? C : never;
}[ErrorCode];

export type StateCode = CodesExiting<"state">;
export type ServiceCode = CodesExiting<"unavailable">;

/** The exit status of an error code. */
export function exitOf(code: ErrorCode): ExitStatus {
  return EXIT[ERROR_CODES[code].exit];
}

export interface ErrorOptions {
  cause?: unknown;
}

export class EngramError extends Error {
  readonly code: ErrorCode;
  readonly exitCode: ExitStatus;
  constructor(message: string, code: ErrorCode, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitOf(code);
  }
}

/** Bad command-line usage: unknown flag, missing argument, a note that does not validate. */
export class UsageError extends EngramError {
  /** The usage text shown on stderr after the message (not part of the message or its JSON). */
  readonly usage: string | undefined;
  constructor(message: string, options?: ErrorOptions & { usage?: string }) {
    super(message, "usage", options);
    this.usage = options?.usage;
  }
}

/** An input file given to a command that does not parse or validate, at a JSON pointer. */
export class InputError extends EngramError {
  constructor(
    message: string,
    readonly file: string,
    /** RFC 6901 pointer of the field (`""`: the whole file). */
    readonly pointer: string,
    options?: ErrorOptions,
  ) {
    super(message, "bad_input", options);
  }
}

/** A configuration file that cannot be read or does not validate. */
export class ConfigError extends EngramError {
  constructor(
    message: string,
    readonly file: string,
    readonly problems: readonly ConfigProblem[] = [],
    options?: ErrorOptions,
  ) {
    super(message, "config", options);
  }
}

export interface ConfigProblem {
  /** Dotted key, for example `memory.buffer_max_bytes`. */
  key: string;
  /** 1-based line in the file, when it can be located. */
  line?: number;
  message: string;
}

/** The repository or the state folder is not in a usable shape (not initialized, locked). */
export class StateError extends EngramError {
  constructor(message: string, options?: ErrorOptions & { code?: StateCode }) {
    super(message, options?.code ?? "state", options);
  }
}

/** An external service (GitHub, the bus, a git remote) failed: worth retrying later. */
export class ServiceError extends EngramError {
  constructor(message: string, code: ServiceCode, options?: ErrorOptions) {
    super(message, code, options);
  }
}
