import { UsageError } from "../errors.js";

/** `HOST:PORT` or `[IPv6]:PORT`. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(text.trim());
  const port = Number(m?.[2]);
  if (!m || port > 65_535) {
    throw new UsageError(`--listen: expected HOST:PORT (e.g. 127.0.0.1:7400), got "${text}"`);
  }
  const raw = m[1] as string;
  return { host: raw.startsWith("[") ? raw.slice(1, -1) : raw, port };
}
