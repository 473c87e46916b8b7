import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { RepoContext } from "../context/repo-context.js";
import {
  DASHBOARD_ASSET_TEXT,
  DASHBOARD_CSP_HEADER,
  renderDashboardPage,
} from "../core/dashboard/page.js";
import { StateError } from "../errors.js";
import { readDashboardModel } from "./dashboard.js";

const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

export interface DashboardServeSummary {
  requests: number;
  stopped_by: string;
}

/**
 * Serves the dashboard read-only over HTTP until `stop` aborts: each request for the page
 * reads memory and state again, so a reload shows the latest. Only GET and HEAD of the
 * page's three files are answered.
 */
export async function serveDashboard(
  ctx: RepoContext,
  listen: { host: string; port: number },
  hooks: { onListening(url: string): void; stop: AbortSignal; log(message: string): void },
): Promise<DashboardServeSummary> {
  let requests = 0;
  const server = createServer((req, res) => {
    requests++;
    answer(ctx, req, res).catch((error: unknown) => {
      hooks.log(`could not render the page: ${(error as Error).message}`);
      if (!res.headersSent)
        send(res, 500, "text/plain; charset=utf-8", "could not render the page\n");
      else res.end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error) =>
      reject(
        new StateError(`cannot listen on ${listen.host}:${listen.port}: ${error.message}`, {
          cause: error,
        }),
      ),
    );
    server.listen(listen.port, listen.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : listen.port;
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  hooks.onListening(`http://${host}:${port}/`);
  await new Promise<void>((resolve) => {
    if (hooks.stop.aborted) resolve();
    else hooks.stop.addEventListener("abort", () => resolve(), { once: true });
  });
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return { requests, stopped_by: String(hooks.stop.reason ?? "stop") };
}

async function answer(ctx: RepoContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("Allow", "GET, HEAD");
    send(res, 405, "text/plain; charset=utf-8", "read-only: GET or HEAD\n");
    return;
  }
  const path = new URL(req.url ?? "/", "http://localhost").pathname;
  const name = path === "/" ? "index.html" : path.slice(1);
  const type = TYPES[name];
  if (type === undefined) {
    send(res, 404, "text/plain; charset=utf-8", "not found\n");
    return;
  }
  // The page is read afresh for each request; the assets are constants.
  const body =
    name === "index.html"
      ? renderDashboardPage(await readDashboardModel(ctx))
      : (DASHBOARD_ASSET_TEXT[name] as string);
  send(res, 200, type, req.method === "HEAD" ? "" : body);
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, {
    "Content-Type": type,
    "Content-Security-Policy": DASHBOARD_CSP_HEADER,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",
  });
  res.end(body);
}
