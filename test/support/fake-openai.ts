import type { IncomingMessage, ServerResponse } from "node:http";
import { ModelStandIn } from "./local-http.js";

/** An item of a Responses API input or output, as far as the stand-in reads or writes them. */
export interface ResponseItem {
  type: string;
  [key: string]: unknown;
}

/** A `POST /v1/responses` body, as far as the stand-in reads it. */
export interface ResponsesRequest {
  model: string;
  input: ResponseItem[];
  instructions?: string;
  tools?: { type: string; name?: string; tools?: { name: string }[] }[];
  stream?: boolean;
  [key: string]: unknown;
}

/** One request the stand-in answered. */
export interface RecordedResponsesRequest {
  method: string;
  path: string;
  text: string;
  status: number;
}

/** What the model outputs next: a message's text, or a call of a (namespaced) function. */
export type ResponsesReply =
  | { type: "text"; text: string }
  | {
      type: "call";
      callId: string;
      name: string;
      namespace?: string;
      args: Record<string, unknown>;
    };

/** Decides the model's output to a responses request. */
export type ResponsesScript = (request: ResponsesRequest) => ResponsesReply;

/** The function call outputs a request carries back, by call id. */
export function callOutputs(request: ResponsesRequest): Map<string, ResponseItem> {
  const found = new Map<string, ResponseItem>();
  for (const item of request.input) {
    if (item.type === "function_call_output") found.set(String(item.call_id), item);
  }
  return found;
}

/** The functions a request offers the model: `name`, or `namespace/name` inside a namespace. */
export function offeredFunctions(request: ResponsesRequest): string[] {
  return (request.tools ?? []).flatMap((t) =>
    t.type === "namespace"
      ? (t.tools ?? []).map((f) => `${t.name}/${f.name}`)
      : t.name === undefined
        ? []
        : [t.name],
  );
}

/**
 * A stand-in for OpenAI's Responses API on 127.0.0.1, as Codex reaches it through a
 * `model_providers` entry (`base_url`, `wire_api = "responses"`): `POST /v1/responses`,
 * streamed as server-sent events (`response.created`, `response.output_item.done`,
 * `response.completed`) when the body asks `stream: true`, else one JSON response. It
 * answers as the service does: 401 without a bearer key, 400 for a body that is not a
 * request, 404 for any other route, errors as `{error: {message, type, code}}`. The
 * model's output comes from `script`; every request is recorded.
 */
export class FakeOpenAI extends ModelStandIn {
  readonly requests: RecordedResponsesRequest[] = [];
  private nextId = 1;

  constructor(private readonly script: ResponsesScript) {
    super();
  }

  /** The bodies of the responses requests answered, in order. */
  answered(): ResponsesRequest[] {
    return this.requests
      .filter((r) => r.status === 200)
      .map((r) => JSON.parse(r.text) as ResponsesRequest);
  }

  protected answer(req: IncomingMessage, res: ServerResponse, text: string): void {
    const path = new URL(req.url ?? "/", "http://stand-in").pathname;
    const outcome = this.outcome(req, path, text);
    this.requests.push({ method: req.method ?? "", path, text, status: outcome.status });
    if (outcome.stream === undefined) {
      res.writeHead(outcome.status, { "content-type": "application/json" });
      res.end(JSON.stringify(outcome.body));
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    const event = (type: string, data: Record<string, unknown>): void => {
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
    };
    const { id, item, usage } = outcome.stream;
    event("response.created", { response: { id, status: "in_progress" } });
    event("response.output_item.done", { output_index: 0, item });
    event("response.completed", { response: { id, status: "completed", usage } });
    res.end();
  }

  private outcome(
    req: IncomingMessage,
    path: string,
    text: string,
  ): {
    status: number;
    body?: unknown;
    stream?: { id: string; item: ResponseItem; usage: Record<string, unknown> };
  } {
    const fail = (status: number, type: string, message: string) => ({
      status,
      body: { error: { message, type, code: null } },
    });
    if (path !== "/v1/responses") return fail(404, "invalid_request_error", `Not found: ${path}`);
    if (req.method !== "POST") return fail(405, "invalid_request_error", "Method not allowed");
    if (!/^Bearer \S+/.test(req.headers.authorization ?? "")) {
      return fail(401, "invalid_request_error", "You didn't provide an API key.");
    }
    let body: ResponsesRequest;
    try {
      body = JSON.parse(text) as ResponsesRequest;
    } catch {
      return fail(
        400,
        "invalid_request_error",
        "We could not parse the JSON body of your request.",
      );
    }
    if (typeof body.model !== "string" || !Array.isArray(body.input)) {
      return fail(400, "invalid_request_error", "Missing required parameter: 'model' or 'input'.");
    }
    const reply = this.script(body);
    const n = this.nextId++;
    const item: ResponseItem =
      reply.type === "text"
        ? {
            type: "message",
            id: `msg_standin${n}`,
            role: "assistant",
            status: "completed",
            content: [{ type: "output_text", text: reply.text, annotations: [] }],
          }
        : {
            type: "function_call",
            id: `fc_standin${n}`,
            call_id: reply.callId,
            name: reply.name,
            ...(reply.namespace === undefined ? {} : { namespace: reply.namespace }),
            arguments: JSON.stringify(reply.args),
            status: "completed",
          };
    const input = Math.max(1, Math.ceil(text.length / 4));
    const usage = {
      input_tokens: input,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: input + 5,
    };
    const id = `resp_standin${n}`;
    if (body.stream === true) return { status: 200, stream: { id, item, usage } };
    return {
      status: 200,
      body: { id, object: "response", status: "completed", output: [item], usage },
    };
  }
}
