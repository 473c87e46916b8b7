/** The fake GitHub's HTTP plumbing: errors as GitHub words them, replies, bodies, headers. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Person } from "./bare-repo.js";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, unknown>[],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export interface Reply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export type Json = Record<string, unknown>;
export type Handler = (ctx: Context) => Reply;

export interface Context {
  params: Record<string, string>;
  query: URLSearchParams;
  body: Json;
}

export const DOCS = "https://docs.github.com/rest";
const MAX_BODY_BYTES = 64 * 1024 * 1024;
export const FAKE_PERSON = { name: "GitHub", email: "noreply@github.com" };

export function stripOwner(head: string): string {
  const colon = head.indexOf(":");
  return colon < 0 ? head : head.slice(colon + 1);
}

export function personOf(value: Json | undefined, fallback: Person): Person {
  if (value === undefined) return fallback;
  return {
    name: String(value.name ?? fallback.name),
    email: String(value.email ?? fallback.email),
    date: typeof value.date === "string" ? value.date : fallback.date,
  };
}

export function errorReply(err: HttpError): Reply {
  const documentation_url = DOCS;
  const body =
    err.status === 422
      ? {
          message: err.message,
          ...(err.errors && { errors: err.errors }),
          documentation_url,
          status: "422",
        }
      : { message: err.message, documentation_url, status: String(err.status) };
  return { status: err.status, body, headers: err.headers };
}

export function rateHeaders(): Record<string, string> {
  return {
    "x-ratelimit-limit": "5000",
    "x-ratelimit-remaining": "4999",
    "x-ratelimit-used": "1",
    "x-ratelimit-reset": String(Math.floor(Date.now() / 1000) + 3600),
    "x-ratelimit-resource": "core",
    "x-github-api-version-selected": "2022-11-28",
  };
}

export function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    ...(body !== undefined && { "content-type": "application/json; charset=utf-8" }),
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/**
 * One page of a listing as GitHub answers it: `per_page` (1-100, 30 by default) and `page`
 * from the query, and a `Link` header with `next` and `last` while more pages follow.
 */
export function pageOf<T>(
  c: Context,
  list: readonly T[],
  urlOf: (query: URLSearchParams) => string,
): { slice: T[]; headers: Record<string, string> } {
  const perPage = Math.min(Math.max(Number(c.query.get("per_page") ?? 30), 1), 100);
  const page = Math.max(Number(c.query.get("page") ?? 1), 1);
  const pages = Math.max(Math.ceil(list.length / perPage), 1);
  const slice = list.slice((page - 1) * perPage, page * perPage);
  const headers: Record<string, string> = {};
  if (page < pages) {
    const link = (n: number) => {
      const q = new URLSearchParams(c.query);
      q.set("page", String(n));
      q.set("per_page", String(perPage));
      return `<${urlOf(q)}>`;
    };
    headers.link = `${link(page + 1)}; rel="next", ${link(pages)}; rel="last"`;
  }
  return { slice, headers };
}
