import { closeSync, constants, fstatSync, openSync, readFileSync, realpathSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ReadResourceRequestSchema,
  type ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import type { RepoContext } from "../context/repo-context.js";
import { CATALOG_PATH, FOCUS_PATH, MEMORY_DIR } from "../core/model/paths.js";
import { readCatalog } from "../repo/memory-tree.js";
import { ProtocolError, RESOURCE_NOT_FOUND } from "./protocol.js";

/*
 * The memory files as MCP resources. The repository is hostile input: a pull request can
 * make MEMORY.md a symbolic link to `.engram/seal.key`, or point a catalog entry outside
 * memory/. A file is served only when its real path is the path asked for, inside the
 * repository (the focus view) or inside memory/ (the catalog and engrams), and it is not a
 * link: anything else is "resource not found", with the reason.
 */

const ENGRAM_URI = /^engram:\/\/engrams\/([A-Za-z0-9_-]{1,128})$/;
const FOCUS_URI = `engram://${FOCUS_PATH}`;
const CATALOG_URI = "engram://catalog.json";

/** Registers the resources for listing, and answers `resources/read` itself (see below). */
export function serveResources(server: McpServer, ctx: RepoContext): void {
  const read = (uri: URL) => readResource(ctx, uri.href);
  server.registerResource(
    "focus",
    FOCUS_URI,
    {
      title: FOCUS_PATH,
      description: "The current-focus view of memory",
      mimeType: "text/markdown",
    },
    read,
  );
  server.registerResource(
    "catalog",
    CATALOG_URI,
    {
      title: "Catalog",
      description: "memory/catalog.json: every engram and its hash",
      mimeType: "application/json",
    },
    read,
  );
  server.registerResource(
    "engram",
    new ResourceTemplate("engram://engrams/{engram_id}", {
      list: async () => {
        const catalog = await readCatalog(ctx.repoDir);
        return {
          resources: catalog.entries.map((e) => ({
            uri: `engram://engrams/${e.engram_id}`,
            name: e.engram_id,
            title: engramTitle(e.topics, e.scope, e.version),
            description: `${e.scope === "lt" ? "long-term" : "short-term"} engram of batch ${e.version}`,
            mimeType: "application/json",
          })),
        };
      },
    }),
    { title: "Engram", description: "One engram file, by id", mimeType: "application/json" },
    read,
  );
  // The SDK's handler answers an unknown URI with -32602; MCP says -32002.
  server.server.removeRequestHandler("resources/read");
  server.server.setRequestHandler(ReadResourceRequestSchema, (request) =>
    readResource(ctx, request.params.uri),
  );
}

/** A title a person can scan: what the engram is about, then where it sits. */
function engramTitle(topics: readonly string[], scope: string, version: string): string {
  const about = topics.slice(0, 4).join(", ");
  return about.length > 0 ? `${about} (${scope} ${version})` : `${scope} ${version}`;
}

async function readResource(ctx: RepoContext, uri: string): Promise<ReadResourceResult> {
  if (uri === FOCUS_URI) return text(uri, "text/markdown", serveFile(ctx.repoDir, FOCUS_PATH, "."));
  if (uri === CATALOG_URI) {
    return text(uri, "application/json", serveFile(ctx.repoDir, CATALOG_PATH, MEMORY_DIR));
  }
  const id = ENGRAM_URI.exec(uri)?.[1];
  if (id === undefined)
    notFound(
      uri,
      "no such resource: engram serves engram://MEMORY.md, engram://catalog.json and engram://engrams/{engram_id}",
    );
  const catalog = await readCatalog(ctx.repoDir).catch((error: unknown) =>
    notFound(uri, `the catalog cannot be read: ${error instanceof Error ? error.message : error}`),
  );
  const entry = catalog.entries.find((e) => e.engram_id === id);
  if (entry === undefined) {
    notFound(uri, `no engram ${id} in catalog version ${catalog.catalog_version}`);
  }
  return text(uri, "application/json", serveFile(ctx.repoDir, entry.path, MEMORY_DIR, uri));
}

function text(uri: string, mimeType: string, body: string): ReadResourceResult {
  return { contents: [{ uri, mimeType, text: body }] };
}

function notFound(uri: string, reason: string): never {
  throw new ProtocolError(RESOURCE_NOT_FOUND, `Resource not found: ${reason}`, { uri });
}

/**
 * The text of `path` (relative to the repository), if it is a regular file inside `under`
 * (relative to the repository) reached without any symbolic link; else resource-not-found.
 */
export function serveFile(repoDir: string, path: string, under: string, uri = path): string {
  const shown = JSON.stringify(path.slice(0, 200));
  const root = resolve(repoDir, under);
  const full = resolve(repoDir, path);
  const rel = relative(root, full);
  if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
    notFound(
      uri,
      `${shown} is outside ${under === "." ? "the repository" : `${under}/`}: run director verify`,
    );
  }
  let real: string;
  let realRoot: string;
  try {
    real = realpathSync(full);
    realRoot = realpathSync(root);
  } catch {
    notFound(uri, `${shown} does not exist: run director init and director run`);
  }
  // Any link on the way (the file, a folder under the root, or the root itself) is refused.
  if (real !== join(realRoot, rel) || realRoot !== join(realpathSync(repoDir), under)) {
    notFound(uri, `${shown} goes through a symbolic link: engram serves no linked file`);
  }
  // O_NOFOLLOW: a link swapped in after the check above is refused by the open itself.
  let fd: number;
  try {
    fd = openSync(full, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    notFound(uri, `${shown} cannot be opened as a plain file`);
  }
  try {
    if (!fstatSync(fd).isFile()) notFound(uri, `${shown} is not a regular file`);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}
