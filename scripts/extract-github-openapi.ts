import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * Extracts the operations engram uses from GitHub's published OpenAPI description
 * (`@octokit/openapi`, MIT) into the small fixture the local fake GitHub validates against.
 * The package is ~400 MB unpacked, so it is installed into a temporary folder on demand and
 * never becomes a dependency.
 */

export const OPENAPI_PACKAGE = "@octokit/openapi";
export const OPENAPI_VERSION = "23.0.2";

/** Operation ids the fake serves and the adapter calls. */
export const OPERATIONS = [
  "repos/get",
  "git/get-ref",
  "git/get-commit",
  "git/get-tree",
  "git/create-blob",
  "git/create-tree",
  "git/create-commit",
  "git/create-ref",
  "git/update-ref",
  "pulls/list",
  "pulls/get",
  "pulls/create",
  "pulls/update",
  "pulls/merge",
  "pulls/request-reviewers",
  "issues/add-labels",
  "issues/list-for-repo",
  "issues/create",
] as const;

const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

// Documentation only: dropped to keep the fixture small. Inside a `properties` map these
// names are property names and are kept.
const DROP = new Set([
  "description",
  "summary",
  "example",
  "examples",
  "externalDocs",
  "x-github",
  "x-github-breaking-changes",
  "x-octokit",
  "x-displayName",
  "tags",
]);

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A copy without documentation keys; `inProperties` marks a map of property names. */
function strip(value: Json, inProperties = false): Json {
  if (Array.isArray(value)) return value.map((v) => strip(v));
  if (!isObject(value)) return value;
  const out: JsonObject = {};
  for (const [key, child] of Object.entries(value)) {
    if (!inProperties && DROP.has(key)) continue;
    out[key] = strip(child, !inProperties && key === "properties");
  }
  return out;
}

function refsIn(value: Json, found: Set<string>): void {
  if (Array.isArray(value)) for (const v of value) refsIn(v, found);
  else if (isObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (key === "$ref" && typeof child === "string") found.add(child);
      else refsIn(child, found);
    }
  }
}

/** The fixture: the named operations and every component they reach, documentation stripped. */
export function extract(spec: JsonObject, operationIds: readonly string[]): JsonObject {
  const specPaths = spec.paths;
  const components = spec.components;
  if (!isObject(specPaths) || !isObject(components)) throw new Error("not an OpenAPI document");
  const wanted = new Set(operationIds);
  const paths: JsonObject = {};
  for (const [route, item] of Object.entries(specPaths)) {
    if (!isObject(item)) continue;
    const kept: JsonObject = {};
    for (const method of METHODS) {
      const op = item[method];
      if (isObject(op) && typeof op.operationId === "string" && wanted.has(op.operationId)) {
        kept[method] = strip(op);
        wanted.delete(op.operationId);
      }
    }
    if (Object.keys(kept).length === 0) continue;
    if (item.parameters !== undefined) kept.parameters = strip(item.parameters);
    paths[route] = kept;
  }
  if (wanted.size > 0) throw new Error(`operations not in the spec: ${[...wanted].join(", ")}`);

  // Follow $refs to a fixed point: a component may reference others.
  const reached = new Map<string, Json>();
  const pending = new Set<string>();
  refsIn(paths, pending);
  while (pending.size > 0) {
    const ref = pending.values().next().value as string;
    pending.delete(ref);
    if (reached.has(ref)) continue;
    const match = /^#\/components\/([^/]+)\/([^/]+)$/.exec(ref);
    const section = match && components[match[1]!];
    const target = isObject(section ?? null) ? (section as JsonObject)[match![2]!] : undefined;
    if (target === undefined) throw new Error(`unresolvable $ref ${ref}`);
    const stripped = strip(target);
    reached.set(ref, stripped);
    const more = new Set<string>();
    refsIn(stripped, more);
    for (const r of more) if (!reached.has(r)) pending.add(r);
  }
  const outComponents: JsonObject = {};
  for (const ref of [...reached.keys()].sort()) {
    const [, , section, name] = ref.split("/") as [string, string, string, string];
    const bucket = (outComponents[section] ?? {}) as JsonObject;
    bucket[name] = reached.get(ref)!;
    outComponents[section] = bucket;
  }
  const sortedComponents: JsonObject = {};
  for (const section of Object.keys(outComponents).sort()) {
    sortedComponents[section] = outComponents[section]!;
  }
  const info = isObject(spec.info) ? spec.info : {};
  return {
    openapi: spec.openapi ?? "3.0.3",
    info: {
      title: info.title ?? "GitHub v3 REST API",
      version: info.version ?? "unknown",
      license: { name: "MIT", url: "https://github.com/octokit/openapi/blob/main/LICENSE" },
    },
    "x-engram-source": {
      package: `${OPENAPI_PACKAGE}@${OPENAPI_VERSION}`,
      file: "generated/api.github.com.json",
      note: "Extracted by scripts/extract-github-openapi.ts (npm run openapi:extract): only the operations engram uses, with the components they reach; descriptions and examples removed. The OpenAPI description is MIT licensed, from @octokit/openapi (GitHub's published REST API description).",
      operations: [...operationIds],
    },
    paths,
    components: sortedComponents,
  };
}

/** Installs the package into a temporary folder and returns that folder. */
function install(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), "engram-openapi-")).then((dir) => {
    console.error(`installing ${OPENAPI_PACKAGE}@${OPENAPI_VERSION} into ${dir} (~400 MB)`);
    execFileSync(
      "npm",
      [
        "install",
        "--no-save",
        "--no-audit",
        "--no-fund",
        "--ignore-scripts",
        "--prefix",
        dir,
        `${OPENAPI_PACKAGE}@${OPENAPI_VERSION}`,
      ],
      { stdio: ["ignore", "inherit", "inherit"] },
    );
    return dir;
  });
}

async function main(): Promise<void> {
  // Compiled to dist/scripts/: the repository is two levels up.
  const out = fileURLToPath(new URL("../../test/fixtures/github-openapi.json", import.meta.url));
  // ENGRAM_OPENAPI_PREFIX reuses a folder that already has the package installed.
  const given = process.env.ENGRAM_OPENAPI_PREFIX;
  const prefix = given ?? (await install());
  try {
    const file = path.join(prefix, "node_modules", OPENAPI_PACKAGE, "generated");
    const spec = JSON.parse(await readFile(path.join(file, "api.github.com.json"), "utf8"));
    const fixture = extract(spec, OPERATIONS);
    const text = `${JSON.stringify(fixture, null, 2)}\n`;
    await writeFile(out, text);
    // Formatted like every other checked-in JSON file, so `npm run lint` stays clean.
    const repo = fileURLToPath(new URL("../../", import.meta.url));
    execFileSync(path.join(repo, "node_modules", ".bin", "biome"), ["format", "--write", out], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    const size = (await readFile(out)).length;
    console.log(
      `${path.relative(process.cwd(), out)}: ${OPERATIONS.length} operations, ${size} bytes`,
    );
  } finally {
    if (given === undefined) await rm(prefix, { recursive: true, force: true });
  }
}

const invoked = process.argv[1];
if (invoked !== undefined && import.meta.url === pathToFileURL(invoked).href) await main();
