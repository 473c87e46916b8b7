import type { IncomingMessage, ServerResponse } from "node:http";
import { ModelStandIn } from "./local-http.js";

/** A part of a Gemini API content, as far as the stand-in reads or writes them. */
export interface Part {
  text?: string;
  functionCall?: { id?: string; name: string; args: Record<string, unknown> };
  functionResponse?: { id?: string; name: string; response: Record<string, unknown> };
  [key: string]: unknown;
}

/** A `generateContent` body, as far as the stand-in reads it. */
export interface GenerateRequest {
  contents: { role?: string; parts: Part[] }[];
  systemInstruction?: { parts: Part[] };
  tools?: { functionDeclarations?: { name: string }[] }[];
  [key: string]: unknown;
}

/** One request the stand-in answered. */
export interface RecordedGeminiRequest {
  method: string;
  /** The path without its query (`/v1beta/models/gemini-2.5-flash:streamGenerateContent`). */
  path: string;
  query: string;
  text: string;
  status: number;
}

/** Decides the model's reply (its parts) to a generate request. */
export type GeminiScript = (request: GenerateRequest) => Part[];

/** The function responses a request carries back, by function name. */
export function functionResponses(request: GenerateRequest): Map<string, Part> {
  const found = new Map<string, Part>();
  for (const content of request.contents) {
    for (const part of content.parts ?? []) {
      if (part.functionResponse !== undefined) found.set(part.functionResponse.name, part);
    }
  }
  return found;
}

/** The names of the functions a request declares to the model. */
export function declaredFunctions(request: GenerateRequest): string[] {
  return (request.tools ?? []).flatMap((t) => (t.functionDeclarations ?? []).map((f) => f.name));
}

const MODEL_ROUTE =
  /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

/**
 * A stand-in for the Gemini API (generativelanguage, v1beta) on 127.0.0.1, as Gemini CLI
 * reaches it through `GOOGLE_GEMINI_BASE_URL`: `models/M:generateContent`,
 * `models/M:streamGenerateContent?alt=sse` (server-sent events) and `models/M:countTokens`.
 * It answers as the service does: 401 without an API key (`x-goog-api-key` or `key=`), 400
 * for a body that is not a request, 404 for any other route, errors as
 * `{error: {code, message, status}}`. Replies come from `script`; every request is recorded.
 */
export class FakeGemini extends ModelStandIn {
  readonly requests: RecordedGeminiRequest[] = [];

  constructor(private readonly script: GeminiScript) {
    super();
  }

  /** The bodies of the generate requests answered, in order. */
  generated(): GenerateRequest[] {
    return this.requests
      .filter((r) => r.status === 200 && !r.path.endsWith(":countTokens"))
      .map((r) => JSON.parse(r.text) as GenerateRequest);
  }

  protected answer(req: IncomingMessage, res: ServerResponse, text: string): void {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const outcome = this.outcome(req, url, text);
    this.requests.push({
      method: req.method ?? "",
      path: url.pathname,
      query: url.search,
      text,
      status: outcome.status,
    });
    if (outcome.stream) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(`data: ${JSON.stringify(outcome.body)}\r\n\r\n`);
      return;
    }
    res.writeHead(outcome.status, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify(outcome.body));
  }

  private outcome(
    req: IncomingMessage,
    url: URL,
    text: string,
  ): { status: number; body: unknown; stream?: boolean } {
    const fail = (code: number, status: string, message: string) => ({
      status: code,
      body: { error: { code, message, status } },
    });
    const route = MODEL_ROUTE.exec(url.pathname);
    if (route === null) return fail(404, "NOT_FOUND", `Not found: ${url.pathname}`);
    if (req.method !== "POST") return fail(405, "INVALID_ARGUMENT", "Method not allowed");
    if (req.headers["x-goog-api-key"] === undefined && !url.searchParams.has("key")) {
      return fail(401, "UNAUTHENTICATED", "Method doesn't allow unregistered callers");
    }
    let body: GenerateRequest;
    try {
      body = JSON.parse(text) as GenerateRequest;
    } catch {
      return fail(400, "INVALID_ARGUMENT", "Invalid JSON payload received");
    }
    if (!Array.isArray(body.contents)) {
      return fail(
        400,
        "INVALID_ARGUMENT",
        "* GenerateContentRequest.contents: contents is not specified",
      );
    }
    const tokens = Math.max(1, Math.ceil(text.length / 4));
    if (route[2] === "countTokens") return { status: 200, body: { totalTokens: tokens } };
    const parts = this.script(body);
    const answered = Math.max(1, Math.ceil(JSON.stringify(parts).length / 4));
    const reply = {
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: {
        promptTokenCount: tokens,
        candidatesTokenCount: answered,
        totalTokenCount: tokens + answered,
      },
      modelVersion: route[1],
    };
    return { status: 200, body: reply, stream: route[2] === "streamGenerateContent" };
  }
}
