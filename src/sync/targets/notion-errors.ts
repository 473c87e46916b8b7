import { APIErrorCode, APIResponseError, isNotionClientError } from "@notionhq/client";
import { SyncTargetError } from "./target.js";

/** Notion's errors, in the engine's terms (the seed's error list). */
export function wrap(error: unknown): SyncTargetError {
  if (error instanceof SyncTargetError) return error;
  if (APIResponseError.isAPIResponseError(error)) {
    const message = `Notion ${error.status} ${error.code}: ${error.message}`;
    switch (error.code) {
      case APIErrorCode.RateLimited:
      case APIErrorCode.ServiceOverload: {
        const header = error.headers instanceof Headers ? error.headers.get("retry-after") : null;
        const seconds = Number.parseInt(header ?? "", 10);
        return new SyncTargetError(
          message,
          "rate_limited",
          Number.isFinite(seconds) ? seconds : undefined,
          {
            cause: error,
          },
        );
      }
      case APIErrorCode.Unauthorized:
      case APIErrorCode.RestrictedResource:
        return new SyncTargetError(message, "auth", undefined, { cause: error });
      case APIErrorCode.ObjectNotFound:
        return new SyncTargetError(message, "schema", undefined, { cause: error });
      case APIErrorCode.ValidationError:
        // A property the database no longer has is a schema change, not a bad item.
        return new SyncTargetError(
          message,
          /is not a property that exists|property .* does not exist|expected to be/i.test(
            error.message,
          )
            ? "schema"
            : "validation",
          undefined,
          { cause: error },
        );
      default:
        return new SyncTargetError(message, "unavailable", undefined, { cause: error });
    }
  }
  if (isNotionClientError(error)) {
    return new SyncTargetError(`Notion: ${error.message}`, "unavailable", undefined, {
      cause: error,
    });
  }
  return new SyncTargetError(
    `Notion: ${(error as Error).message ?? String(error)}`,
    "unavailable",
    undefined,
    {
      cause: error,
    },
  );
}

/** Whether a call failed because Notion has no such object (or does not share it). */
export function notFound(error: unknown): boolean {
  const cause = error instanceof SyncTargetError ? error.cause : error;
  return APIResponseError.isAPIResponseError(cause) && cause.code === APIErrorCode.ObjectNotFound;
}
