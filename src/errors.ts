/**
 * Errors in one place. `EngramError` and its subclasses are "already explained to the user":
 * the entry point prints the message and exits with `exitCode`. Anything else is a bug.
 *
 * Every error has a stable `code` (what `--json` prints, documented in docs/cli.md) and its
 * exit status comes from the one table below: no exit number is written anywhere else.
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
    meaning: "an input file (a seed.json) does not parse or validate: the path and field say where",
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
  read_only: { exit: "state", meaning: "the file system is read-only (EROFS)" },
  is_a_directory: { exit: "state", meaning: "a folder was given where a file is needed (EISDIR)" },
  not_a_directory: { exit: "state", meaning: "a file stands where a folder is needed (ENOTDIR)" },
  lock_held: { exit: "state", meaning: "another Director holds the lock of the state folder" },
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

function permissions(verb: string): string {
  return `check the permissions of the file and its folder, or run as a user who may ${verb} it`;
}

const freeSpace = () => "free some space and run the command again";
const checkPath = () => "check the path";

/** What the file system said, by errno: the code and the advice that goes with it. */
const ERRNO: Record<string, { code: StateCode; says: string; advice: (verb: string) => string }> = {
  ENOENT: { code: "file_not_found", says: "no such file or directory", advice: checkPath },
  EACCES: { code: "permission_denied", says: "permission denied", advice: permissions },
  EPERM: { code: "permission_denied", says: "operation not permitted", advice: permissions },
  ENOSPC: { code: "no_space", says: "no space left on the device", advice: freeSpace },
  EDQUOT: { code: "no_space", says: "disk quota exceeded", advice: freeSpace },
  EROFS: {
    code: "read_only",
    says: "the file system is read-only",
    advice: () =>
      "run from a writable checkout, or point [state] dir in config/dev.toml at a writable folder",
  },
  EISDIR: {
    code: "is_a_directory",
    says: "is a directory",
    advice: () => "give a file, not a folder",
  },
  ENOTDIR: {
    code: "not_a_directory",
    says: "a part of the path is not a directory",
    advice: checkPath,
  },
};

/** The file system refused: a state the user can fix, never a bug. */
export class FileSystemError extends StateError {
  constructor(
    message: string,
    readonly path: string | undefined,
    readonly errno: string,
    code: StateCode,
    options?: ErrorOptions,
  ) {
    super(message, { ...options, code });
  }
}

interface ErrnoLike {
  code?: unknown;
  path?: unknown;
  dest?: unknown;
  syscall?: unknown;
}

/**
 * A file-system error as a FileSystemError naming the path and what to do, or undefined when
 * `error` is not one. `path` is the name to show (the user's spelling); without it the
 * error's own path is shown. ENOENT is mapped only when `path` is given: a missing file the
 * user named is their mistake, a missing internal file is a bug.
 */
export function fileSystemError(
  error: unknown,
  path?: string,
  verb: "read" | "write" | "use" = "use",
): FileSystemError | undefined {
  if (error instanceof FileSystemError) return error;
  const e = error as ErrnoLike | null;
  const errno = typeof e?.code === "string" ? e.code : undefined;
  const known = errno === undefined ? undefined : ERRNO[errno];
  if (errno === undefined || known === undefined) return undefined;
  if (errno === "ENOENT" && path === undefined) return undefined;
  const shown = path ?? (typeof e?.path === "string" ? e.path : undefined);
  const syscall = typeof e?.syscall === "string" ? `, in ${e.syscall}` : "";
  const what =
    shown === undefined
      ? `${known.says} (${errno}${syscall})`
      : `${shown}: ${known.says} (${errno})`;
  return new FileSystemError(`${what}; ${known.advice(verb)}`, shown, errno, known.code, {
    cause: error,
  });
}
