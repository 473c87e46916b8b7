// The resolve hook of import-trace.mjs: appends each resolved URL to the trace file.
import { appendFileSync } from "node:fs";

const out = process.env.ENGRAM_TEST_IMPORT_TRACE;

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (out) appendFileSync(out, `${result.url}\n`);
  return result;
}
