/**
 * Errors in one place: the error model of the core (`EngramError`, its subclasses, the codes
 * and exit statuses) re-exported, and what the file system refuses mapped onto it.
 */
import { type ErrorOptions, type StateCode, StateError } from "./core/errors.js";

export {
  ConfigError,
  type ConfigProblem,
  EngramError,
  ERROR_CODES,
  type ErrorCode,
  type ErrorOptions,
  EXIT,
  type ExitName,
  type ExitStatus,
  exitOf,
  InputError,
  type ServiceCode,
  ServiceError,
  type StateCode,
  StateError,
  UsageError,
} from "./core/errors.js";

function permissions(verb: string): string {
  return `check the permissions of the file and its folder, or run as a user who may ${verb} it`;
}

const freeSpace = () => "free some space and run the command again";
const moreFiles = () =>
  "raise the limit of open files (ulimit -n 1024 or more; director serve also holds one per connection, up to agent_bus.max_connections) and run the command again";
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
  // A low `ulimit -n`: a command (the hub above all) cannot even load its modules.
  EMFILE: { code: "too_many_open_files", says: "too many open files", advice: moreFiles },
  ENFILE: {
    code: "too_many_open_files",
    says: "too many open files in the system",
    advice: moreFiles,
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

/**
 * `error` with `path` when the file system left it out: a read of a folder fails in `read`
 * (EISDIR) with no path, and the message could not say which file. Returns `error`.
 */
export function withPath(error: unknown, path: string): unknown {
  const e = error as ErrnoLike | null;
  if (typeof e === "object" && e !== null && typeof e.code === "string" && e.path === undefined) {
    (e as { path?: string }).path = path;
  }
  return error;
}
