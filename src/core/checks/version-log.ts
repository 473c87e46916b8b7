import { StateError } from "../errors.js";
import { parseVersionLog, VERSION_LOG_PATH } from "../versions/log.js";
import type { Finding } from "./findings.js";

/**
 * The version log against the catalog: every line well formed, and the last one naming the
 * catalog's version and hash. The log is not an engram, so it is checked here rather than
 * listed in the catalog. An absent log is fine: memory older than the log has none.
 */
export function verifyVersionLog(
  logText: string | undefined,
  catalogText: string | undefined,
): Finding[] {
  if (logText === undefined) return [];
  let records: ReturnType<typeof parseVersionLog>;
  try {
    records = parseVersionLog(logText);
  } catch (error) {
    if (!(error instanceof StateError)) throw error;
    // The parser's message starts with `<path>:<line>:`; keep the line in the finding's path.
    const m = /^(.*?:\d+): (.*)$/s.exec(error.message);
    return [
      {
        path: m?.[1] ?? VERSION_LOG_PATH,
        code: "version-log-invalid",
        message: m?.[2] ?? error.message,
      },
    ];
  }
  const last = records.at(-1);
  if (last === undefined) return [];
  const catalog = catalogIdentity(catalogText);
  if (catalog === undefined) return [];
  const line = logText.split("\n").filter((l) => l !== "").length;
  const path = `${VERSION_LOG_PATH}:${line}`;
  if (last.version !== catalog.version) {
    return [
      {
        path,
        code: "version-log-mismatch",
        message: `last version ${last.version} differs from the catalog's catalog_version ${catalog.version}`,
      },
    ];
  }
  if (last.catalog_hash !== catalog.hash) {
    return [
      {
        path,
        code: "version-log-mismatch",
        message: `catalog_hash ${last.catalog_hash} differs from the catalog's hash ${catalog.hash}`,
      },
    ];
  }
  return [];
}

/** The catalog's version and hash, when it can be read at all (other checks report it if not). */
function catalogIdentity(text: string | undefined): { version: number; hash: string } | undefined {
  if (text === undefined) return undefined;
  try {
    const raw = JSON.parse(text) as { catalog_version?: unknown; hash?: unknown };
    if (typeof raw.catalog_version !== "number" || typeof raw.hash !== "string") return undefined;
    return { version: raw.catalog_version, hash: raw.hash };
  } catch {
    return undefined;
  }
}
