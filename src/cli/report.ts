import {
  EngramError,
  type ErrorCode,
  EXIT,
  type ExitStatus,
  fileSystemError,
  UsageError,
} from "../errors.js";

/** What `--json` prints on stdout for a failed command: one object, always these fields. */
export interface ErrorJson {
  /** The error's class, e.g. `UsageError` (kept for scripts written before `code`). */
  error: string;
  code: ErrorCode;
  message: string;
  exit_code: ExitStatus;
}

export interface ErrorStreams {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
}

/**
 * The one catch block of every entry point: prints a failed command's error and returns the
 * exit status to set. Errors the user can act on (an `EngramError`, or what the file system
 * refused) print their message; anything else is a bug and prints its stack. With `json`,
 * stdout gets exactly one `ErrorJson` line whatever the error.
 */
export function reportError(
  prefix: string,
  error: unknown,
  json: boolean,
  streams: ErrorStreams = process,
): ExitStatus {
  const known = error instanceof EngramError ? error : fileSystemError(error);
  if (known !== undefined) {
    if (json) streams.stdout.write(`${JSON.stringify(errorJson(known))}\n`);
    const usage = known instanceof UsageError && known.usage ? `\n${known.usage}` : "";
    streams.stderr.write(`${prefix}: ${known.message}\n${usage}`);
    return known.exitCode;
  }
  const first = String((error as Error)?.message ?? error).split("\n")[0];
  if (json) {
    const out: ErrorJson = {
      error: "InternalError",
      code: "internal",
      message: `internal error (a bug; please report it): ${first}`,
      exit_code: EXIT.internal,
    };
    streams.stdout.write(`${JSON.stringify(out)}\n`);
  }
  streams.stderr.write(
    `${prefix}: internal error (a bug; please report it)\n${(error as Error)?.stack ?? error}\n`,
  );
  return EXIT.internal;
}

export function errorJson(error: EngramError): ErrorJson {
  return { error: error.name, code: error.code, message: error.message, exit_code: error.exitCode };
}
