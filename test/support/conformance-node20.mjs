/*
 * Lets the MCP conformance suite run on Node 20 (CI's Node). Its bundle imports `globSync`
 * from "fs" (Node 22+) for its tier-check command only, which `server` never calls; on
 * Node 20 that import alone fails the whole module. This hook gives the suite, and only
 * it, an "fs" with a globSync that throws. Loaded with `node --import` when the running
 * Node has no fs.globSync; on Node 22+ the suite runs as published.
 */
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
    const SHIM = "data:text/javascript," + encodeURIComponent(
      'export * from "node:fs"; export { default } from "node:fs";' +
      ' export function globSync() { throw new Error("fs.globSync needs Node 22"); }'
    );
    export async function resolve(specifier, context, next) {
      if ((specifier === "fs" || specifier === "node:fs") &&
          context.parentURL?.includes("/@modelcontextprotocol/conformance/")) {
        return { url: SHIM, shortCircuit: true };
      }
      return next(specifier, context);
    }
  `)}`,
);
