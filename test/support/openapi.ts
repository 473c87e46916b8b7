import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { ROOT } from "./bins.js";

/**
 * GitHub's OpenAPI description (the fixture extracted by `npm run openapi:extract`) as
 * routes and ajv validators, for the fake GitHub: every request and response it sees is
 * checked against the operation it belongs to.
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

export const FIXTURE = join(ROOT, "test", "fixtures", "github-openapi.json");
const COMPONENTS_ID = "https://engram.invalid/github-openapi/components";

export interface Route {
  operationId: string;
  method: string;
  /** The OpenAPI path template, e.g. `/repos/{owner}/{repo}/pulls/{pull_number}`. */
  template: string;
  pattern: RegExp;
  params: string[];
}

export interface Operation extends Route {
  request: ValidateFunction | undefined;
  requestRequired: boolean;
  /** Success and documented error statuses; others are judged against `basic-error`. */
  responses: Map<number, ValidateFunction | null>;
  query: Map<string, ValidateFunction>;
}

function isObject(v: Json | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * OpenAPI 3.0 schema -> JSON Schema: `nullable` becomes a `null` type (or an `anyOf` with
 * null where there is no `type`), component `$ref`s point at one shared `$defs` document,
 * and `x-*` extensions go. Everything else (additional properties allowed unless the
 * schema forbids them, as GitHub is) is kept as published.
 */
export function toJsonSchema(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(toJsonSchema);
  if (!isObject(schema)) return schema;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith("x-") || key === "nullable" || key === "discriminator") continue;
    if (key === "$ref" && typeof value === "string") {
      const name = /^#\/components\/schemas\/(.+)$/.exec(value)?.[1];
      if (name === undefined) throw new Error(`unsupported $ref ${value}`);
      out.$ref = `${COMPONENTS_ID}#/$defs/${name}`;
    } else if (key === "properties" && isObject(value)) {
      const props: JsonObject = {};
      for (const [name, child] of Object.entries(value)) props[name] = toJsonSchema(child);
      out.properties = props;
    } else {
      out[key] = toJsonSchema(value);
    }
  }
  if (schema.nullable !== true) return out;
  if (typeof out.type === "string") {
    out.type = [out.type, "null"];
    if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...out.enum, null];
    return out;
  }
  return { anyOf: [out, { type: "null" }] };
}

