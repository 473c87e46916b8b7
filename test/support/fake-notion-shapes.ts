/** Notion's documented error body: what makes the official client classify and retry. */
export interface NotionErrorBody {
  object: "error";
  status: number;
  code: string;
  message: string;
  request_id: string;
}

export class NotionHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  body(requestId: string): NotionErrorBody {
    return {
      object: "error",
      status: this.status,
      code: this.code,
      message: this.message,
      request_id: requestId,
    };
  }
}

export const validation = (message: string) =>
  new NotionHttpError(400, "validation_error", message);
export const notFound = (what: string, id: string) =>
  new NotionHttpError(
    404,
    "object_not_found",
    `Could not find ${what} with ID: ${id}. Make sure the relevant pages and databases are shared with your integration.`,
  );

let counter = 0;
/** A UUID-shaped id, distinct per call. */
export function newId(): string {
  counter++;
  const hex = counter.toString(16).padStart(12, "0");
  return `00000000-0000-4000-8000-${hex}`;
}

export const NOW = "2026-01-05T10:00:00.000Z";

export function userObject(): Record<string, unknown> {
  return {
    object: "user",
    id: "00000000-0000-4000-8000-b0b0b0b0b0b0",
    type: "bot",
    name: "engram",
    avatar_url: null,
    bot: { owner: { type: "workspace", workspace: true }, workspace_name: "test" },
  };
}

export function listObject(results: unknown[], nextCursor: string | null, type: string) {
  return {
    object: "list",
    results,
    next_cursor: nextCursor,
    has_more: nextCursor !== null,
    type,
    [type]: {},
  };
}

/** The plain text of a rich-text array, as Notion computes `plain_text`. */
export function plainText(elements: unknown): string {
  if (!Array.isArray(elements)) return "";
  return elements.map((e) => (e as { text?: { content?: string } }).text?.content ?? "").join("");
}

/** Rich text as Notion returns it: with `plain_text` and annotations. */
export function richTextOut(elements: unknown): unknown[] {
  if (!Array.isArray(elements)) return [];
  return elements.map((e) => {
    const content = (e as { text?: { content?: string } }).text?.content ?? "";
    return {
      type: "text",
      text: { content, link: null },
      annotations: {
        bold: false,
        italic: false,
        strikethrough: false,
        underline: false,
        code: false,
        color: "default",
      },
      plain_text: content,
      href: null,
    };
  });
}
