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
