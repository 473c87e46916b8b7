import type { IncomingMessage, ServerResponse } from "node:http";
import { ModelStandIn } from "./local-http.js";

/** A content block of the Messages API, as far as the stand-in reads it. */
export interface ContentBlock {
  type: string;
  text?: string;
  /** A `tool_result`'s: the `tool_use` it answers, and what the tool said. */
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
  [key: string]: unknown;
}

/** A `POST /v1/messages` body, as far as the stand-in reads it. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: { role: string; content: string | ContentBlock[] }[];
  system?: string | ContentBlock[];
  tools?: { name: string; [key: string]: unknown }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** One request the stand-in answered (every route, every status). */
export interface RecordedRequest {
  method: string;
  /** The path without its query (`/v1/messages`). */
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body as sent. */
  text: string;
  status: number;
}

/** What the model says next: text and tool calls (a tool call ends the turn with `tool_use`). */
export type Reply = (
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
)[];

/** An assistant message, as the service answers it. */
interface Message {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: Reply;
  stop_reason: "tool_use" | "end_turn";
  stop_sequence: null;
  usage: { input_tokens: number; output_tokens: number };
}

/** Decides the model's reply to a messages request. */
export type ModelScript = (request: MessagesRequest) => Reply;

/** The tool results a request carries back, by the `tool_use_id` they answer. */
export function toolResults(request: MessagesRequest): Map<string, ContentBlock> {
  const results = new Map<string, ContentBlock>();
  for (const message of request.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (block.type === "tool_result") results.set(String(block.tool_use_id), block);
    }
  }
  return results;
}

/** A rough token count (four characters a token), for usage and count_tokens. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

/**
 * A stand-in for Anthropic's Messages API on 127.0.0.1, as a host reaches it through
 * `ANTHROPIC_BASE_URL`: `POST /v1/messages` (a streamed answer as server-sent events when the
 * body asks `stream: true`, else one JSON message) and `POST /v1/messages/count_tokens`. It
 * answers as the service does: 401 without an API key, 400 for a body that is not a messages
 * request, 404 for any other route, errors as `{type: "error", error: {type, message}}`.
 * The model's replies come from `script`. Every request is recorded.
 */
export class FakeAnthropic extends ModelStandIn {
  readonly requests: RecordedRequest[] = [];
  private nextId = 1;

  constructor(private readonly script: ModelScript) {
    super();
  }

  /** The bodies of the messages requests answered with a reply, in order. */
  messages(): MessagesRequest[] {
    return this.requests
      .filter((r) => r.path === "/v1/messages" && r.status === 200)
      .map((r) => JSON.parse(r.text) as MessagesRequest);
  }

  protected answer(req: IncomingMessage, res: ServerResponse, text: string): void {
    const url = new URL(req.url ?? "/", "http://stand-in");
    const outcome = this.outcome(req.method ?? "", url.pathname, req.headers, text);
    this.requests.push({
      method: req.method ?? "",
      path: url.pathname,
      query: url.search,
      headers: req.headers,
      text,
      status: "status" in outcome ? outcome.status : 200,
    });
    if ("stream" in outcome) {
      this.stream(res, outcome.stream);
      return;
    }
    res.writeHead(outcome.status, {
      "content-type": "application/json",
      "request-id": this.id("req"),
    });
    res.end(JSON.stringify(outcome.body));
  }

  /** The service's answer to one request: a JSON body with its status, or a message to stream. */
  private outcome(
    method: string,
    route: string,
    headers: IncomingMessage["headers"],
    text: string,
  ): { status: number; body: unknown } | { stream: Message } {
    const fail = (status: number, type: string, message: string) => ({
      status,
      body: { type: "error", error: { type, message } },
    });
    if (route !== "/v1/messages" && route !== "/v1/messages/count_tokens") {
      return fail(404, "not_found_error", `Not found: ${method} ${route}`);
    }
    if (method !== "POST") return fail(405, "invalid_request_error", "Method not allowed");
    if (headers["x-api-key"] === undefined && headers.authorization === undefined) {
      return fail(401, "authentication_error", "x-api-key header is required");
    }
    let body: MessagesRequest;
    try {
      body = JSON.parse(text) as MessagesRequest;
    } catch {
      return fail(400, "invalid_request_error", "The request body is not valid JSON");
    }
    if (typeof body.model !== "string" || !Array.isArray(body.messages)) {
      return fail(400, "invalid_request_error", "model: Field required; messages: Field required");
    }
    if (route === "/v1/messages/count_tokens") {
      return { status: 200, body: { input_tokens: tokens(text) } };
    }
    if (typeof body.max_tokens !== "number") {
      return fail(400, "invalid_request_error", "max_tokens: Field required");
    }
    const content = this.script(body);
    const message: Message = {
      id: this.id("msg"),
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
      stop_sequence: null,
      usage: { input_tokens: tokens(text), output_tokens: tokens(JSON.stringify(content)) },
    };
    return body.stream === true ? { stream: message } : { status: 200, body: message };
  }

  /** The message as the service streams it: start, each block's start, delta and stop, end. */
  private stream(res: ServerResponse, message: Message): void {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const event = (type: string, data: Record<string, unknown>): void => {
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    };
    event("message_start", {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...message.usage, output_tokens: 1 },
      },
    });
    message.content.forEach((block, index) => {
      if (block.type === "text") {
        event("content_block_start", { index, content_block: { type: "text", text: "" } });
        event("content_block_delta", { index, delta: { type: "text_delta", text: block.text } });
      } else {
        event("content_block_start", { index, content_block: { ...block, input: {} } });
        const partial_json = JSON.stringify(block.input);
        event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json } });
      }
      event("content_block_stop", { index });
    });
    event("message_delta", {
      delta: { stop_reason: message.stop_reason, stop_sequence: null },
      usage: { output_tokens: message.usage.output_tokens },
    });
    event("message_stop", {});
    res.end();
  }

  private id(prefix: string): string {
    return `${prefix}_standin${String(this.nextId++).padStart(6, "0")}`;
  }
}
