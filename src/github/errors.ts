import { EngramError, ServiceError, StateError } from "../errors.js";

/**
 * GitHub failures as EngramErrors: one readable line (method, path, status, GitHub's own
 * message), never a stack trace or a response dump. Vendor errors are wrapped here, at the
 * adapter's edge.
 */

/** A GitHub API request that failed after the retries: an external-service failure. */
export class GitHubApiError extends ServiceError {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly method: string,
    readonly path: string,
    readonly githubMessage: string,
    options?: { cause?: unknown },
  ) {
    super(message, "github", options);
  }
}

/**
 * The repository (or organization) does not let GitHub Actions open pull requests. The
 * branch is already pushed; only the PR is missing. A setting to change, not a bug.
 */
export class GitHubPermissionError extends StateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, { ...options, code: "github_permission" });
  }
}

/** The branch moved since it was read: another writer got there first. */
export class BranchMovedError extends StateError {
  constructor(
    readonly branch: string,
    readonly expected: string | null,
    readonly actual: string | null,
  ) {
    super(
      `branch ${branch} is at ${actual ?? "(missing)"}, expected ${expected ?? "(missing)"}: another writer moved it; read it again and retry`,
      { code: "branch_moved" },
    );
  }
}

interface RequestErrorLike {
  status?: number;
  message?: string;
  request?: { method?: string; url?: string };
  response?: { data?: unknown };
  cause?: unknown;
}

/** GitHub's `message` plus the `errors[].message` of a validation failure. */
export function githubMessage(err: unknown): string {
  const e = err as RequestErrorLike;
  const data = e?.response?.data as { message?: unknown; errors?: unknown } | undefined;
  const base =
    typeof data?.message === "string" ? data.message : String(e?.message ?? err).split("\n")[0]!;
  const details = Array.isArray(data?.errors)
    ? data.errors
        .map((x: { message?: unknown; field?: unknown; code?: unknown }) =>
          typeof x?.message === "string"
            ? x.message
            : [x?.field, x?.code].filter((v) => typeof v === "string").join(" "),
        )
        .filter((s: string) => s !== "")
    : [];
  return [base, ...details].join(": ").replace(/\s+/g, " ").trim();
}

export function statusOf(err: unknown): number | undefined {
  const status = (err as RequestErrorLike)?.status;
  return typeof status === "number" ? status : undefined;
}

/** Whether a 422 says the thing (PR, reference) already exists. */
export function isAlreadyExists(err: unknown): boolean {
  return statusOf(err) === 422 && /already exists/i.test(githubMessage(err));
}

export function isNotPermittedToCreatePullRequests(err: unknown): boolean {
  return (
    statusOf(err) === 403 &&
    /not permitted to create or approve pull requests/i.test(githubMessage(err))
  );
}

/** Any error from an Octokit call as a GitHubApiError (EngramErrors pass through). */
export function wrapGitHubError(err: unknown, doing?: string): EngramError {
  if (err instanceof EngramError) return err;
  const e = err as RequestErrorLike;
  const method = e?.request?.method ?? "?";
  let path = e?.request?.url ?? "?";
  try {
    // Octokit encodes the slashes of a ref (`heads%2Fmain`); show it as GitHub documents it.
    path = decodeURIComponent(new URL(path).pathname);
  } catch {
    // Already a path (or nothing usable): keep it.
  }
  // Octokit reports a request that got no answer (refused, reset, DNS) as status 500.
  const status = e?.response === undefined ? undefined : statusOf(err);
  const message = githubMessage(err);
  const prefix = doing === undefined ? "GitHub" : `GitHub (${doing})`;
  return new GitHubApiError(
    `${prefix}: ${method} ${path} failed: ${status ?? "no response:"} ${message}`,
    status,
    method,
    path,
    message,
    { cause: err },
  );
}