const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function newAjv(): Ajv {
  const ajv = new Ajv({ strict: true, strictTypes: false, allErrors: true, allowUnionTypes: true });
  ajv.addFormat("uri", (s: string) => URL.canParse(s));
  ajv.addFormat("date-time", (s: string) => DATE_TIME.test(s) && !Number.isNaN(Date.parse(s)));
  ajv.addFormat("int64", { type: "number", validate: (n: number) => Number.isSafeInteger(n) });
  ajv.addFormat("repo.nwo", (s: string) => /^[\w.-]+\/[\w.-]+$/.test(s));
  return ajv;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** The fixture's operations, compiled once. */
export class GitHubOpenApi {
  readonly document: JsonObject;
  readonly operations: Operation[] = [];
  private readonly ajv = newAjv();
  private readonly basicError: ValidateFunction;

  constructor(file: URL | string = FIXTURE) {
    this.document = JSON.parse(readFileSync(file, "utf8")) as JsonObject;
    const components = this.document.components as JsonObject;
    const schemas = components.schemas as JsonObject;
    const defs: JsonObject = {};
    for (const [name, schema] of Object.entries(schemas)) defs[name] = toJsonSchema(schema);
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: defs });
    this.basicError = this.ajv.compile({ $ref: `${COMPONENTS_ID}#/$defs/basic-error` });
    for (const [template, item] of Object.entries(this.document.paths as JsonObject)) {
      if (!isObject(item)) continue;
      for (const [method, op] of Object.entries(item)) {
        if (method === "parameters" || !isObject(op)) continue;
        this.operations.push(this.compileOperation(method.toUpperCase(), template, op));
      }
    }
  }

  /** The operation a request addresses, with its path parameters. */
  match(
    method: string,
    pathname: string,
  ): { op: Operation; params: Record<string, string> } | null {
    for (const op of this.operations) {
      if (op.method !== method) continue;
      const m = op.pattern.exec(pathname);
      if (!m) continue;
      const params: Record<string, string> = {};
      op.params.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1]!);
      });
      return { op, params };
    }
    return null;
  }

  /** Problems of a request body (empty when it conforms). */
  checkRequest(op: Operation, body: unknown): string[] {
    if (body === undefined) return op.requestRequired ? ["(body) is required"] : [];
    if (op.request === undefined) return [];
    return op.request(body) ? [] : describe(op.request.errors);
  }

  /** Problems of the query string (declared parameters only; GitHub ignores others). */
  checkQuery(op: Operation, query: URLSearchParams): string[] {
    const problems: string[] = [];
    for (const [name, validate] of op.query) {
      const raw = query.get(name);
      if (raw === null) continue;
      const value = /^-?\d+$/.test(raw) ? Number(raw) : raw;
      if (!validate(value) && !validate(raw)) {
        problems.push(...describe(validate.errors).map((p) => `query ${name}: ${p}`));
      }
    }
    return problems;
  }

  /** Problems of a response body for `status`; undocumented error statuses are basic errors. */
  checkResponse(op: Operation, status: number, body: unknown): string[] {
    const validate = op.responses.has(status)
      ? op.responses.get(status)
      : status >= 400
        ? this.basicError
        : undefined;
    if (validate === undefined) return [`status ${status} is not a documented response`];
    if (validate === null) return body === undefined ? [] : ["expected no body"];
    return validate(body) ? [] : describe(validate.errors);
  }

  private compileOperation(method: string, template: string, op: JsonObject): Operation {
    const operationId = String(op.operationId);
    const parameters = (op.parameters as Json[] | undefined) ?? [];
    const resolved = parameters.map((p) => this.resolve(p));
    const pathParams = new Map<string, JsonObject>();
    const query = new Map<string, ValidateFunction>();
    for (const p of resolved) {
      if (p.in === "path") pathParams.set(String(p.name), p);
      if (p.in === "query")
        query.set(String(p.name), this.ajv.compile(toJsonSchema(p.schema!) as object));
    }
    const params: string[] = [];
    let source = "^";
    for (const part of template.split(/(\{[^}]+\})/)) {
      const name = /^\{(.+)\}$/.exec(part)?.[1];
      if (name === undefined) {
        source += escapeRegExp(part);
        continue;
      }
      params.push(name);
      const p = pathParams.get(name);
      const schema = p?.schema as JsonObject | undefined;
      if (p?.["x-multi-segment"] === true) source += "(.+)";
      else if (schema?.type === "integer") source += "(\\d+)";
      else source += "([^/]+)";
    }
    const pattern = new RegExp(`${source}$`);
    const body = this.resolve(op.requestBody ?? null);
    const content = body.content as JsonObject | undefined;
    const requestSchema = (content?.["application/json"] as JsonObject | undefined)?.schema;
    const request =
      requestSchema === undefined
        ? undefined
        : this.ajv.compile(toJsonSchema(requestSchema) as object);
    const responses = new Map<number, ValidateFunction | null>();
    for (const [status, response] of Object.entries(op.responses as JsonObject)) {
      const r = this.resolve(response);
      const schema = (
        (r.content as JsonObject | undefined)?.["application/json"] as JsonObject | undefined
      )?.schema;
      responses.set(
        Number(status),
        schema === undefined ? null : this.ajv.compile(toJsonSchema(schema) as object),
      );
    }
    const requestRequired = body.required === true;
    return {
      operationId,
      method,
      template,
      pattern,
      params,
      request,
      requestRequired,
      responses,
      query,
    };
  }

  /** A `#/components/<section>/<name>` reference followed one level (parameters, responses). */
  private resolve(value: Json): JsonObject {
    if (!isObject(value)) return {};
    const ref = value.$ref;
    if (typeof ref !== "string") return value;
    const [, , section, name] = ref.split("/");
    const target = ((this.document.components as JsonObject)[section!] as JsonObject)[name!];
    if (!isObject(target)) throw new Error(`unresolvable $ref ${ref}`);
    return target;
  }
}

function describe(errors: ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map((e) => {
    const at = e.instancePath === "" ? "(body)" : e.instancePath;
    const extra = e.keyword === "additionalProperties" ? ` (${JSON.stringify(e.params)})` : "";
    return `${at} ${e.message ?? e.keyword}${extra}`;
  });
}
