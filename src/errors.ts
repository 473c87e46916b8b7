/**
 * Errors in one place. `EngramError` and its subclasses are "already explained to the user":
 * the entry point prints the message and exits with `exitCode`. Anything else is a bug.
 */
export class EngramError extends Error {
  readonly exitCode: number = 1;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Bad command-line usage: unknown flag, missing argument. Exit 2. */
export class UsageError extends EngramError {
  override readonly exitCode = 2;
}

/** A configuration file that cannot be read or does not validate. Exit 2. */
export class ConfigError extends EngramError {
  override readonly exitCode = 2;
  constructor(
    message: string,
    readonly file: string,
    readonly problems: readonly ConfigProblem[] = [],
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface ConfigProblem {
  /** Dotted key, for example `memory.buffer_max_bytes`. */
  key: string;
  /** 1-based line in the file, when it can be located. */
  line?: number;
  message: string;
}

/** The repository or the state folder is not in a usable shape (not initialized, locked). Exit 3. */
export class StateError extends EngramError {
  override readonly exitCode = 3;
}
